// The protocols the client implements, built from the JSON config Python's proto.config() writes.
// This module imports every protocol; an application that needs one imports its entry point
// instead ('dpdist-client/grr', src/entries/), so that its bundle holds that protocol only.

import { buildProtocol } from './config.js';
import { DBitFlipPM } from './protocols/dbitflippm.js';
import { GRR } from './protocols/grr.js';
import { HR } from './protocols/hr.js';
import { LOLOHA } from './protocols/loloha.js';
import { LGRR, LOSUE } from './protocols/longitudinal.js';
import { OLH } from './protocols/olh.js';
import { PEM } from './protocols/pem.js';
import { CMS, HCMS } from './protocols/sketch.js';
import { SS } from './protocols/ss.js';
import { Threshold } from './protocols/threshold.js';
import { OUE, SUE } from './protocols/unary.js';
import { GeneralWave, SquareWave } from './protocols/wave.js';

const PROTOCOLS = {
  grr: GRR,
  oue: OUE,
  sue: SUE,
  olh: OLH,
  hr: HR,
  ss: SS,
  sw: SquareWave,
  gw: GeneralWave,
  pem: PEM,
  'l-grr': LGRR,
  'l-osue': LOSUE,
  loloha: LOLOHA,
  dbitflippm: DBitFlipPM,
  cms: CMS,
  hcms: HCMS,
  threshold: Threshold,
};

/** Names of the protocols this client implements. */
export const SUPPORTED_PROTOCOLS = Object.freeze(Object.keys(PROTOCOLS).sort());

/**
 * The protocol a config (as written by Python's ``proto.config()``) describes.
 * @param {object|string} config the config object or its JSON text
 */
export function fromConfig(config) {
  return buildProtocol(config, PROTOCOLS);
}
