// What every protocol of the client shares: the normalized config, the declared report format
// (``this.format``, format.js: NumPy dtype descr and row shape, as Python's report_format declares
// them), the check of a collector's client view, value checks and the batch loop; and, on each
// protocol's class, the functions of its entry point 'dpdist-client/<name>' (fromConfig, privatize,
// privatizeRecord for that protocol's configs), so that a protocol module is its own entry point.

import { CONFIG_VERSION, buildProtocol } from '../config.js';
import { InvalidParameterError, InvalidValueTypeError, OutOfDomainError } from '../errors.js';
import { refusedValue } from '../refusals.js';
import { checkParams } from '../params.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';

export { CONFIG_VERSION };

/**
 * A batch of reports ready for the wire: ``bytes`` is the C-order payload of an array of dtype
 * ``descr`` and shape ``shape`` (first axis: one row per user).
 */
export class ReportBatch {
  constructor(config, floatKeys, descr, shape, bytes) {
    this.config = config;
    this.floatKeys = floatKeys;
    this.descr = descr;
    this.shape = shape;
    this.bytes = bytes;
  }

  get length() {
    return this.shape[0];
  }

  /** The bytes of row ``index``. */
  row(index) {
    const size = this.bytes.length / Math.max(this.shape[0], 1);
    return this.bytes.subarray(index * size, (index + 1) * size);
  }
}

export class Protocol {
  /** The registry name of the protocol ("grr", ...): each protocol's class states its own. */
  static protocol = null;

  /**
   * The protocol of this class a config (object, client view or JSON text) describes; a config of another
   * protocol is refused, naming this entry point ('dpdist-client/<name>').
   */
  static fromConfig(config) {
    return buildProtocol(config, { [this.protocol]: this }, `dpdist-client/${this.protocol}`);
  }

  /** Randomize ``values`` under a config of this protocol: one report per value (CSPRNG unless ``source``). */
  static privatize(config, values, options) {
    return privatizeWith((text) => this.fromConfig(text), config, values, options);
  }

  /** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
  static privatizeRecord(config, values, options) {
    return privatizeRecordWith((text) => this.fromConfig(text), config, values, options);
  }

  /**
   * @param {string} name registry name ("grr", ...)
   * @param {object} config the parsed JSON config
   * @param {object} rules parameter rules (see params.js)
   * @param {object} defaults default parameters
   */
  constructor(name, config, rules, defaults = {}) {
    this.name = name;
    const { params, floatKeys } = checkParams(this.display, config, rules, defaults);
    this.params = params;
    this.floatKeys = floatKeys;
    this.config = { protocol: name, version: CONFIG_VERSION, ...params };
  }

  get display() {
    return this.name.toUpperCase();
  }

  get epsilon() {
    return this.params.epsilon;
  }

  /** NumPy descr of the reports (``this.format``, declared by each protocol). */
  get descr() {
    return this.format.dtype;
  }

  /** Shape of one report. */
  get rowShape() {
    return this.format.rowShape;
  }

  /** Bytes of one entry of a report. */
  get itemBytes() {
    return this.format.itemBytes;
  }

  /** Bytes of one report (the product of the row shape times the item size). */
  get rowBytes() {
    return this.format.rowBytes;
  }

  /**
   * Check a collector's published client view (Python's ``protocol.client_view()``) against this
   * client's own reading of its config: the declared format (kind, dtype, row shape) and every design
   * constant (``keep``, thresholds, hash ranges, ...) must be exactly what this client derives from
   * epsilon, so a collector cannot weaken the randomizer by publishing other constants.
   * @param {{config: object, format: object, design?: object}} view
   */
  checkView(view) {
    this.format.check(view.format, this.display);
    for (const [name, value] of Object.entries(view.design ?? {})) {
      if (!(name in this) || JSON.stringify(this[name]) !== JSON.stringify(value)) {
        throw new InvalidParameterError(
          `The collector's client view states ${this.display}'s ${name} = ${JSON.stringify(value)}; this client derives ` +
            `${JSON.stringify(this[name])} from the config (epsilon ${this.epsilon}). The view is refused.`,
        );
      }
    }
  }

