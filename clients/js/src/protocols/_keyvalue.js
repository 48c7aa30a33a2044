// Key-value protocols, "privkv" (privkv.js), "pckv-ue" (pckv-ue.js) and "pckv-grr" (pckv-grr.js), as
// dpdist.local.keyvalue: a user holds a set of (key, value) pairs, keys in [0, domain_size), each at most
// once, values in [-1, 1]; the batch privatized is one set per user.  A set is an object {key: value}, a Map,
// or an array of [key, value] pairs; it is checked as Python's check_sets checks it (the same refusals:
// InvalidValueTypeError for what is not a set of pairs, OutOfDomainError for a key outside the domain, a key
// twice or a value outside [-1, 1]).
//
// The draws are the same whatever the set (its size included), so that the calls to the source say nothing
// about it: Padding-and-Sampling's uniform slot among max(|S|, l) is drawn by reservoir over the max(d, l)
// slots a set can have (a uniform slot among the first l, then slot j replaces it w.p. 1/j for j <= max(|S|, l),
// one uniformInt(j) drawn for every j up to max(d, l)), which gives each of the max(|S|, l) slots probability
// exactly 1/max(|S|, l); the discretization of the value (+1 w.p. (1 + v)/2) draws Bernoulli at Python's
// realized threshold ceil(t 2^53) 2^-53 (NumPy's U < t), so the law is Python's channel exactly.
// The rational arithmetic of the design constants (a, b, p) is Python's, on BigInt pairs (grid.js).

import { InvalidValueTypeError, OutOfDomainError } from '../errors.js';
import { refusedValue } from '../refusals.js';
import { DOMAIN_SIZE, EPSILON } from '../params.js';
import { Protocol } from './_base.js';

const GRID = 9007199254740992; // 2^53

/** Python's ``realized(t)``: the probability of ``Generator.random() < t``, ceil(t 2^53) 2^-53 (exact). */
export function realized(threshold) {
  const t = Math.min(Math.max(threshold, 0), 1);
  return Math.ceil(t * GRID) / GRID;
}

/** The parameters of every key-value protocol, and ``extra`` ones. */
export function keyValueRules(extra = {}) {
  return { epsilon: EPSILON, domain_size: DOMAIN_SIZE, ...extra };
}

// ---------------------------------------------------------------- rationals: [numerator, denominator], denominator > 0
export const ratio = (n, d = 1n) => (d < 0n ? [-n, -d] : [n, d]);
export const add = ([a, b], [c, d]) => [a * d + c * b, b * d];
export const sub = ([a, b], [c, d]) => [a * d - c * b, b * d];
export const mul = ([a, b], [c, d]) => [a * c, b * d];
export const div = ([a, b], [c, d]) => ratio(a * d, b * c);
export const atLeast = ([a, b], [c, d]) => a * d >= c * b;
export const lessThan = (x, y) => !atLeast(x, y);

/** The smallest multiple of 2^-53 at least ``value`` (a rational), within [0, 1] (Python's ``grid_ceil``). */
/** An object key that is an integer's canonical decimal form (what ``String(k)`` gives for an integer ``k``). */
const CANONICAL_INTEGER = /^(0|-?[1-9]\d*)$/;

export function gridCeil([n, d]) {
  const scaled = n * 9007199254740992n;
  let k = scaled / d;
  if (k * d < scaled) k += 1n; // BigInt division truncates: the ceiling for n >= 0
  if (k < 0n) k = 0n;
  if (k > 9007199254740992n) k = 9007199254740992n;
  return Number(k) / GRID;
}

/** Base of the key-value protocols: sets of pairs in, one report per set. */
export class KeyValueProtocol extends Protocol {
  get kind() {
    return 'key_value';
  }

  get domainSize() {
    return this.params.domain_size;
  }

  /** One checked set per user: ``{keys, values}`` (arrays of the keys and of their values). */
  checkValues(values) {
    if (values == null || typeof values.length !== 'number' || typeof values === 'string') {
      throw new InvalidValueTypeError(
        `The 'values' argument of ${this.display}.privatize must be an array of sets of (key, value) pairs, one per user ` +
          `(an object {key: value}, a Map or an array of [key, value]). Got ${typeof values} instead.`,
      );
    }
    return Array.from(values, (set, index) => this.checkValue(set, index));
  }

  /** One user's set, checked (Python's ``check_sets``): ``{keys, values}``. */
  checkValue(set, index) {
    const d = this.domainSize;
    const owner = `The 'values' argument of ${this.display}.privatize`;
    let pairs;
    let objectKeys = false; // an object's keys are strings: only there is a canonical decimal string a key
    if (set instanceof Map) pairs = [...set.entries()];
    else if (Array.isArray(set)) pairs = set;
    else if (set !== null && typeof set === 'object' && !ArrayBuffer.isView(set)) {
      pairs = Object.entries(set);
      objectKeys = true;
    } else {
      throw refusedValue(InvalidValueTypeError, `${owner} must hold one set of (key, value) pairs per user (an object ` +
        `{key: value}, a Map or an array of [key, value])`, `not one (a ${typeof set})`, index);
    }
    // plain arrays: a typed array per set cost most of privatizing many small sets (5 million in the conformance
    // driver: a third of its time, in the garbage collector); the keys are checked integers in [0, d) either way
    const keys = new Array(pairs.length);
    const numbers = new Array(pairs.length);
    const seen = new Set();
    pairs.forEach((pair, at) => {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw refusedValue(InvalidValueTypeError, `${owner} must hold (key, value) pairs`, 'a set holding something else', index);
      }
      const [rawKey, value] = pair;
      // Python's check_sets takes int keys only: a string key of a Map or a pair ('3') is refused, and of an
      // object's (string) keys only the canonical decimal form of an integer ('3', '-1'; not '03', '3e0', ' 3')
      const key = objectKeys && CANONICAL_INTEGER.test(rawKey) ? Number(rawKey) : rawKey;
      if (typeof key !== 'number' || !Number.isInteger(key)) {
        throw refusedValue(InvalidValueTypeError, `${owner}: keys must be whole numbers (Numbers; an object's keys in ` +
          'canonical decimal form)', `a set with another key (a ${typeof rawKey})`, index);
      }
      if (typeof value !== 'number') {
        throw refusedValue(InvalidValueTypeError, `${owner}: values must be numbers`, `a set with another value (a ${typeof value})`, index);
      }
      if (key < 0 || key >= d) throw refusedValue(OutOfDomainError, `${owner} must hold keys in [0, ${d})`, 'a set with a key outside it', index);
      if (!(Math.abs(value) <= 1)) {
        throw refusedValue(OutOfDomainError, `${owner} must hold values in [-1, 1] (scale them first)`, 'a set with a value outside it', index);
      }
      if (seen.has(key)) {
        throw refusedValue(OutOfDomainError, `${owner} must hold each key at most once per user`, 'a set with a key twice', index);
      }
      seen.add(key);
      keys[at] = key;
      numbers[at] = value;
    });
    return { keys, values: numbers };
  }

  /** ``v* = +1`` with probability (1 + v)/2 as Python draws it (``discretize``): true for +1. */
  discretize(value, source) {
    return source.bernoulli(realized((1.0 + value) / 2.0));
  }

  /** Pr[v* = +1] for ``value`` (Python's channel). */
  static up(value) {
    return realized((1.0 + value) / 2.0);
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }
}
