// The protocols the client implements, built from the JSON config Python's proto.config() writes.
// This module imports every protocol; an application that needs one imports its entry point
// instead ('dpdist-client/grr', src/entries/), so that its bundle holds that protocol only.

import { buildProtocol } from './config.js';
import { marginalProtocols } from './protocols/marginals.js';
import { multiProtocols } from './protocols/multi.js';
import { ATTRIBUTE_PROTOCOLS } from './attribute-protocols.js';
import { SINGLE } from './single.js';

/**
 * Every protocol: the 1-D ones, the multi-attribute ones over records of them ("spl", "smp", "rsfd", "rsrfd"),
 * and the marginals and grids over records ("calm", "hdg").
 */
const PROTOCOLS = { ...SINGLE, ...multiProtocols(ATTRIBUTE_PROTOCOLS), ...marginalProtocols(ATTRIBUTE_PROTOCOLS) };

/** Names of the protocols this client implements. */
export const SUPPORTED_PROTOCOLS = Object.freeze(Object.keys(PROTOCOLS).sort());

/**
 * The protocol a config (as written by Python's ``proto.config()``) describes.
 * @param {object|string} config the config object or its JSON text
 */
export function fromConfig(config) {
  return buildProtocol(config, PROTOCOLS);
}
