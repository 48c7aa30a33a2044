// General wave, "gw" (paper 003, Li et al. SIGMOD 2020, sec. 5; dpdist.local.numerical.general_wave): R-B with
// a trapezoid (or triangle) bump of half-width b and top/bottom ratio r (the grid and its law: _wave.js).

import { InvalidParameterError } from '../errors.js';
import { interval, optional, options } from '../params.js';
import { WAVE_DEFAULTS, WAVE_RULES, WaveProtocol, mutualInformationB } from './_wave.js';

export default class GeneralWave extends WaveProtocol {
  static protocol = 'gw';

  constructor(config) {
    super(
      'gw',
      config,
      { ...WAVE_RULES, shape: options(['trapezoid', 'triangle']), ratio: optional(interval(0, 1)) },
      { ...WAVE_DEFAULTS, shape: 'trapezoid', ratio: null },
    );
    const { shape, ratio } = this.params;
    if (shape === 'triangle' && ratio !== null) {
      throw new InvalidParameterError(
        `The 'ratio' parameter of GW must be None (null) when shape='triangle' (a triangle has ratio 0). Got ${ratio} instead.`,
      );
    }
    const r = shape === 'triangle' ? 0.0 : ratio === null ? 0.5 : ratio;
    const b = this.params.b === null ? mutualInformationB(this.epsilon) : this.params.b;
    if (!(b > 0)) {
      throw new InvalidParameterError(
        `The 'epsilon' parameter of GW gives b = 0 by the mutual-information rule; pass b > 0 explicitly. Got epsilon=${this.epsilon}.`,
      );
    }
    this.setupGrid(b, r);
  }
}
