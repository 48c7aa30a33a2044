// The 1-D protocols a record's attribute may be randomized with (Python's categorical_protocols and
// numerical_protocols that this client implements), by registry name: the table of the
// multi-attribute protocols (src/protocols/multi.js) in the registry and in their entry points.

import { HR } from './protocols/hr.js';
import { GRR } from './protocols/grr.js';
import { OLH } from './protocols/olh.js';
import { CMS, HCMS } from './protocols/sketch.js';
import { SS } from './protocols/ss.js';
import { Threshold } from './protocols/threshold.js';
import { OUE, SUE } from './protocols/unary.js';
import { GeneralWave, SquareWave } from './protocols/wave.js';
import { CircularOptimalPiecewise, OptimalPiecewise } from './protocols/window.js';

export const ATTRIBUTE_PROTOCOLS = {
  grr: GRR,
  oue: OUE,
  sue: SUE,
  olh: OLH,
  hr: HR,
  ss: SS,
  cms: CMS,
  hcms: HCMS,
  sw: SquareWave,
  gw: GeneralWave,
  opm: OptimalPiecewise,
  'opm-circular': CircularOptimalPiecewise,
  threshold: Threshold,
};
