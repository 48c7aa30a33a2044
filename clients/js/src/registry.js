// The protocols the client implements, built from the JSON config Python's proto.config() writes:
// every protocol module of src/protocols/ (the table src/protocols/_index.js, generated from them).
// This module imports every protocol; an application that needs one imports its module instead
// ('dpdist-client/grr' is src/protocols/grr.js, its class with fromConfig, privatize and
// privatizeRecord), so that its bundle holds that protocol only.

import { buildProtocol } from './config.js';
import { protocols } from './protocols/_index.js';

/** Names of the protocols this client implements. */
export const SUPPORTED_PROTOCOLS = Object.freeze(Object.keys(protocols()).sort());

/**
 * The protocol a config (as written by Python's ``proto.config()``) describes.
 * @param {object|string} config the config object or its JSON text
 */
export function fromConfig(config) {
  return buildProtocol(config, protocols());
}
