// 'dpdist-client/opm': the opm randomizer alone, so that a bundler leaves out every other protocol
// (the whole client is 'dpdist-client').  Same functions as the main entry point, for opm configs only.

import { buildProtocol } from '../config.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';
import { OptimalPiecewise } from '../protocols/window.js';

export { OptimalPiecewise };
export { RandomSource } from '../random.js';
export { ReportBatch } from '../protocols/base.js';
export * from '../errors.js';

/** The name of the protocol this entry point implements. */
export const PROTOCOL = 'opm';

/** The opm protocol a config describes (a config of another protocol is refused). */
export function fromConfig(config) {
  return buildProtocol(config, { 'opm': OptimalPiecewise }, 'dpdist-client/opm');
}

/** Randomize ``values`` under an opm ``config``: one report per value (CSPRNG unless ``source``). */
export function privatize(config, values, options) {
  return privatizeWith(fromConfig, config, values, options);
}

/** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
export function privatizeRecord(config, values, options) {
  return privatizeRecordWith(fromConfig, config, values, options);
}
