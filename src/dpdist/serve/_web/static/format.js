// @ts-check
/**
 * Numbers and intervals as the service's pages print them, and the intervals of an estimate document.
 * No DOM at import: node's test runner imports this module (tests/serve/pages_js).
 * @module
 */

/**
 * ``x`` with ``digits`` significant digits and no trailing zeros, "-" when it is not a finite number.
 * @param {number | null | undefined} x
 * @param {number} [digits]
 * @returns {string}
 */
export function fmt(x, digits = 4) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "-";
  return String(Number(x.toPrecision(digits)));
}

/**
 * "[low, high]", or "-" without a low end.
 * @param {number | null | undefined} low
 * @param {number | null | undefined} high
 * @returns {string}
 */
export const interval = (low, high) => (low === null || low === undefined ? "-" : "[" + fmt(low) + ", " + fmt(high) + "]");

/**
 * An interval of an estimate document (``intervals`` of ``GET .../estimate``, docs/reference/results.md): one number's
 * (``low``, ``high`` numbers) or one per item or point (arrays).
 * @typedef {object} Interval
 * @property {string} quantity
 * @property {boolean} anytime_valid
 * @property {boolean} [simultaneous]
 * @property {boolean} [empty]
 * @property {number} level
 * @property {string} method
 * @property {any} low
 * @property {any} high
 * @property {number[]} [at]
 */

/**
 * The first interval of ``quantity`` that is (or is not) anytime-valid, and simultaneous if asked.
 * @param {{intervals?: Interval[]}} e
 * @param {string} quantity
 * @param {boolean} anytime
 * @param {boolean} [simultaneous]
 * @returns {Interval | null}
 */
export function pick(e, quantity, anytime, simultaneous) {
  return (e.intervals || []).find((i) => i.quantity === quantity && i.anytime_valid === anytime
                                       && (simultaneous === undefined || i.simultaneous === simultaneous)) || null;
}

/**
 * About ``count`` round tick values covering [lo, hi].
 * @param {number} lo
 * @param {number} hi
 * @param {number} count
 * @returns {number[]}
 */
export function ticks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = /** @type {number} */ ([1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw));
  const out = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}
