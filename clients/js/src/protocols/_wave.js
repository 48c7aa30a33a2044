// The wave mechanisms, the base of square wave "sw" (sw.js) and general wave "gw" (gw.js) (paper 003,
// Li et al. SIGMOD 2020, sec. 5;
// dpdist.local.numerical.square_wave, general_wave, _wave_shape, _wave_grid, _wave_discrete).
//
// R-B ("randomize before bucketize", the default): a value u in [0, 1] becomes the index of the
// public output bucket of [-b, 1 + b] (``output_bins`` equal buckets) holding u + Z.  The wave
// W = q + lambda g is sampled as a mixture: with probability 1 - lambda (exact Bernoulli) a
// uniform bucket (exact uniform integer), otherwise the bucket of u + Z with Z from the bump g
// (one uniform for the square wave, a sum of two for trapezoids), using NumPy's 53-bit uniform
// grid and the same float operations as the Python sampler, so the bump part's law is exactly
// Python's privatize law; within ~1 ulp of a bucket edge it can differ from the real-arithmetic
// bucket masses of ``channel()`` by ~2^-52 relative (documented there too).  The exact law of this
// sampler is enumerable: the bucket is a non-decreasing function of the 53-bit integer k, so each
// bucket is a range of k found by bisection (``channelRow``).
//
// B-R (``discrete: true``): the value's bucket i = min(floor(u bins), bins - 1); with probability
// lambda a uniform index of the window [i, i + 2m], else a uniform index of all bins + 2m.  Exact.

import { InvalidParameterError } from '../errors.js';
import { addGridLaw, mixtureKeep, times } from '../grid.js';
import { exp, expm1 } from '../libm.js';
import { EPSILON, bounds, integer, interval, optional } from '../params.js';
import { itemReports } from '../format.js';
import { NumericalProtocol } from './_base.js';

export const MAX_BINS = 4096;
const GRID = 9007199254740992; // 2^53

/** ``mutual_information_b`` of _wave_shape.py (paper 003, sec. 5.3), operation for operation. */
export function mutualInformationB(epsilon) {
  if (epsilon < 1.0) {
    let numerator = 0.0;
    let denominator = 0.0;
    let term = 1.0;
    for (let k = 1; k < 40; k++) {
      term *= epsilon / k;
      if (k >= 2) {
        numerator += (k - 1) * term;
        denominator += term;
      }
    }
    return numerator / (2.0 * exp(epsilon) * denominator);
  }
  if (epsilon > 700.0) return 0.0;
  return (epsilon - 1.0 + exp(-epsilon)) / (2.0 * (expm1(epsilon) - epsilon));
}

export const WAVE_RULES = {
  epsilon: EPSILON,
  bounds: bounds(),
  bins: integer(2, MAX_BINS),
  output_bins: optional(integer(2, MAX_BINS)),
  b: optional(interval(0, Infinity)),
};
export const WAVE_DEFAULTS = { bounds: [0.0, 1.0], bins: 1024, output_bins: null, b: null };

/** The wave mechanisms' base: the R-B grid of a trapezoid bump, the B-R window, their exact laws. */
export class WaveProtocol extends NumericalProtocol {
  /** Set up the R-B grid for a trapezoid of half-width b and top/bottom ratio r (1: square). */
  setupGrid(b, ratio) {
    this.halfWidths = [(b * (1.0 + ratio)) / 2.0, (b * (1.0 - ratio)) / 2.0];
    // lambda on the 2^-53 grid: density ratio 1 + lambda (1 + 2b) / (2 a1 (1 - lambda)) <= e^eps, with
    // 2 a1 shrunk by 1 - 2^-30 for the float64 bump sampling (Python's WaveShape; grid.js)
    const kept = times(2 * this.halfWidths[0], [(1n << 30n) - 1n, 1n << 30n]);
    const [twiceB, denominator] = times(2, b);
    this.weight = mixtureKeep(this.epsilon, kept, [denominator + twiceB, denominator]); // outputs: 1 + 2b
    this.b = b;
    this.discrete = false;
    this.buckets = this.params.output_bins || this.params.bins;
    this.width = (1.0 + 2.0 * b) / this.buckets;
    this.setupLayout();
  }

  setupLayout() {
    this.format = itemReports(this.buckets);
  }

