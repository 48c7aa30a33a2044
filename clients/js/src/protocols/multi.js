// Records of several attributes per user: "spl", "smp" and "rsfd" (dpdist.local.multi).
//
// Each attribute of the public schema (``attributes``: categorical with ``domain_size`` / ``labels``, or
// numerical with ``bounds``) is randomized by its own protocol of this client (its *inner* protocol,
// named by the attribute's ``protocol``, with its ``options``), at the budget the multi-attribute
// protocol gives it:
//
// - spl  (Arcolezi et al., CIKM 2021 "Spl"): every attribute at epsilon / k; the report holds one
//   field per attribute (its inner report), so its law is the product of the attributes' laws;
// - smp  ("Smp"): one attribute j drawn uniformly, reported at epsilon with its index: fields
//   ``attribute`` (one byte) and ``payload`` (the inner report's little-endian bytes, zero-padded to
//   the widest attribute); law M_j(y | x_j) / k;
// - rsfd (RS+FD, CIKM 2021): one attribute j drawn uniformly and randomized at epsilon, a *fake*
//   report in the same field for every other attribute (GRR: a uniform item; OUE/SUE with fake
//   "auto"/"zero": the all-zero vector's bits at q; otherwise the attribute's randomizer applied to a
//   uniform item), so the index is hidden; law (1/k) sum_j M_j(y_j | x_j) prod_{i != j} F_i(y_i).
//
// The inner protocols are the client's own 1-D protocols, built from configs derived exactly as Python
// builds them (spl's budget epsilon * 1 / k, the GRR/OUE rule d < 3 e^eps + 2 for an attribute without
// a protocol), so every constant is the one Python derives; a collector's client view states each
// attribute's protocol, budget, format and design constants, and a view that differs is refused.

import { InvalidParameterError, InvalidValueTypeError, OutOfDomainError } from '../errors.js';
import { recordReports } from '../format.js';
import { exp } from '../libm.js';
import { EPSILON, options } from '../params.js';
import { CONFIG_VERSION, Protocol } from './base.js';

const MAX_ATTRIBUTES = 64;
const MAX_NAME_LENGTH = 64;
const RESERVED = new Set(['attribute', 'payload']);
const ENTRY_KEYS = new Set(['name', 'domain_size', 'labels', 'bounds', 'protocol', 'options']);
const SCHEMA_OPTIONS_TAKEN = ['epsilon', 'domain_size', 'labels', 'bounds'];
/** The 1-D protocols of this client an attribute may use (Python's categorical_protocols / numerical_protocols). */
const CATEGORICAL = new Set(['grr', 'oue', 'sue', 'olh', 'hr', 'ss', 'cms', 'hcms']);
const NUMERICAL = new Set(['sw', 'gw', 'opm', 'opm-circular']);
/** RS+FD's oracles (pure oracles whose support of an item is one Bernoulli per report). */
const RSFD_ORACLES = new Set(['grr', 'oue', 'sue', 'olh', 'ss']);

