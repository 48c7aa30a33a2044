// privatize and privatizeRecord over a ``fromConfig``: the registry's (src/index.js) or one
// protocol's class (Protocol.fromConfig, src/protocols/_base.js).  Two functions, so that a bundle that uses privatize alone
// leaves out the record encoder and the shuffle.

import { secureSource } from './random.js';
import { shuffleBatch } from './shuffle.js';
import { encodeRecord } from './wire.js';

/** The protocol ``config`` is (a protocol object is used as it is). */
function protocolOf(fromConfig, config) {
  return config && typeof config.privatize === 'function' ? config : fromConfig(config);
}

/** ``fromConfig(config).privatize(values, source)``, the source defaulting to the CSPRNG. */
export function privatizeWith(fromConfig, config, values, { source } = {}) {
  return protocolOf(fromConfig, config).privatize(values, source ?? secureSource());
}

/** ``privatizeWith`` then ``encodeRecord``, the reports in a uniformly random order. */
export function privatizeRecordWith(fromConfig, config, values, { source, fileId = null } = {}) {
  const random = source ?? secureSource();
  return encodeRecord(shuffleBatch(privatizeWith(fromConfig, config, values, { source: random }), random), { fileId });
}
