// Elementary functions that agree with CPython's math module (glibc libm) where V8's do not.
//
// The Python aggregator derives a protocol's integer design parameters from math.exp(epsilon)
// (SS's subset size k = ceil(d / (e^eps + 1)) of a config without subset_size, OLH's g = round(e^eps + 1), HR's block sizes,
// OUE/SUE's 32-bit thresholds).  V8's Math.exp is accurate to about 1 ulp but differs from
// glibc's nearly correctly rounded exp in the last bit for ~10% of inputs, e.g.
// exp(log(3)) = 2.9999999999999996 in V8 and 3.0000000000000004 in glibc, which turns SS's
// k = ceil(8/4.0000000000000004) = 2 into ceil(8/3.9999999999999996) = 3: every report of the
// JS client would then be rejected.  So exp is computed here in double-double arithmetic
// (~2^-96 relative error) and rounded once: the correctly rounded result, which is what glibc
// returns except in rare hard cases.
//
// ceilLog2 reproduces Python's math.ceil(math.log2(x)) for x >= 1 without evaluating log2.
//
// A collector's client view (Python's protocol.client_view(), read by Client) states these constants,
// but the client still derives them: a bare config (privatize(config), bin/privatize.js --config) has
// no view, and a view is accepted only when it equals the derivation (Protocol.checkView).  A client
// that only checked a view would still need a lower bound of e^eps that holds on every engine (the
// grid's ratios are compared with it in exact rationals, grid.js): this exp, not Math.exp.

const SPLIT = 134217729; // 2^27 + 1 (Dekker's splitter)
const LN2_HI = 0.6931471805599453; // ln 2 as a double-double
const LN2_LO = 2.3190468138462996e-17;
const LOG2E = 1.4426950408889634;
const EXP_OVERFLOW = 709.782712893384; // largest x with a finite exp(x)
const EXP_SUBNORMAL = -708.3964185322641; // below: subnormal results (use Math.exp)

function twoSum(a, b) {
  const s = a + b;
  const bb = s - a;
  return [s, a - (s - bb) + (b - bb)];
}

function quickTwoSum(a, b) {
  const s = a + b;
  return [s, b - (s - a)];
}

function twoProd(a, b) {
  const p = a * b;
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b);
  const bl = b - bh;
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}

function ddAdd(ah, al, bh, bl) {
  const [s, e] = twoSum(ah, bh);
  const [t, f] = twoSum(al, bl);
  const [u, g] = quickTwoSum(s, e + t);
  return quickTwoSum(u, g + f);
}

function ddMul(ah, al, bh, bl) {
  const [p, e] = twoProd(ah, bh);
  return quickTwoSum(p, e + (ah * bl + al * bh));
}

/**
 * e^x rounded correctly to the nearest double (up to hard cases of probability ~2^-43).
 * @param {number} x
 * @returns {number}
 */
export function exp(x) {
  if (Number.isNaN(x)) return NaN;
  if (x > EXP_OVERFLOW) return Infinity;
  if (x < EXP_SUBNORMAL) return Math.exp(x);
  if (x === 0) return 1;
  const k = Math.round(x * LOG2E);
  // r = x - k ln 2 in double-double: k * LN2_HI and k * LN2_LO with their exact errors
  const [p, pe] = twoProd(k, LN2_HI);
  const [q, qe] = twoProd(k, LN2_LO);
  let [rh, rl] = ddAdd(x, 0, -p, -pe);
  [rh, rl] = ddAdd(rh, rl, -q, -qe);
  // Taylor series of e^r, |r| <= 0.35: 30 terms reach far below 2^-104
  let [sh, sl] = [1, 0];
  let [th, tl] = [1, 0];
  for (let n = 1; n <= 30; n++) {
    [th, tl] = ddMul(th, tl, rh, rl);
    const qh = th / n;
    const [ph, pl] = twoProd(qh, n); // th / n in double-double: qh + (th - qh n + tl) / n
    [th, tl] = quickTwoSum(qh, (th - ph - pl + tl) / n);
    [sh, sl] = ddAdd(sh, sl, th, tl);
    if (Math.abs(th) < 1e-40) break;
  }
  // scale by 2^k exactly (two steps so that 2^k itself never overflows)
  const half = Math.trunc(k / 2);
  const scale1 = 2 ** half;
  const scale2 = 2 ** (k - half);
  return ((sh * scale1) * scale2) + ((sl * scale1) * scale2);
}

/**
 * Python's ``math.ceil(math.log2(x))`` for a finite x >= 1, with log2 correctly rounded.
 *
 * For x = 2^k m, 1 <= m < 2: the answer is k when m = 1; otherwise k + 1, unless the correctly
 * rounded log2(x) = k + log2(m) rounds down to the integer k, which happens when log2(m) is
 * below half an ulp of k (m within a few ulps above 1, k >= 4).
 * @param {number} x
 * @returns {number}
 */
export function ceilLog2(x) {
  if (!(x >= 1) || !Number.isFinite(x)) throw new RangeError(`ceilLog2 needs a finite x >= 1, got ${x}`);
  let k = 0;
  let m = x;
  while (m >= 2) {
    m /= 2; // exact
    k += 1;
  }
  if (m === 1) return k;
  if (k === 0) return 1;
  const halfUlp = 2 ** (Math.floor(Math.log2(k)) - 53);
  const log2m = Math.log2(m); // accurate to an ulp of a tiny number: far from the half-ulp of k
  return log2m < halfUlp ? k : k + 1;
}

/**
 * Python's built-in ``round(x)`` for a float: to the nearest integer, ties to even.
 * @param {number} x
 * @returns {number}
 */
export function roundHalfEven(x) {
  const r = Math.round(x); // ties towards +infinity
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** ``math.expm1``: V8's fdlibm port agrees with glibc's (also fdlibm-derived) on the inputs tested. */
export const expm1 = Math.expm1;
