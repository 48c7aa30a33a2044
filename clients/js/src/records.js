// Records of several attributes per user: the public schema (``attributes``, as Python's
// dpdist.local.multi._schema), a user's record checked against it, and the check of the per-part
// entries a collector's client view publishes (each attribute's or group's protocol, budget, format
// and design constants).  The base of every protocol over records: spl, smp, rsfd, rsrfd
// (src/protocols/_multi.js), calm and hdg (src/protocols/_marginals.js).

import { InvalidParameterError, InvalidValueTypeError, OutOfDomainError } from './errors.js';
import { refusedValue } from './refusals.js';
import { EPSILON } from './params.js';
import { FrequencyProtocol, NumericalProtocol, Protocol } from './protocols/_base.js';

const MAX_ATTRIBUTES = 64;
const MAX_NAME_LENGTH = 64;
const RESERVED = new Set(['attribute', 'payload']);
const ENTRY_KEYS = new Set(['name', 'domain_size', 'labels', 'bounds', 'protocol', 'options']);
const SCHEMA_OPTIONS_TAKEN = ['epsilon', 'domain_size', 'labels', 'bounds'];

const ATTRIBUTES_RULE =
  `a list of 1 to ${MAX_ATTRIBUTES} attributes with distinct names, each with a 'name' (1 to ${MAX_NAME_LENGTH} ` +
  "printable characters, not 'attribute' or 'payload') and either 'domain_size' (an int >= 2) and/or 'labels' " +
  "(distinct non-empty strings) or 'bounds' [lo, hi]; optionally 'protocol' and 'options'";

export function isPlainObject(value) {
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
export function attributesRule() {
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

/**
 * The value check of one attribute without a protocol of its own (calm, hdg): the 1-D protocols'
 * own ``checkValue`` (items or labels of a categorical attribute; reals in the bounds, rescaled to
 * [0, 1], of a numerical one) over the attribute's domain.
 */
export function attributeDomain(owner, attribute) {
  const numerical = 'bounds' in attribute;
  const domain = numerical
    ? { bounds: attribute.bounds }
    : { domain_size: attribute.domain_size, ...(attribute.labels ? { labels: attribute.labels } : {}) };
  const prototype = numerical ? NumericalProtocol.prototype : FrequencyProtocol.prototype;
  return Object.assign(Object.create(prototype), { name: owner.toLowerCase(), params: domain });
}

/**
 * Base of the protocols over records of ``attributes``: a record is an array in the schema's order or an
 * object by attribute name; each value is checked by ``this.checkers[j].checkValue`` (set by the subclass:
 * the attribute's protocol, or ``attributeDomain``).
 */
export class RecordProtocol extends Protocol {
  constructor(name, config, rules, defaults = {}) {
    super(name, config, { epsilon: EPSILON, attributes: attributesRule(), ...rules }, defaults); // Python's order
    this.floatKeys.add('bounds');
  }

  get kind() {
    return 'multi';
  }

  get attributes() {
    return this.params.attributes;
  }

  /** A record (an array in the schema's order, or an object by attribute name) as each attribute's checked value. */
  checkValue(record, index) {
    this._names ??= this.attributes.map((attribute) => attribute.name); // once: a batch checks every record
    const names = this._names;
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
      throw refusedValue(InvalidValueTypeError, `The 'values' argument of ${this.display}.privatize must hold records ` +
        `(arrays in the schema's order, or objects by attribute name)`, `not a record (a ${typeof record})`, index);
    }
    return values.map((value, attribute) => {
      try {
        // the attribute's protocol checks it as it checks one value: opm-circular wraps it around the circle, as Python's
        // records do, the other numerical protocols clip it to the nearest bound
        return this.checkers[attribute].checkValue(value, index);
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

  /** Refuse a client view: it states ``what`` (this client derives otherwise). */
  refuseView(what) {
    throw new InvalidParameterError(`The collector's client view states ${what} for ${this.display}. The view is refused.`);
  }

  /**
   * Check the per-part entries of a client view's design (``published``: Python's list of ``{name, protocol,
   * epsilon, format, design}``) against this client's parts (``parts``: ``{name, inner}``, an attribute or a
   * group with its 1-D protocol); ``what`` names a part ("attribute", "marginal", "grid").
   */
  checkPartViews(published, parts, what) {
    if (published === undefined) return;
    if (!Array.isArray(published) || published.length !== parts.length) this.refuseView(`${JSON.stringify(published)} as its ${what}s`);
    for (const [index, entry] of published.entries()) {
      const { name, inner } = parts[index];
      if (!isPlainObject(entry) || entry.name !== name || entry.protocol !== inner.name || entry.epsilon !== inner.epsilon) {
        this.refuseView(`${what} ${index} as ${JSON.stringify(entry)} (this client derives '${name}', ${inner.name} at epsilon ${inner.epsilon})`);
      }
      try {
        inner.checkView({ format: entry.format, design: entry.design ?? {} });
      } catch (error) {
        throw new InvalidParameterError(`${what[0].toUpperCase()}${what.slice(1)} '${name}': ${error.message}`);
      }
    }
  }
}
