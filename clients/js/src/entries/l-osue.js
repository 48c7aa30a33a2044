// 'dpdist-client/l-osue': the l-osue randomizer alone, so that a bundler leaves out every other protocol
// (the whole client is 'dpdist-client').  Same functions as the main entry point, for l-osue configs only.

import { buildProtocol } from '../config.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';
import { LOSUE } from '../protocols/longitudinal.js';

export { LOSUE };
export { RandomSource } from '../random.js';
export { ReportBatch } from '../protocols/base.js';
export * from '../errors.js';

/** The name of the protocol this entry point implements. */
export const PROTOCOL = 'l-osue';

/** The l-osue protocol a config describes (a config of another protocol is refused). */
export function fromConfig(config) {
  return buildProtocol(config, { 'l-osue': LOSUE }, 'dpdist-client/l-osue');
}

/** Randomize ``values`` under a l-osue ``config``: one report per value (CSPRNG unless ``source``). */
export function privatize(config, values, options) {
  return privatizeWith(fromConfig, config, values, options);
}

/** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
export function privatizeRecord(config, values, options) {
  return privatizeRecordWith(fromConfig, config, values, options);
}
