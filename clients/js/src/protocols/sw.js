// Square wave, "sw" (paper 003, Li et al. SIGMOD 2020, sec. 5; dpdist.local.numerical.square_wave): R-B
// with a square bump of half-width b (the mutual-information rule unless given), or B-R (``discrete``)
// with a window of 2 floor(b bins) + 1 buckets (the grids and their exact laws: _wave.js).

import { InvalidParameterError } from '../errors.js';
import { mixtureKeep } from '../grid.js';
import { boolean } from '../params.js';
import { MAX_BINS, WAVE_DEFAULTS, WAVE_RULES, WaveProtocol, mutualInformationB } from './_wave.js';

export default class SquareWave extends WaveProtocol {
  static protocol = 'sw';

  constructor(config) {
    super('sw', config, { ...WAVE_RULES, discrete: boolean() }, { ...WAVE_DEFAULTS, discrete: false });
    const { bins } = this.params;
    let b = this.params.b;
    b = b === null ? mutualInformationB(this.epsilon) : b;
    if (this.params.discrete) {
      if (this.params.output_bins !== null) {
        throw new InvalidParameterError(
          `The 'output_bins' parameter of SW must be None (null) when discrete=true (the discrete square wave has bins + 2*floor(b*bins) outputs). Got ${this.params.output_bins} instead.`,
        );
      }
      const halfWidth = Math.floor(b * bins);
      if (bins + 2 * halfWidth > MAX_BINS) {
        throw new InvalidParameterError(
          `The 'b' parameter of SW with discrete=true gives bins + 2*floor(b*bins) = ${bins + 2 * halfWidth} output buckets; at most ${MAX_BINS} are allowed. Got b=${b}.`,
        );
      }
      this.discrete = true;
      this.halfWidth = halfWidth;
      this.window = 2 * halfWidth + 1;
      this.buckets = bins + 2 * halfWidth;
      this.weight = mixtureKeep(this.epsilon, this.window, this.buckets); // on the 2^-53 grid (grid.js)
      this.setupLayout();
      return;
    }
    if (!(b > 0)) {
      throw new InvalidParameterError(
        `The 'epsilon' parameter of SW gives b = 0 by the mutual-information rule; pass b > 0 explicitly. Got epsilon=${this.epsilon}.`,
      );
    }
    this.setupGrid(b, 1.0);
  }
}
