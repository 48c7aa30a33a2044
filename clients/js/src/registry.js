// The protocols the client implements, built from the JSON config Python's proto.config() writes.

import { InvalidParameterError, UnsupportedProtocolError } from './errors.js';
import { CONFIG_VERSION } from './protocols/base.js';
import { DBitFlipPM } from './protocols/dbitflippm.js';
import { GRR } from './protocols/grr.js';
import { HR } from './protocols/hr.js';
import { LOLOHA } from './protocols/loloha.js';
import { LGRR, LOSUE } from './protocols/longitudinal.js';
import { OLH } from './protocols/olh.js';
import { PEM } from './protocols/pem.js';
import { CMS, HCMS } from './protocols/sketch.js';
import { SS } from './protocols/ss.js';
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
};

/** Names of the protocols this client implements. */
export const SUPPORTED_PROTOCOLS = Object.freeze(Object.keys(PROTOCOLS).sort());

/**
 * The protocol a config (as written by Python's ``proto.config()``) describes.
 * @param {object|string} config the config object or its JSON text
 */
export function fromConfig(config) {
  const parsed = typeof config === 'string' ? parseConfigText(config) : config;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || typeof parsed.protocol !== 'string') {
    throw new InvalidParameterError(
      `The 'config' argument must be an object with a 'protocol' key (as written by proto.config()). Got ${JSON.stringify(parsed)}.`,
    );
  }
  const version = parsed.version ?? CONFIG_VERSION;
  if (version !== CONFIG_VERSION) {
    throw new InvalidParameterError(
      `Config version ${JSON.stringify(version)} of protocol '${parsed.protocol}' is not supported (this client reads ${CONFIG_VERSION}).`,
    );
  }
  const Protocol = Object.hasOwn(PROTOCOLS, parsed.protocol) ? PROTOCOLS[parsed.protocol] : null;
  if (Protocol === null) {
    throw new UnsupportedProtocolError(
      `The JavaScript client does not implement protocol '${parsed.protocol}'; it implements ${SUPPORTED_PROTOCOLS.join(', ')}. ` +
        'Use the Python client (dpdist privatize) for it.',
    );
  }
  return new Protocol(parsed);
}

function parseConfigText(text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidParameterError(`The 'config' argument is not valid JSON (${error.message}).`);
  }
}