  /** The bump bucket of u for the 53-bit uniforms u1, u2 (Python's sample, op for op). */
  bumpBucket(u, u1, u2) {
    const [a1, a2] = this.halfWidths;
    let offset = a1 * (2.0 * u1 - 1.0);
    if (a2 > 0.0) offset += a2 * (2.0 * u2 - 1.0);
    const position = u + offset;
    const bucket = Math.floor((position + this.b) / this.width);
    return Math.min(Math.max(bucket, 0), this.buckets - 1);
  }

  inputBucket(u) {
    return Math.min(Math.trunc(u * this.params.bins), this.params.bins - 1);
  }

  writeReport(u, source, bytes, view, offset) {
    // both branches' draws and arithmetic happen either way: the work must not tell whether the wave kept u
    const kept = source.bernoulli(this.weight);
    let near;
    if (this.discrete) {
      near = this.inputBucket(u) + source.uniformInt(this.window);
    } else {
      const u1 = source.uniform53();
      const u2 = this.halfWidths[1] > 0 ? source.uniform53() : 0;
      near = this.bumpBucket(u, u1, u2);
    }
    const other = source.uniformInt(this.buckets);
    this.format.write(view, offset, 0, kept ? near : other);
  }

  /**
   * Exact law of the report for the unit-interval input u, over the buckets.
   * R-B square wave: bisection over the 2^53 uniform grid; trapezoids are not enumerable.
   */
  channelRow(u) {
    const row = new Float64Array(this.buckets).fill((1 - this.weight) / this.buckets);
    if (this.discrete) {
      const start = this.inputBucket(u);
      for (let j = start; j < start + this.window; j++) row[j] += this.weight / this.window;
      return row;
    }
    if (this.halfWidths[1] > 0) throw new InvalidParameterError(`${this.display}.channelRow is only enumerable for the square wave.`);
    // bucket(k) is non-decreasing in k: each bucket is a range of k (grid.js)
    addGridLaw(row, this.weight, (k) => this.bumpBucket(u, k / GRID, 0));
    return row;
  }

  describeReport(row) {
    const j = this.reportIndex(row);
    const [lo, hi] = this.params.bounds;
    const scale = (u) => lo + u * (hi - lo);
    if (this.discrete) {
      const first = Math.max(j - 2 * this.halfWidth, 0); // input buckets whose window holds j
      const last = Math.min(j, this.params.bins - 1);
      const bins = this.params.bins;
      return `output bucket ${j} of ${this.buckets}, in the window of values ${scale(first / bins).toPrecision(4)} to ${scale((last + 1) / bins).toPrecision(4)}`;
    }
    const low = -this.b + this.width * j;
    return `output bucket ${j} of ${this.buckets}: [${scale(low).toPrecision(4)}, ${scale(low + this.width).toPrecision(4)})`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }

  /** Inputs of the likelihood: the centres of the ``bins`` input bins (unit interval). */
  inputs() {
    const bins = this.params.bins;
    return Array.from({ length: bins }, (_, i) => (i + 0.5) / bins);
  }

  /** Pr[report | value at each input bin centre]. */
  likelihood(row) {
    const output = this.reportIndex(row);
    const uniform = (1 - this.weight) / this.buckets;
    return Float64Array.from(this.inputs(), (u) => {
      if (this.discrete) {
        const start = this.inputBucket(u);
        return uniform + (output >= start && output < start + this.window ? this.weight / this.window : 0);
      }
      // bump mass of bucket [e_j, e_j+1) for a square or trapezoid bump, by its CDF
      const lowEdge = -this.b + this.width * output;
      const highEdge = output === this.buckets - 1 ? 1.0 + this.b : -this.b + this.width * (output + 1);
      return uniform + this.weight * (this.bumpCdf(highEdge - u) - this.bumpCdf(lowEdge - u));
    });
  }

  /** CDF of the bump (the density of U1 + U2, Ui uniform on [-ai, ai]). */
  bumpCdf(x) {
    const [a1, a2] = this.halfWidths;
    if (x <= -(a1 + a2)) return 0;
    if (x >= a1 + a2) return 1;
    if (a2 === 0) return (x + a1) / (2 * a1);
    const t2 = (y) => (y > 0 ? (y * y) / 2 : 0);
    return (t2(x + a1 + a2) - t2(x + a1 - a2) - t2(x - a1 + a2) + t2(x - a1 - a2)) / (4 * a1 * a2);
  }
}