const ATTRIBUTES_RULE =
  `a list of 1 to ${MAX_ATTRIBUTES} attributes with distinct names, each with a 'name' (1 to ${MAX_NAME_LENGTH} ` +
  "printable characters, not 'attribute' or 'payload') and either 'domain_size' (an int >= 2) and/or 'labels' " +
  "(distinct non-empty strings) or 'bounds' [lo, hi]; optionally 'protocol' and 'options'";

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** One schema entry normalized as Python's ``Attribute.to_dict`` (only the keys that apply), or a RangeError. */
function schemaEntry(spec) {
  if (!isPlainObject(spec) || !Object.keys(spec).every((key) => ENTRY_KEYS.has(key))) throw new RangeError();
  const { name } = spec;
  if (typeof name !== 'string' || name.length < 1 || name.length > MAX_NAME_LENGTH || name !== name.trim()) throw new RangeError();
  if ([...name].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127) || RESERVED.has(name)) throw new RangeError();
  const categorical = 'domain_size' in spec || 'labels' in spec;
  if (categorical === 'bounds' in spec) throw new RangeError();
  const protocol = spec.protocol ?? null;
  if (protocol !== null && (typeof protocol !== 'string' || protocol === '')) throw new RangeError();
  const extra = spec.options ?? {};
  if (!isPlainObject(extra) || SCHEMA_OPTIONS_TAKEN.some((key) => key in extra)) throw new RangeError();
  const sortedOptions = Object.fromEntries(Object.keys(extra).sort().map((key) => [key, extra[key]]));
  if (!categorical) {
    const [lo, hi] = Array.isArray(spec.bounds) && spec.bounds.length === 2 ? spec.bounds : [NaN, NaN];
    if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isFinite(lo) || !Number.isFinite(hi) || !(lo < hi)) throw new RangeError();
    return { name, bounds: [lo, hi], protocol, options: sortedOptions };
  }
  const labels = spec.labels ?? null;
  if (labels !== null) {
    if (!Array.isArray(labels) || labels.length < 2 || !labels.every((l) => typeof l === 'string' && l.length > 0)) throw new RangeError();
    if (new Set(labels).size !== labels.length) throw new RangeError();
  }
  const size = spec.domain_size ?? (labels === null ? undefined : labels.length);
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 2 || size > 2 ** 31 - 1) throw new RangeError();
  if (labels !== null && labels.length !== size) throw new RangeError();
  return { name, domain_size: size, ...(labels === null ? {} : { labels: [...labels] }), protocol, options: sortedOptions };
}

/** The parameter rule of ``attributes`` (Python's ``Attributes``). */
function attributesRule() {
  return {
    describe: () => ATTRIBUTES_RULE,
    check(value) {
      if (!Array.isArray(value) || value.length < 1 || value.length > MAX_ATTRIBUTES) throw new RangeError();
      const entries = value.map(schemaEntry);
      if (new Set(entries.map((entry) => entry.name)).size !== entries.length) throw new RangeError();
      return entries;
    },
  };
}

/** Row-wise Kronecker product of channel rows (attribute 0 slowest, as Python's ``_kron_rows``). */
function kron(rows) {
  let out = Float64Array.from(rows[0]);
  for (const row of rows.slice(1)) {
    const next = new Float64Array(out.length * row.length);
    for (let i = 0; i < out.length; i++) for (let j = 0; j < row.length; j++) next[i * row.length + j] = out[i] * row[j];
    out = next;
  }
  return out;
}

/** Base of the multi-attribute protocols over records of ``attributes`` (see the module comment). */
class MultiAttribute extends Protocol {
  /**
   * @param {string} name registry name
   * @param {object} config the parsed config
   * @param {Record<string, Function>} table the 1-D protocol classes an attribute may use
   * @param {object} [extraRules] further parameters (rsfd's ``fake``)
   */
  constructor(name, config, table, extraRules = {}, defaults = {}) {
    super(name, config, { epsilon: EPSILON, attributes: attributesRule(), ...extraRules }, defaults);
    const k = this.params.attributes.length;
    const budgets = this.budgets(k);
    this.inners = this.params.attributes.map((attribute, index) => this.buildInner(attribute, budgets[index], table));
    this.params.attributes = this.params.attributes.map((attribute, index) => ({ ...attribute, protocol: this.inners[index].name }));
    this.config = { protocol: name, version: CONFIG_VERSION, ...this.params };
    for (const inner of this.inners) for (const key of inner.floatKeys) if (key !== 'domain_size') this.floatKeys.add(key);
    this.floatKeys.add('bounds');
  }

  get kind() {
    return 'multi';
  }

  get attributes() {
    return this.params.attributes;
  }

  /** The budget of each attribute's protocol. */
  budgets(k) {
    return new Array(k).fill(this.epsilon);
  }

  /** The protocol of an attribute without one: the GRR/OUE variance rule at its budget, or SW. */
  defaultProtocol(attribute, epsilon) {
    if (!('domain_size' in attribute)) return 'sw';
    return attribute.domain_size < 3.0 * exp(epsilon) + 2.0 ? 'grr' : 'oue';
  }

  allowed(attribute) {
    return 'bounds' in attribute ? NUMERICAL : CATEGORICAL;
  }

