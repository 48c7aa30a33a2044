// Records of several attributes per user, the base of "spl", "smp", "rsfd" and "rsrfd" (spl.js, smp.js,
// rsfd.js, rsrfd.js; dpdist.local.multi), over the attribute protocols of the client (_index.js).
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
//   the widest attribute; src/groups.js, the design calm and hdg share); law M_j(y | x_j) / k;
// - rsfd (RS+FD, CIKM 2021): one attribute j drawn uniformly and randomized at epsilon, a *fake*
//   report in the same field for every other attribute (GRR: a uniform item; OUE/SUE with fake
//   "auto"/"zero": the all-zero vector's bits at q; otherwise the attribute's randomizer applied to a
//   uniform item), so the index is hidden; law (1/k) sum_j M_j(y_j | x_j) prod_{i != j} F_i(y_i);
// - rsrfd (RS+RFD, PVLDB 2023): rsfd with fake data drawn from public priors (src/fake.js).
//
// The inner protocols are the client's own 1-D protocols, built from configs derived exactly as Python
// builds them (spl's budget epsilon * 1 / k, the GRR/OUE rule d < 3 e^eps + 2 for an attribute without
// a protocol), so every constant is the one Python derives; a collector's client view states each
// attribute's protocol, budget, format and design constants, and a view that differs is refused.

import { InvalidParameterError } from '../errors.js';
import { fakeData, quantizePrior } from '../fake.js';
import { recordReports } from '../format.js';
import { SampledGroups } from '../groups.js';
import { exp } from '../libm.js';
import { optional, options, privacyBudget } from '../params.js';
import { RecordProtocol } from '../records.js';
import { CONFIG_VERSION, FrequencyProtocol, NumericalProtocol } from './_base.js';

/** spl's budget: 1e-6 for each of the at most 64 attributes of a record, to 30 (Python's ``spl._constraints``). */
const SPLIT_EPSILON = privacyBudget(1e-6 * 64, '6.4e-05');

