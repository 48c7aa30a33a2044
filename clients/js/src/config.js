// Protocols from their JSON config (as Python's proto.config() writes it), against a table of
// the protocol classes an entry point offers: the whole registry (src/registry.js) or one protocol
// (its class's fromConfig, src/protocols/_base.js), so that a bundle holds only the protocols it imports.

import { InvalidParameterError, UnsupportedProtocolError } from './errors.js';
import { shown } from './shown.js';

/** The version of the protocol configs this client reads and writes (Python's ``CONFIG_VERSION``). */
export const CONFIG_VERSION = 1;

/**
 * The protocol ``config`` describes, built with the class ``table[config.protocol]``.
 *
 * ``config`` may also be a collector's client view (Python's ``protocol.client_view()``: ``{config,
 * format, design}``, published by dpdist serve with each campaign): the protocol of its config,
 * once the view's format and design constants are checked against this client's own derivation
 * (``Protocol.checkView``; a view that differs is refused).
 * @param {object|string} config the config object, a client view, or its JSON text
 * @param {Record<string, Function>} table protocol name -> class
 * @param {string} [where] the entry point, named when the protocol is not in ``table``
 */
export function buildProtocol(config, table, where = 'dpdist-client') {
  const parsed = typeof config === 'string' ? parseConfigText(config) : config;
  if (isClientView(parsed)) {
    const protocol = buildProtocol(parsed.config, table, where);
    protocol.checkView(parsed);
    return protocol;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || typeof parsed.protocol !== 'string') {
    throw new InvalidParameterError(
      `The 'config' argument must be an object with a 'protocol' key (as written by proto.config()). Got ${JSON.stringify(parsed)}.`,
    );
  }
  const version = Object.hasOwn(parsed, 'version') ? parsed.version : CONFIG_VERSION; // null is no version (Python's)
  if (version !== CONFIG_VERSION) {
    throw new InvalidParameterError(
      `Config version ${shown(JSON.stringify(version) ?? String(version))} of protocol '${shown(parsed.protocol)}' is `
        + `not supported (this client reads ${CONFIG_VERSION}).`,
    );
  }
  const Protocol = Object.hasOwn(table, parsed.protocol) ? table[parsed.protocol] : null;
  if (Protocol === null) {
    const names = Object.keys(table).sort().join(', ');
    const named = `'${shown(parsed.protocol)}'`; // a collector's text: escaped and cut
    throw new UnsupportedProtocolError(
      where === 'dpdist-client'
        ? `The JavaScript client does not implement protocol ${named}; it implements ${names}. ` +
            'If dpdist has it, use the Python client (dpdist privatize) for it.'
        : `The entry point '${where}' implements only ${names}; the config names ${named} ` +
            "(import 'dpdist-client', or its own entry point, for it).",
    );
  }
  try {
    return new Protocol(parsed);
  } catch (error) {
    // a number past what double precision computes with (sw's b = 1e308: Infinity in a derived constant) is the
    // config's, not a bug of this client (Python says InvalidParameterError too)
    if (!(error instanceof RangeError)) throw error;
    throw new InvalidParameterError(`The config of protocol '${shown(parsed.protocol)}' holds a number this client cannot compute `
      + `with: ${shown(error.message)}.`);
  }
}

function parseConfigText(text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidParameterError(`The 'config' argument is not valid JSON (${error.message}).`);
  }
}

/** Whether ``value`` is a client view ``{config, format, design}`` rather than a config. */
export function isClientView(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !('protocol' in value) &&
    typeof value.config === 'object' && typeof value.format === 'object';
}
