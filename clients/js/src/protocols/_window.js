// The optimal piecewise mechanism of Zheng, Mishra and Hu (arXiv 2505.15483; dpdist.local.numerical.opm,
// _window_grid), the base of "opm" (opm.js, the interval) and "opm-circular" (opm-circular.js, the circle).
//
// A value u of the unit domain becomes the index of one of ``bins`` equal public buckets of the domain
// itself.  Mixture sampling: with probability 1 - weight (exact Bernoulli) a uniform bucket (exact
// uniform integer), otherwise the bucket of c + Z, Z = (w/2)(2 U - 1) with U one 53-bit uniform and c the
// window's centre: u wrapped around the circle (position - floor(position)), or clip(u, w/2, 1 - w/2)
// on the interval.  The float operations are Python's sampler's, so the window part's law is exactly
// Python's privatize law (within ~1 ulp of a bucket edge it can differ from the real-arithmetic
// bucket masses of channel() by ~2^-52 relative).  Its exact law is enumerable: the (unwrapped) bucket
// is a non-decreasing function of the 53-bit integer k, so each bucket is a range of k (``channelRow``).

import { addGridLaw, mixtureKeep, times } from '../grid.js';
import { exp } from '../libm.js';
import { EPSILON, bounds, integer, interval, optional } from '../params.js';
import { itemReports } from '../format.js';
import { NumericalProtocol } from './_base.js';

const MAX_BINS = 4096;
const GRID = 9007199254740992; // 2^53

/** ``optimal_window`` of _window_grid.py: 1 / (e^{eps/2} + 1), as e^{-eps/2} / (1 + e^{-eps/2}). */
export function optimalWindow(epsilon) {
  const root = exp(-epsilon / 2.0);
  return root / (1.0 + root);
}

const RULES = { epsilon: EPSILON, bounds: bounds(), bins: integer(2, MAX_BINS), window: optional(interval(0, 1)) };
const DEFAULTS = { bounds: [0.0, 1.0], bins: 1024, window: null };

/** The optimal piecewise mechanism on the interval (``circular`` false) or on the circle. */
export class WindowProtocol extends NumericalProtocol {
  constructor(name, config, circular) {
    super(name, config, RULES, DEFAULTS);
    this.circular = circular;
    this.window = this.params.window === null ? optimalWindow(this.epsilon) : this.params.window;
    this.half = this.window / 2.0;
    this.buckets = this.params.bins;
    // weight on the 2^-53 grid: density ratio 1 + weight / (w (1 - weight)) <= e^eps, w shrunk by
    // 1 - 2^-30 for the float64 window sampling (Python's _WindowGrid; grid.js)
    this.weight = mixtureKeep(this.epsilon, times(this.window, [(1n << 30n) - 1n, 1n << 30n]), 1);
    this.format = itemReports(this.buckets);
  }

  /** Python's ``floor(position * buckets)`` clipped into the buckets. */
  bucketOf(position) {
    return Math.min(Math.max(Math.floor(position * this.buckets), 0), this.buckets - 1);
  }

  /** ``[turns, bucket]`` of the window draw U = k / 2^53 (turns: whole periods wrapped, circle only). */
  place(u, k) {
    const offset = this.half * (2.0 * (k / GRID) - 1.0);
    if (!this.circular) return [0, this.bucketOf(Math.min(Math.max(u, this.half), 1.0 - this.half) + offset)];
    const raw = u + offset;
    const turns = Math.floor(raw);
    return [turns, this.bucketOf(raw - turns)];
  }

  writeReport(u, source, bytes, view, offset) {
    // both branches' draws and arithmetic happen either way: the work must not tell whether u was kept
    const kept = source.bernoulli(this.weight);
    const near = this.place(u, source.uniform53() * GRID)[1];
    const other = source.uniformInt(this.buckets);
    this.format.write(view, offset, 0, kept ? near : other);
  }

  /** Exact law of the report for the unit-domain input u: bisection over the 2^53 uniform grid. */
  channelRow(u) {
    const buckets = this.buckets;
    const row = new Float64Array(buckets).fill((1 - this.weight) / buckets);
    // turns * buckets + bucket is non-decreasing in k, also across the wrap: each is a range of k (grid.js)
    const key = (k) => {
      const [turns, bucket] = this.place(u, k);
      return turns * buckets + bucket;
    };
    addGridLaw(row, this.weight, key, (j) => ((j % buckets) + buckets) % buckets);
    return row;
  }

  describeReport(row) {
    const j = this.reportIndex(row);
    const [lo, hi] = this.params.bounds;
    const scale = (u) => lo + u * (hi - lo);
    return `output bucket ${j} of ${this.buckets}: [${scale(j / this.buckets).toPrecision(4)}, ${scale((j + 1) / this.buckets).toPrecision(4)})`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }

  /** Inputs of the likelihood: the centres of the ``bins`` input bins (unit domain). */
  inputs() {
    return Array.from({ length: this.buckets }, (_, i) => (i + 0.5) / this.buckets);
  }

  /** Pr[report | value at each input bin centre], from the window's CDF (real arithmetic). */
  likelihood(row) {
    const output = this.reportIndex(row);
    const low = output / this.buckets;
    const high = (output + 1) / this.buckets;
    const cdf = (x) => Math.min(Math.max((x + this.half) / this.window, 0), 1);
    const shifts = this.circular ? [-1, 0, 1] : [0];
    return Float64Array.from(this.inputs(), (u) => {
      const centre = this.circular ? u : Math.min(Math.max(u, this.half), 1.0 - this.half);
      const mass = shifts.reduce((total, s) => total + cdf(high - centre - s) - cdf(low - centre - s), 0);
      return (1 - this.weight) / this.buckets + this.weight * mass;
    });
  }
}