  buildInner(attribute, epsilon, table) {
    const allowed = this.allowed(attribute);
    const name = attribute.protocol ?? this.defaultProtocol(attribute, epsilon);
    const where = `The 'attributes' parameter of ${this.display}: attribute '${attribute.name}'`;
    if (!allowed.has(name) || !Object.hasOwn(table, name)) {
      throw new InvalidParameterError(`${where} names protocol '${name}'; this client randomizes it with one of ${[...allowed].sort().join(', ')}.`);
    }
    const domain = 'bounds' in attribute
      ? { bounds: attribute.bounds }
      : { domain_size: attribute.domain_size, ...(attribute.labels ? { labels: attribute.labels } : {}) };
    try {
      return new table[name]({ ...attribute.options, protocol: name, version: CONFIG_VERSION, epsilon, ...domain });
    } catch (error) {
      if (error instanceof InvalidParameterError) throw new error.constructor(`${where}: ${error.message}`);
      throw error;
    }
  }

  // ---------------------------------------------------------------- records
  /** A record (an array in the schema's order, or an object by attribute name) as each inner protocol's checked value. */
  checkValue(record, index) {
    const names = this.attributes.map((attribute) => attribute.name);
    let values;
    if (Array.isArray(record)) {
      if (record.length !== names.length) {
        throw new InvalidValueTypeError(
          `The 'values' argument of ${this.display}.privatize must hold records of ${names.length} attributes (${names.join(', ')}). ` +
            `Got an array of ${record.length} at position ${index}.`,
        );
      }
      values = record;
    } else if (isPlainObject(record)) {
      const missing = names.filter((name) => !Object.hasOwn(record, name));
      if (missing.length) {
        throw new InvalidValueTypeError(
          `The 'values' argument of ${this.display}.privatize must hold records with every attribute (${names.join(', ')}). ` +
            `The record at position ${index} has no ${missing.map((name) => `'${name}'`).join(', ')}.`,
        );
      }
      values = names.map((name) => record[name]);
    } else {
      throw new InvalidValueTypeError(
        `The 'values' argument of ${this.display}.privatize must hold records (arrays in the schema's order, or objects by ` +
          `attribute name). Got ${JSON.stringify(record) ?? String(record)} at position ${index}.`,
      );
    }
    return values.map((value, attribute) => {
      try {
        return this.inners[attribute].checkValue(value, index);
      } catch (error) {
        if (error instanceof OutOfDomainError || error instanceof InvalidValueTypeError) {
          throw new error.constructor(`${this.display}.privatize: attribute '${names[attribute]}': ${error.message}`);
        }
        throw error;
      }
    });
  }

  checkValues(values) {
    if (values == null || typeof values.length !== 'number' || typeof values === 'string') {
      throw new InvalidValueTypeError(`The 'values' argument of ${this.display}.privatize must be an array of records. Got ${typeof values} instead.`);
    }
    return Array.from(values, (record, index) => this.checkValue(record, index));
  }

  /** The number of outputs of each attribute's exact channel. */
  outputCounts() {
    if (this._outputCounts === undefined) {
      this._outputCounts = this.inners.map((inner) => inner.channelRow(0).length);
    }
    return this._outputCounts;
  }

  /**
   * Check a collector's client view: the records format, and for each attribute its name, protocol,
   * budget, format and design constants against this client's own derivation.
   */
  checkView(view) {
    this.format.check(view.format, this.display);
    const design = view.design ?? {};
    const refuse = (what) => {
      throw new InvalidParameterError(`The collector's client view states ${what} for ${this.display}. The view is refused.`);
    };
    for (const key of Object.keys(design)) if (key !== 'attributes') refuse(`the design constant '${key}'`);
    const published = design.attributes;
    if (published === undefined) return;
    if (!Array.isArray(published) || published.length !== this.inners.length) refuse(`${JSON.stringify(published)} as its attributes`);
    for (const [index, entry] of published.entries()) {
      const inner = this.inners[index];
      const attribute = this.attributes[index];
      if (!isPlainObject(entry) || entry.name !== attribute.name || entry.protocol !== inner.name || entry.epsilon !== inner.epsilon) {
        refuse(
          `attribute ${index} as ${JSON.stringify(entry)} (this client derives '${attribute.name}', ${inner.name} at epsilon ` +
            `${inner.epsilon})`,
        );
      }
      try {
        inner.checkView({ format: entry.format, design: entry.design ?? {} });
      } catch (error) {
        throw new InvalidParameterError(`Attribute '${attribute.name}': ${error.message}`);
      }
    }
  }