  /**
   * Randomize each value; one report per value.
   * @param {ArrayLike<number>} values
   * @param {import('../random.js').RandomSource} source
   * @returns {ReportBatch}
   */
  privatize(values, source) {
    const checked = this.checkValues(values);
    const rowBytes = this.rowBytes;
    const bytes = new Uint8Array(checked.length * rowBytes);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < checked.length; i++) this.writeReport(checked[i], source, bytes, view, i * rowBytes);
    return new ReportBatch(this.config, this.floatKeys, this.descr, [checked.length, ...this.rowShape], bytes);
  }

  /** Validate user values; return the internal form (item indices or unit-interval reals). */
  checkValues(values) {
    if (values == null || typeof values.length !== 'number' || typeof values === 'string') {
      throw new InvalidValueTypeError(
        `The 'values' argument of ${this.display}.privatize must be an array. Got ${typeof values} instead.`,
      );
    }
    const out = this.kind === 'frequency' ? new Int32Array(values.length) : new Float64Array(values.length);
    for (let i = 0; i < values.length; i++) out[i] = this.checkValue(values[i], i);
    return out;
  }
}

/** Base of categorical protocols over items 0 .. domain_size - 1. */
export class FrequencyProtocol extends Protocol {
  get kind() {
    return 'frequency';
  }

  get domainSize() {
    return this.params.domain_size;
  }

  /** The public label domain (null: items are 0 .. d-1). */
  get labels() {
    return this.params.labels ?? null;
  }

  checkValue(value, index) {
    const d = this.domainSize;
    if (typeof value === 'string' && this.labels !== null) {
      if (this._itemOfLabel === undefined) this._itemOfLabel = new Map(this.labels.map((label, item) => [label, item]));
      const item = this._itemOfLabel.get(value);
      if (item === undefined) {
        throw refusedValue(OutOfDomainError, `The 'values' argument of ${this.display}.privatize must hold labels of the ` +
          `campaign's domain (or items in [0, ${d}))`, 'not a label', index);
      }
      return item;
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw refusedValue(InvalidValueTypeError, this._itemRule(), `not an integer (a ${typeof value})`, index);
    }
    if (value < 0 || value >= d) throw refusedValue(OutOfDomainError, this._itemRule(), 'outside it', index);
    return value;
  }

  /** The rule a refused item breaks: built for a refusal only, not for every value privatized. */
  _itemRule() {
    return `The 'values' argument of ${this.display}.privatize must hold integers in [0, ${this.domainSize})`;
  }

  /** How a page names an item: its label, or its number. */
  labelOf(item) {
    return this.labels === null ? String(item) : this.labels[item];
  }

  /** Inputs of the likelihood: every item. */
  inputs() {
    return Array.from({ length: this.domainSize }, (_, item) => item);
  }
}

/** Base of numerical protocols over reals in bounds = [lo, hi], rescaled to [0, 1] inside. */
export class NumericalProtocol extends Protocol {
  get kind() {
    return 'numerical';
  }

  checkValue(value, index) {
    const [lo, hi] = this.params.bounds;
    if (typeof value !== 'number') {
      throw refusedValue(InvalidValueTypeError, `The 'values' argument of ${this.display}.privatize must hold real numbers ` +
        `in [${lo}, ${hi}]`, `not a number (a ${typeof value})`, index);
    }
    if (Number.isNaN(value)) {
      throw new OutOfDomainError(
        `The 'values' argument of ${this.display}.privatize must hold numbers: a missing value (NaN) at position ${index}.`,
      );
    }
    // a value outside the bounds (an infinity included) is randomized as the nearest bound, as Python's and Java's
    // clip: whether a report leaves never depends on where the value lies (a refusal did)
    const clipped = Math.min(Math.max(value, lo), hi);
    return Math.min(Math.max((clipped - lo) / (hi - lo), 0), 1); // as NumericalProtocol.to_unit + clip
  }
}
