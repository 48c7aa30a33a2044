// Bernoulli thresholds on the 2^-53 grid, as dpdist.local._bernoulli computes them, bit for bit.
//
// The Python randomizers draw ``U < t`` with U = k 2^-53 (NumPy's Generator.random()), which has
// probability ceil(t 2^53) / 2^53: to realize exactly the probability the privacy claim is about,
// every threshold is a multiple of 2^-53, the largest whose likelihood ratio is at most e^eps in
// exact rational arithmetic, against the lower bound E = fl(e^eps) (1 - 2^-50) of e^eps.  This
// client's Bernoulli draw is exact for any double, so drawing with the same grid value gives the
// same law as the Python sampler.  The rationals are pairs [numerator, denominator] of BigInts.

import { exp } from './libm.js';

const GRID = 1n << 53n;
const GRID_NUMBER = 9007199254740992; // 2^53
const MARGIN_BITS = 50n;

/** The exact value of a finite double as [numerator, denominator] (denominator a power of two). */
export function fractionOf(x) {
  if (!Number.isFinite(x)) throw new RangeError(`fractionOf needs a finite number, got ${x}`);
  if (Number.isInteger(x)) return [BigInt(x), 1n];
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const exponent = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  if (exponent !== 0) mantissa |= 1n << 52n;
  const shift = (exponent === 0 ? 1 : exponent) - 1075; // x = mantissa 2^shift
  const numerator = negative ? -mantissa : mantissa;
  return shift >= 0 ? [numerator << BigInt(shift), 1n] : [numerator, 1n << BigInt(-shift)];
}

/** An integer, a double or a [numerator, denominator] pair as a pair. */
function rational(value) {
  if (Array.isArray(value)) return value;
  if (typeof value === 'bigint') return [value, 1n];
  return fractionOf(value);
}

/** A rational lower bound of e^x: exp(x) (1 - 2^-50) (``_bernoulli.exp_lower``). */
export function expLower(x) {
  const [n, d] = fractionOf(exp(x));
  return [n * ((1n << MARGIN_BITS) - 1n), d << MARGIN_BITS];
}

/** The largest multiple of 2^-53 at most ``value`` (a rational), within [0, 1], as a double (``grid_floor``). */
export function gridFloor(value) {
  const [n, d] = rational(value);
  let k = (n * GRID) / d; // BigInt division truncates toward zero: the floor for n >= 0
  if (n < 0n && k * d !== n * GRID) k -= 1n;
  if (k < 0n) k = 0n;
  if (k > GRID) k = GRID;
  return Number(k) / GRID_NUMBER;
}

/** The largest grid probability p with p / (1 - p) <= odds (``odds_probability``). */
export function oddsProbability(odds) {
  const [n, d] = rational(odds);
  return gridFloor([n, n + d]);
}

/**
 * Keep probability of "keep (uniform over ``kept`` outputs), else uniform over all ``outputs``" whose
 * ratio 1 + lambda m / (s (1 - lambda)) is at most e^eps (``mixture_keep``).
 */
export function mixtureKeep(epsilon, kept, outputs) {
  const [en, ed] = expLower(epsilon);
  const [sn, sd] = rational(kept);
  const [mn, md] = rational(outputs);
  return oddsProbability([(en - ed) * sn * md, ed * sd * mn]);
}

/** Product of rationals (pairs, integers or doubles). */
export function times(...values) {
  return values.map(rational).reduce(([an, ad], [bn, bd]) => [an * bn, ad * bd], [1n, 1n]);
}

/**
 * The law over buckets of a draw that keeps "the bucket of k", k uniform on the 2^53 grid, with
 * probability ``weight``: ``masses[j]`` added to ``row``.  ``keyOf(k)`` must be non-decreasing in k;
 * ``bucketOf(key)`` maps a key to its bucket (the identity, or a key modulo the buckets on a circle).
 * Each key's range of k is found by bisection (53 steps), so the law is exact, not sampled.
 */
export function addGridLaw(row, weight, keyOf, bucketOf = (key) => key) {
  const firstAtLeast = (j) => {
    let low = 0;
    let high = GRID_NUMBER; // keyOf(high) treated as +infinity
    while (low < high) {
      const middle = low + Math.floor((high - low) / 2); // (low + high) could round above 2^53
      if (keyOf(middle) >= j) high = middle;
      else low = middle + 1;
    }
    return low;
  };
  const lowest = keyOf(0);
  const highest = keyOf(GRID_NUMBER - 1);
  let start = 0;
  for (let j = lowest; j <= highest; j++) {
    const stop = j === highest ? GRID_NUMBER : firstAtLeast(j + 1);
    row[bucketOf(j)] += (weight * (stop - start)) / GRID_NUMBER;
    start = stop;
  }
  return row;
}
