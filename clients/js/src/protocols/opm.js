// The optimal piecewise mechanism on an interval, "opm" (Zheng, Mishra and Hu, arXiv 2505.15483;
// dpdist.local.numerical.opm): the window's centre clipped to [w/2, 1 - w/2] (the mechanism: _window.js).

import { WindowProtocol } from './_window.js';

export default class OptimalPiecewise extends WindowProtocol {
  static protocol = 'opm';

  constructor(config) {
    super('opm', config, false);
  }
}
