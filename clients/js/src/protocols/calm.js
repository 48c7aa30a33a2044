// Consistent marginals, "calm" (Zhang, Wang, Li, He, Chen, CCS 2018; dpdist.local.multi.calm): a group per
// ``order``-subset of the categorical attributes, each group's cells reported through GRR, OUE or SUE (the
// groups and their oracles: _marginals.js).

import GRR from './grr.js';
import OUE from './oue.js';
import SUE from './sue.js';
import { ConsistentMarginals } from './_marginals.js';

/** The oracles a group may use (``oracle``: "auto" picks GRR or OUE by the number of cells). */
const ORACLES = { grr: GRR, oue: OUE, sue: SUE };

export default class CALM extends ConsistentMarginals {
  static protocol = 'calm';

  constructor(config) {
    super(config, ORACLES);
  }
}
