// Hybrid grids, "hdg" (Yang, Wang, Li, Cheng, Su, PVLDB 2020; dpdist.local.multi.hdg): 2-D grids of pairs of
// numerical attributes and (``hybrid``) 1-D grids, each group's cells reported through GRR, OUE or SUE (the
// grids, their granularity guideline and their oracles: _marginals.js).

import GRR from './grr.js';
import OUE from './oue.js';
import SUE from './sue.js';
import { HybridGrids } from './_marginals.js';

/** The oracles a group may use (``oracle``: "auto" picks GRR or OUE by the number of cells). */
const ORACLES = { grr: GRR, oue: OUE, sue: SUE };

export default class HDG extends HybridGrids {
  static protocol = 'hdg';

  constructor(config) {
    super(config, ORACLES);
  }
}
