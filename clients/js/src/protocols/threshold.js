// One threshold question per user, "threshold" (dpdist.local.numerical.threshold): the per-round
// randomizer of adaptive LDP quantiles (Aamand et al., ICML 2025, arXiv:2502.02990).
//
// The bounds are cut into grid_size equal cells; the round publishes ``cuts`` (grid indices). The device
// picks one cut j uniformly (a public coin), computes s = [cell(x) < cuts[j]] and reports the output
// 2j + b, b = s with probability keep, else 1 - s: binary randomized response, keep the largest 2^-53
// grid probability with keep / (1 - keep) <= e^eps (Python's odds_probability(exp_lower(eps))).

import { InvalidParameterError } from '../errors.js';
import { expLower, oddsProbability } from '../grid.js';
import { EPSILON, bounds, integer, optional } from '../params.js';
import { itemReports } from '../format.js';
import { NumericalProtocol } from './_base.js';

const MAX_CUTS = 4096;

/** A list of 1 to 4096 increasing distinct integers >= 1 (as dpdist's ``Cuts`` constraint). */
function cuts() {
  return {
    describe: () => `a list of 1 to ${MAX_CUTS} increasing distinct integers >= 1 (grid indices of the thresholds)`,
    check(value) {
      if (!Array.isArray(value) || value.length < 1 || value.length > MAX_CUTS) throw new RangeError();
      if (!value.every((c) => typeof c === 'number' && Number.isInteger(c))) throw new RangeError();
      if (value[0] < 1 || value.some((c, i) => i > 0 && c <= value[i - 1])) throw new RangeError();
      return [...value];
    },
  };
}

export default class Threshold extends NumericalProtocol {
  static protocol = 'threshold';

  constructor(config) {
    super(
      'threshold',
      config,
      { epsilon: EPSILON, bounds: bounds(), cuts: optional(cuts()), grid_size: integer(2, 2 ** 30), round: integer(0, 2 ** 31 - 1) },
      { bounds: [0.0, 1.0], cuts: null, grid_size: 1024, round: 0 },
    );
    const size = this.params.grid_size;
    if (this.params.cuts === null) this.params.cuts = [Math.max(Math.floor(size / 2), 1)];
    this.config = { ...this.config, cuts: this.params.cuts };
    if (this.params.cuts[this.params.cuts.length - 1] >= size) {
      throw new InvalidParameterError(
        `The 'cuts' parameter of THRESHOLD must lie in [1, grid_size - 1] = [1, ${size - 1}]. Got a largest cut of ${this.params.cuts.at(-1)}.`,
      );
    }
    this.keep = oddsProbability(expLower(this.epsilon));
    this.format = itemReports(2 * this.params.cuts.length);
  }

  /** The grid cell of the unit-interval value u (Python's unit_bin_index). */
  cell(u) {
    return Math.min(Math.trunc(u * this.params.grid_size), this.params.grid_size - 1);
  }

  writeReport(u, source, bytes, view, offset) {
    const j = source.uniformInt(this.params.cuts.length);
    const below = this.cell(u) < this.params.cuts[j];
    const bit = below === source.bernoulli(this.keep) ? 1 : 0; // the truth when kept, its negation otherwise
    this.format.write(view, offset, 0, 2 * j + bit);
  }

  /** Exact law of the report for the unit-interval input u: 1/T times keep or 1 - keep. */
  channelRow(u) {
    const count = this.params.cuts.length;
    const row = new Float64Array(2 * count);
    const cell = this.cell(u);
    for (let j = 0; j < count; j++) {
      const below = cell < this.params.cuts[j];
      row[2 * j + 1] = (below ? this.keep : 1 - this.keep) / count;
      row[2 * j] = (below ? 1 - this.keep : this.keep) / count;
    }
    return row;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }

  /** Inputs of the likelihood: the centres of the grid cells (unit interval). */
  inputs() {
    const size = this.params.grid_size;
    return Array.from({ length: size }, (_, i) => (i + 0.5) / size);
  }

  likelihood(row) {
    const output = this.reportIndex(row);
    return Float64Array.from(this.inputs(), (u) => this.channelRow(u)[output]);
  }

  describeReport(row) {
    const output = this.reportIndex(row);
    const [lo, hi] = this.params.bounds;
    const threshold = lo + (this.params.cuts[output >> 1] * (hi - lo)) / this.params.grid_size;
    return `answers ${output & 1 ? 'yes' : 'no'} (randomized) to "is the value below ${threshold.toPrecision(6)}?"`;
  }
}