  /** Per-attribute fields of the inner reports as they are (spl, rsfd). */
  attributeFields() {
    return this.inners.map((inner, index) => ({ name: this.attributes[index].name, dtype: inner.format.dtype, shape: inner.format.rowShape }));
  }

  /** The bytes of field ``index`` of one report ``row``. */
  fieldBytes(row, index) {
    const start = this.format.offsetOf(index);
    return row.subarray(start, start + this.inners[index].rowBytes);
  }

  /** The joint output index of per-attribute output indices (attribute 0 slowest, as Python's ``_mixed_radix``). */
  mixedRadix(indices) {
    const counts = this.outputCounts();
    return indices.reduce((joint, index, attribute) => joint * counts[attribute] + index, 0);
  }

  describeReport(row) {
    return this.inners.map((inner, index) => `${this.attributes[index].name}: ${inner.describeReport(this.fieldBytes(row, index))}`).join('; ');
  }
}

/** Every attribute at epsilon / k ("spl"). */
export class SplitBudget extends MultiAttribute {
  constructor(config, table) {
    super('spl', config, table);
    this.format = recordReports(this.attributeFields());
  }

  budgets(k) {
    return new Array(k).fill((this.epsilon * 1.0) / k); // privacy.split: epsilon * w / fsum(weights)
  }

  writeReport(record, source, bytes, view, offset) {
    for (const [index, inner] of this.inners.entries()) inner.writeReport(record[index], source, bytes, view, offset + this.format.offsetOf(index));
  }

  channelRow(record) {
    return kron(this.inners.map((inner, index) => inner.channelRow(record[index])));
  }

  reportIndex(row) {
    return this.mixedRadix(this.inners.map((inner, index) => inner.reportIndex(this.fieldBytes(row, index))));
  }
}

/** One sampled attribute at epsilon, its index reported ("smp"). */
export class SampleOne extends MultiAttribute {
  constructor(config, table) {
    super('smp', config, table);
    const k = this.inners.length;
    this.payloadWidth = Math.max(...this.inners.map((inner) => inner.rowBytes));
    this.format = recordReports([
      { name: 'attribute', dtype: '|u1', low: 0, high: k, reason: 'attribute_out_of_range' },
      { name: 'payload', dtype: '|u1', shape: [this.payloadWidth] },
    ]);
  }

  writeReport(record, source, bytes, view, offset) {
    const chosen = source.uniformInt(this.inners.length);
    view.setUint8(offset, chosen);
    bytes.fill(0, offset + 1, offset + 1 + this.payloadWidth); // padding: zero
    this.inners[chosen].writeReport(record[chosen], source, bytes, view, offset + 1);
  }

  channelRow(record) {
    const k = this.inners.length;
    const rows = this.inners.map((inner, index) => inner.channelRow(record[index]));
    const out = new Float64Array(rows.reduce((total, row) => total + row.length, 0));
    let at = 0;
    for (const row of rows) {
      for (let y = 0; y < row.length; y++) out[at + y] = row[y] / k;
      at += row.length;
    }
    return out;
  }

  reportIndex(row) {
    const chosen = row[0];
    const counts = this.outputCounts();
    const offset = counts.slice(0, chosen).reduce((a, b) => a + b, 0);
    return offset + this.inners[chosen].reportIndex(row.subarray(1, 1 + this.inners[chosen].rowBytes));
  }

  describeReport(row) {
    const chosen = row[0];
    const payload = row.subarray(1, 1 + this.inners[chosen].rowBytes);
    return `attribute ${this.attributes[chosen].name}: ${this.inners[chosen].describeReport(payload)}`;
  }
}

