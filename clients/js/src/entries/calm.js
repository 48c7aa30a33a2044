// 'dpdist-client/calm': the calm protocol over records, with the oracles its groups use (grr, oue, sue)
// and no other protocol (the whole client is 'dpdist-client').  Same functions as the main entry point,
// for calm configs only.

import { buildProtocol } from '../config.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';
import { GRR } from '../protocols/grr.js';
import { marginalProtocols } from '../protocols/marginals.js';
import { OUE, SUE } from '../protocols/unary.js';

export { RandomSource } from '../random.js';
export { ReportBatch } from '../protocols/base.js';
export * from '../errors.js';

/** The name of the protocol this entry point implements. */
export const PROTOCOL = 'calm';

const TABLE = { calm: marginalProtocols({ grr: GRR, oue: OUE, sue: SUE }).calm };

/** The calm protocol a config describes (a config of another protocol is refused). */
export function fromConfig(config) {
  return buildProtocol(config, TABLE, 'dpdist-client/calm');
}

/** Randomize ``records`` under a calm ``config``: one report per record (CSPRNG unless ``source``). */
export function privatize(config, records, options) {
  return privatizeWith(fromConfig, config, records, options);
}

/** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
export function privatizeRecord(config, records, options) {
  return privatizeRecordWith(fromConfig, config, records, options);
}
