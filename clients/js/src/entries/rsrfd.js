// 'dpdist-client/rsrfd': the rsrfd protocol over records, with the 1-D protocols its attributes may use
// (src/attribute-protocols.js) and no other (the whole client is 'dpdist-client').  Same functions as the
// main entry point, for rsrfd configs only.

import { ATTRIBUTE_PROTOCOLS } from '../attribute-protocols.js';
import { buildProtocol } from '../config.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';
import { multiProtocols } from '../protocols/multi.js';

export { RandomSource } from '../random.js';
export { ReportBatch } from '../protocols/base.js';
export * from '../errors.js';

/** The name of the protocol this entry point implements. */
export const PROTOCOL = 'rsrfd';

const TABLE = { rsrfd: multiProtocols(ATTRIBUTE_PROTOCOLS).rsrfd };

/** The rsrfd protocol a config describes (a config of another protocol is refused). */
export function fromConfig(config) {
  return buildProtocol(config, TABLE, 'dpdist-client/rsrfd');
}

/** Randomize ``records`` under a rsrfd ``config``: one report per record (CSPRNG unless ``source``). */
export function privatize(config, records, options) {
  return privatizeWith(fromConfig, config, records, options);
}

/** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
export function privatizeRecord(config, records, options) {
  return privatizeRecordWith(fromConfig, config, records, options);
}
