// The optimal piecewise mechanism on a circle, "opm-circular" (Zheng, Mishra and Hu, arXiv 2505.15483;
// dpdist.local.numerical.opm): the window wraps around the bounds, one period (the mechanism: _window.js).

import { WindowProtocol } from './_window.js';

export default class CircularOptimalPiecewise extends WindowProtocol {
  static protocol = 'opm-circular';

  constructor(config) {
    super('opm-circular', config, true);
  }

  /** A finite value outside the bounds wraps around the circle (25 h is 1 h), as Python's opm-circular and the Java
   * client do; an infinity is clipped to its bound (this client clipped 25 h to 24 h).  Also the check of
   * an opm-circular attribute of a record (records.js), which Python's records wrap too. */
  checkValue(value, index) {
    return super.checkValue(wrapped(value, this.params.bounds), index);
  }

}

/** ``value`` wrapped into ``[lo, hi]`` when it is a finite number outside it (``lo`` plus its offset modulo the
 * period), else as given. */
export function wrapped(value, [lo, hi]) {
  if (typeof value !== 'number' || !Number.isFinite(value) || (value >= lo && value <= hi)) return value;
  const period = hi - lo;
  return lo + ((((value - lo) % period) + period) % period);
}