/** Fake reports of an attribute a user did not sample (Python's ``_fake``: UniformItem, ZeroVector, RandomizedItem). */
function fakeData(inner, mode) {
  const unary = inner.name === 'oue' || inner.name === 'sue';
  const d = inner.domainSize;
  if (unary && (mode === 'auto' || mode === 'zero')) {
    return { name: 'zero', write: (source, bytes, view, offset) => inner.writeReport(-1, source, bytes, view, offset), row: () => inner.channelRow(-1) };
  }
  if (inner.name === 'grr') {
    return {
      name: 'uniform',
      write: (source, bytes, view, offset) => inner.format.write(view, offset, 0, source.uniformInt(d)),
      row: () => new Float64Array(d).fill(1 / d),
    };
  }
  return {
    name: 'randomized',
    write: (source, bytes, view, offset) => inner.writeReport(source.uniformInt(d), source, bytes, view, offset),
    row: () => {
      const out = new Float64Array(inner.channelRow(0).length);
      for (let item = 0; item < d; item++) inner.channelRow(item).forEach((p, y) => { out[y] += p / d; });
      return out;
    },
  };
}

/** One sampled attribute at epsilon, fake reports for the others, the index hidden ("rsfd"). */
export class RandomSamplingFakeData extends MultiAttribute {
  constructor(config, table) {
    super('rsfd', config, table, { fake: options(['auto', 'zero', 'random']) }, { fake: 'auto' });
    this.fakes = this.inners.map((inner, index) => {
      if (this.params.fake === 'zero' && inner.name !== 'oue' && inner.name !== 'sue') {
        throw new InvalidParameterError(
          `The 'fake' parameter of RSFD is 'zero' (unary encoding of the zero vector), but attribute '${this.attributes[index].name}' ` +
            `uses ${inner.name}. Use 'random' or 'auto'.`,
        );
      }
      return fakeData(inner, this.params.fake);
    });
    this.format = recordReports(this.attributeFields());
  }

  allowed(attribute) {
    if ('bounds' in attribute) {
      throw new InvalidParameterError(
        `The 'attributes' parameter of RSFD must hold categorical attributes (random sampling plus fake data estimates ` +
          `frequencies). Attribute '${attribute.name}' has bounds: use spl or smp for numerical attributes.`,
      );
    }
    return RSFD_ORACLES;
  }

  defaultProtocol(attribute) {
    throw new InvalidParameterError(
      `The 'attributes' parameter of RSFD: attribute '${attribute.name}' names no protocol. This client takes the config ` +
        "Python's proto.config() writes (every attribute's protocol chosen); name one of grr, oue, sue, olh, ss.",
    );
  }

  writeReport(record, source, bytes, view, offset) {
    const chosen = source.uniformInt(this.inners.length);
    for (const [index, inner] of this.inners.entries()) {
      const at = offset + this.format.offsetOf(index);
      if (index === chosen) inner.writeReport(record[index], source, bytes, view, at);
      else this.fakes[index].write(source, bytes, view, at);
    }
  }

  channelRow(record) {
    const k = this.inners.length;
    const real = this.inners.map((inner, index) => inner.channelRow(record[index]));
    const fake = this.fakes.map((fake) => fake.row());
    let total = null;
    for (let chosen = 0; chosen < k; chosen++) {
      const joint = kron(real.map((row, index) => (index === chosen ? row : fake[index])));
      if (total === null) total = joint;
      else for (let y = 0; y < joint.length; y++) total[y] += joint[y];
    }
    return total.map((p) => p / k);
  }

  reportIndex(row) {
    return this.mixedRadix(this.inners.map((inner, index) => inner.reportIndex(this.fieldBytes(row, index))));
  }
}

/** The multi-attribute protocol classes over the 1-D protocols of ``table`` (registry name -> class). */
export function multiProtocols(table) {
  return {
    spl: class extends SplitBudget { constructor(config) { super(config, table); } },
    smp: class extends SampleOne { constructor(config) { super(config, table); } },
    rsfd: class extends RandomSamplingFakeData { constructor(config) { super(config, table); } },
  };
}
