// Projective geometry response, "pgr" (Feldman, Nelson, Nguyen & Talwar, ICML 2022; dpdist.local.frequency.pgr).
//
// For a prime q and the least t >= 2 with K = (q^t - 1)/(q - 1) >= d, item x is the x-th point of the projective
// space over F_q: the x-th canonical vector in increasing value (base-q digits, least significant first, the top
// nonzero digit 1).  A report is a point v, drawn in x's hyperplane <x, v> = 0 (s = (q^(t-1) - 1)/(q - 1) points)
// with probability p_in (Python's: the largest 2^-53 grid value with p_in/(1 - p_in) (K - s)/s <= e^eps), else
// among the other K - s = q^(t-1) points, uniformly (the paper's eq. 1).  q is the config's field_size (Python
// records it); a config without it (an attribute of a multi-attribute config) means Python's projective_design:
// the prime of least subset_variance(eps, K, d, s) among those up to 4 (e^eps + 1) + 8 and the least prime >= d - 1,
// whose transform has at most 2^23 cells (the smaller on a tie).
//
// Sampling, exact, in integers below 2^23.  With j the top coordinate of x (x_j = 1), the digits of a vector w other
// than w_j are t - 1 free digits and w_j = r - <x, w without w_j> mod q gives <x, w> = r.  A device draws the
// inclusion, a nonzero free vector uniform on [1, q^(t-1)) and a free vector uniform on [0, q^(t-1)), the same three
// draws whatever the coins and the value: the first with r = 0 is a uniform nonzero vector of the hyperplane (q - 1
// of them per point), the second with r = 1 the one vector of product 1 of a uniform point outside it, as Python
// draws.  Scaled by the inverse of its top digit, w is the point's canonical vector, and the report
// is its index (q^m - 1)/(q - 1) + value - q^m, m the top digit.  Reports are point indices below K.

