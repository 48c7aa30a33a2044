// 'dpdist-client/threshold': the threshold randomizer alone, so that a bundler leaves out every other protocol
// (the whole client is 'dpdist-client').  Same functions as the main entry point, for threshold configs only.

import { buildProtocol } from '../config.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';
import { Threshold } from '../protocols/threshold.js';

export { Threshold };
export { RandomSource } from '../random.js';
export { ReportBatch } from '../protocols/base.js';
export * from '../errors.js';

/** The name of the protocol this entry point implements. */
export const PROTOCOL = 'threshold';

/** The threshold protocol a config describes (a config of another protocol is refused). */
export function fromConfig(config) {
  return buildProtocol(config, { 'threshold': Threshold }, 'dpdist-client/threshold');
}

/** Randomize ``values`` under a threshold ``config``: one report per value (CSPRNG unless ``source``). */
export function privatize(config, values, options) {
  return privatizeWith(fromConfig, config, values, options);
}

/** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
export function privatizeRecord(config, values, options) {
  return privatizeRecordWith(fromConfig, config, values, options);
}
