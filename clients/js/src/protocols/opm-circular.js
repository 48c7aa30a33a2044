// The optimal piecewise mechanism on a circle, "opm-circular" (Zheng, Mishra and Hu, arXiv 2505.15483;
// dpdist.local.numerical.opm): the window wraps around the bounds, one period (the mechanism: _window.js).

import { WindowProtocol } from './_window.js';

export default class CircularOptimalPiecewise extends WindowProtocol {
  static protocol = 'opm-circular';

  constructor(config) {
    super('opm-circular', config, true);
  }
}
