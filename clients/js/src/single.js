// The 1-D protocols of the client (one value per user), by registry name: the attributes' protocols
// (src/attribute-protocols.js) and the heavy-hitter and longitudinal ones.

import { ATTRIBUTE_PROTOCOLS } from './attribute-protocols.js';
import { DBitFlipPM } from './protocols/dbitflippm.js';
import { LOLOHA } from './protocols/loloha.js';
import { LGRR, LOSUE } from './protocols/longitudinal.js';
import { PEM } from './protocols/pem.js';

export const SINGLE = {
  ...ATTRIBUTE_PROTOCOLS,
  pem: PEM,
  'l-grr': LGRR,
  'l-osue': LOSUE,
  loloha: LOLOHA,
  dbitflippm: DBitFlipPM,
};