import { InvalidParameterError } from '../errors.js';
import { expLower, oddsProbability, times } from '../grid.js';
import { exp } from '../libm.js';
import { frequencyRules, integer, optional } from '../params.js';
import { itemReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';
import { isPrime } from './_local_hashing.js';
import { subsetVariance } from './_subsets.js';

/** Python's ``pgr.MAX_TRANSFORM_CELLS``: the largest q^t, the cells of the decoding transform. */
export const MAX_TRANSFORM_CELLS = 2 ** 23;
const LARGEST_FIELD = 2896; // isqrt(MAX_TRANSFORM_CELLS): q^2 cells at the least dimension
const MAX_CHANNEL_OUTPUTS = 1 << 16;

/** The least t >= 2 whose K = (q^t - 1)/(q - 1) points hold d items: {dimension t, cells q^t, points K, plane s}. */
export function projectivePoints(q, d) {
  let dimension = 2;
  let cells = q * q; // exact: K >= d needs no more than q d cells, below 2^53
  while ((cells - 1) / (q - 1) < d) {
    dimension += 1;
    cells *= q;
  }
  return { dimension, cells, points: (cells - 1) / (q - 1), plane: (cells / q - 1) / (q - 1) };
}

/** Python's ``projective_design``: the prime q of least variance whose transform fits (the smaller on a tie). */
export function projectiveDesign(epsilon, d) {
  const small = Math.min(LARGEST_FIELD, Math.trunc(4 * (exp(Math.min(epsilon, 30)) + 1)) + 8);
  const candidates = [];
  for (let q = 2; q <= small; q++) if (isPrime(q)) candidates.push(q);
  for (let q = Math.max(2, d - 1); q <= Math.min(LARGEST_FIELD, 2 * d + 3); q++) {
    if (!isPrime(q)) continue;
    if (q > small) candidates.push(q); // the least prime >= d - 1: randomized response over a line's q + 1 points
    break;
  }
  let best = null;
  let least = Infinity;
  for (const q of candidates) {
    const { cells, points, plane } = projectivePoints(q, d);
    if (cells > MAX_TRANSFORM_CELLS) continue;
    const variance = subsetVariance(epsilon, points, d, plane);
    if (variance < least) [best, least] = [q, variance];
  }
  if (best === null) {
    throw new InvalidParameterError(`The 'domain_size' of PGR must fit a projective space whose transform has at most ${MAX_TRANSFORM_CELLS} `
      + `cells. Got ${d} at epsilon=${epsilon}.`);
  }
  return best;
}

export default class PGR extends FrequencyProtocol {
  static protocol = 'pgr';

  constructor(config) {
    super('pgr', config, frequencyRules({ field_size: optional(integer(2, 2 ** 20)) }), { labels: null, field_size: null });
    const d = this.domainSize;
    let q = this.params.field_size;
    if (q === null) { // recorded, as Python records it
      q = projectiveDesign(this.epsilon, d);
      this.params.field_size = q;
      this.config.field_size = q;
    } else if (!isPrime(q)) {
      throw new InvalidParameterError(`The 'field_size' parameter of PGR must be a prime. Got ${q} instead.`);
    }
    const { dimension, cells, points, plane } = projectivePoints(q, d);
    if (cells > MAX_TRANSFORM_CELLS) {
      throw new InvalidParameterError(`The 'field_size' parameter of PGR must give a transform of at most ${MAX_TRANSFORM_CELLS} cells `
        + `(q^t with t = ${dimension} for domain_size=${d}). Got ${q} instead.`);
    }
    this.fieldSize = q;
    this.dimension = dimension;
    this.outputSize = points;
    this.planeSize = plane;
    this.freeVectors = cells / q; // q^(t-1): the free digits of a vector
    // the largest 2^-53 grid probability with p_in / (1 - p_in) (K - s) / s <= e^eps (grid.js)
    this.pIn = oddsProbability(times(expLower(this.epsilon), [BigInt(plane), BigInt(points - plane)]));
    this.powers = Array.from({ length: dimension + 1 }, (_, m) => q ** m); // exact: q^m <= 2^23
    this.offsets = this.powers.map((power) => (power - 1) / (q - 1)); // the first point of top digit m
    this.inverse = Array.from({ length: q }, (_, a) => (a === 0 ? 0 : powMod(a, q - 2, q)));
    this._w = new Int32Array(dimension);
    this.format = itemReports(points);
  }

  writeReport(item, source, bytes, view, offset) {
    const include = source.bernoulli(this.pIn);
    const inside = 1 + source.uniformInt(this.freeVectors - 1); // a nonzero vector of the hyperplane: residue 0
    const outside = source.uniformInt(this.freeVectors); // drawn either way: the vector of product 1 outside it
    this.format.write(view, offset, 0, this.pointWith(item, include ? inside : outside, include ? 0 : 1));
  }

  /** The base-q digits of point ``point``'s canonical vector, least significant first, and its top digit. */
  pointDigits(point) {
    let top = 0;
    while (top + 1 < this.dimension && this.offsets[top + 1] <= point) top++;
    const digits = new Int32Array(this.dimension);
    for (let i = 0, rest = point - this.offsets[top]; i < top; i++, rest = Math.floor(rest / this.fieldSize)) digits[i] = rest % this.fieldSize;
    digits[top] = 1;
    return { digits, top };
  }

  /** The point of the vector whose digits other than the item's top one are ``free``'s and whose product with it is ``residue``. */
  pointWith(item, free, residue) {
    const q = this.fieldSize;
    const { digits, top } = this.pointDigits(item);
    const w = this._w;
    let product = 0; // below t (q - 1)^2 < 2^31
    for (let i = 0, rest = free; i < this.dimension; i++) {
      if (i === top) continue;
      w[i] = rest % q;
      rest = Math.floor(rest / q);
      product += digits[i] * w[i];
    }
    w[top] = (((residue - product) % q) + q) % q;
    return this.canonicalPoint(w);
  }

  /** The point of a nonzero vector (digits): scaled so that its top nonzero digit is 1, (q^m - 1)/(q - 1) + value - q^m. */
  canonicalPoint(w) {
    const q = this.fieldSize;
    let top = this.dimension - 1;
    while (w[top] === 0) top--;
    const scale = this.inverse[w[top]];
    let value = 0;
    for (let i = top - 1; i >= 0; i--) value = value * q + ((w[i] * scale) % q);
    return this.offsets[top] + value;
  }

  /** Whether <x, v> = 0 for item x and point v. */
  inPlane(item, point) {
    const x = this.pointDigits(item).digits;
    const v = this.pointDigits(point).digits;
    return x.reduce((sum, digit, i) => sum + digit * v[i], 0) % this.fieldSize === 0;
  }

  /** The items whose hyperplane holds point ``point`` (the items a report supports). */
  supported(point) {
    return this.inputs().filter((item) => this.inPlane(item, point));
  }

  /** Exact law over the K points (Python's channel() columns); small K only. */
  channelRow(item) {
    const K = this.outputSize;
    if (K > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`PGR.channelRow enumerates K points; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    return Float64Array.from({ length: K }, (_, point) => this.probability(item, point));
  }

  probability(item, point) {
    const [s, K] = [this.planeSize, this.outputSize];
    return this.inPlane(item, point) ? this.pIn / s : (1 - this.pIn) / (K - s);
  }

  likelihood(row) {
    const point = this.reportIndex(row);
    return Float64Array.from(this.inputs(), (item) => this.probability(item, point));
  }

  describeReport(row) {
    const point = this.reportIndex(row);
    const items = this.supported(point).map((item) => this.labelOf(item));
    return `point ${point} of ${this.outputSize}: supports ${items.length ? items.join(', ') : 'no item'}`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }
}

/** a^n mod m (a, m below 2^23: every product below 2^46, exact). */
function powMod(a, n, m) {
  let result = 1 % m;
  for (let base = a % m, e = n; e > 0; e = Math.floor(e / 2), base = (base * base) % m) if (e % 2) result = (result * base) % m;
  return result;
}