/** RS+FD's oracles (pure oracles whose support of an item is one Bernoulli per report). */
const RSFD_ORACLES = new Set(['grr', 'oue', 'sue', 'olh', 'ss']);

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
class MultiAttribute extends RecordProtocol {
  /**
   * @param {string} name registry name
   * @param {object} config the parsed config
   * @param {Record<string, Function>} table the 1-D protocol classes an attribute may use
   * @param {object} [extraRules] further parameters (rsfd's ``fake``, rsrfd's ``priors``)
   */
  constructor(name, config, table, extraRules = {}, defaults = {}) {
    super(name, config, extraRules, defaults);
    const k = this.params.attributes.length;
    const budgets = this.budgets(k);
    this.inners = this.params.attributes.map((attribute, index) => this.buildInner(attribute, budgets[index], table));
    this.checkers = this.inners;
    this.params.attributes = this.params.attributes.map((attribute, index) => ({ ...attribute, protocol: this.inners[index].name }));
    this.config = { protocol: name, version: CONFIG_VERSION, ...this.params };
    for (const inner of this.inners) for (const key of inner.floatKeys) if (key !== 'domain_size') this.floatKeys.add(key);
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

  /** The protocols of ``table`` (the attribute protocols: _index.js) an attribute may use: the numerical ones
   * for an attribute with bounds, else the categorical ones (Python's numerical_protocols / categorical_protocols). */
  allowed(attribute, table) {
    const base = 'bounds' in attribute ? NumericalProtocol : FrequencyProtocol;
    return new Set(Object.keys(table).filter((name) => table[name].prototype instanceof base));
  }

  buildInner(attribute, epsilon, table) {
    const allowed = this.allowed(attribute, table);
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
    for (const key of Object.keys(design)) if (key !== 'attributes') this.refuseView(`the design constant '${key}'`);
    this.checkPartViews(design.attributes, this.inners.map((inner, index) => ({ name: this.attributes[index].name, inner })), 'attribute');
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
    // Python's rule: epsilon at least 1e-6 for each of the most attributes a record may have
    super('spl', config, table, { epsilon: SPLIT_EPSILON });
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

/** One sampled attribute at epsilon, its index reported ("smp"): users sampled into a group per attribute. */
export class SampleOne extends MultiAttribute {
  constructor(config, table) {
    super('smp', config, table);
    this.groups = new SampledGroups(this.inners, 'attribute', this.attributes.map((attribute) => attribute.name));
    this.format = this.groups.format;
  }

  writeReport(record, source, bytes, view, offset) {
    this.groups.writeReport((chosen) => record[chosen], source, bytes, view, offset);
  }

  channelRow(record) {
    return this.groups.channelRow(record);
  }

  reportIndex(row) {
    return this.groups.reportIndex(row);
  }

  describeReport(row) {
    return this.groups.describeReport(row);
  }
}

/** The kind of fake data of an attribute in rsfd (Python's ``RandomSamplingFakeData._fake_data``). */
function uniformFakeKind(inner, mode) {
  const unary = inner.name === 'oue' || inner.name === 'sue';
  if (unary && (mode === 'auto' || mode === 'zero')) return 'zero';
  return inner.name === 'grr' ? 'uniform' : 'randomized';
}

/** One sampled attribute at epsilon, fake reports for the others, the index hidden ("rsfd"). */
export class RandomSamplingFakeData extends MultiAttribute {
  constructor(config, table, name = 'rsfd', extraRules = { fake: options(['auto', 'zero', 'random']) }, defaults = { fake: 'auto' }) {
    super(name, config, table, extraRules, defaults);
    this.fakes = this.inners.map((inner, index) => this.fakeData(inner, index));
    this.format = recordReports(this.attributeFields());
  }

  fakeData(inner, index) {
    if (this.params.fake === 'zero' && inner.name !== 'oue' && inner.name !== 'sue') {
      throw new InvalidParameterError(
        `The 'fake' parameter of RSFD is 'zero' (unary encoding of the zero vector), but attribute '${this.attributes[index].name}' ` +
          `uses ${inner.name}. Use 'random' or 'auto'.`,
      );
    }
    return fakeData(inner, uniformFakeKind(inner, this.params.fake));
  }

  allowed(attribute) {
    if ('bounds' in attribute) {
      throw new InvalidParameterError(
        `The 'attributes' parameter of ${this.display} must hold categorical attributes (random sampling plus fake data estimates ` +
          `frequencies). Attribute '${attribute.name}' has bounds: use spl or smp for numerical attributes.`,
      );
    }
    return RSFD_ORACLES;
  }

  defaultProtocol(attribute) {
    throw new InvalidParameterError(
      `The 'attributes' parameter of ${this.display}: attribute '${attribute.name}' names no protocol. This client takes the config ` +
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

/** Neumaier's compensated sum (within an ulp or so of Python's exact ``math.fsum``). */
function compensatedSum(values) {
  let sum = 0;
  let compensation = 0;
  for (const value of values) {
    const total = sum + value;
    compensation += Math.abs(sum) >= Math.abs(value) ? (sum - total) + value : (value - total) + sum;
    sum = total;
  }
  return sum + compensation;
}

/** One prior: a list of at least 2 finite non-negative numbers summing to 1 (within 1e-6), as Python's ``_prior``. */
function checkPrior(value) {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length < 2 || !value.every((p) => typeof p === 'number' && Number.isFinite(p) && p >= 0)) {
    throw new RangeError();
  }
  if (Math.abs(compensatedSum(value) - 1) > 1e-6) throw new RangeError();
  return [...value];
}

/** The parameter rule of rsrfd's ``priors`` (Python's ``Priors``). */
function priorsRule() {
  return {
    isFloat: true,
    describe: () => 'a list with one prior per attribute: None (uniform) or a list of non-negative floats summing to 1',
    check(value) {
      if (!Array.isArray(value)) throw new RangeError();
      return value.map(checkPrior);
    },
  };
}

/**
 * RS+FD with fake data drawn from public priors ("rsrfd", Arcolezi, Gambs, Couchot, Palamidessi, PVLDB 2023,
 * Alg. 1): GRR sends an item drawn from the prior as it is, the other oracles randomize one ("UE-r"); no prior
 * (null) is a uniform one.  The record-level guarantee is the oracle's epsilon, as for rsfd: the fake data do
 * not depend on the record.
 */
export class RealisticFakeData extends RandomSamplingFakeData {
  constructor(config, table) {
    super(config, table, 'rsrfd', { priors: optional(priorsRule()) }, { priors: null });
  }

  fakeData(inner, index) {
    const { priors } = this.params;
    const k = this.attributes.length;
    if (priors !== null && priors.length !== k) {
      throw new InvalidParameterError(
        `The 'priors' parameter of ${this.display} must hold one prior per attribute (${k}). Got ${priors.length} instead.`,
      );
    }
    const attribute = this.attributes[index];
    const prior = priors === null ? null : priors[index];
    if (prior !== null && prior.length !== attribute.domain_size) {
      throw new InvalidParameterError(
        `The 'priors' parameter of ${this.display}: the prior of attribute '${attribute.name}' must hold ` +
          `domain_size=${attribute.domain_size} probabilities. Got ${prior.length} instead.`,
      );
    }
    const weights = quantizePrior(prior ?? new Array(attribute.domain_size).fill(1));
    if (inner.name === 'grr') return fakeData(inner, 'prior', weights);
    return fakeData(inner, 'randomized', prior === null ? null : weights);
  }
}
