// 'dpdist-client/hcms': the hcms randomizer alone, so that a bundler leaves out every other protocol
// (the whole client is 'dpdist-client').  Same functions as the main entry point, for hcms configs only.

import { buildProtocol } from '../config.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';
import { HCMS } from '../protocols/sketch.js';

export { HCMS };
export { RandomSource } from '../random.js';
export { ReportBatch } from '../protocols/base.js';
export * from '../errors.js';

/** The name of the protocol this entry point implements. */
export const PROTOCOL = 'hcms';

/** The hcms protocol a config describes (a config of another protocol is refused). */
export function fromConfig(config) {
  return buildProtocol(config, { 'hcms': HCMS }, 'dpdist-client/hcms');
}

/** Randomize ``values`` under a hcms ``config``: one report per value (CSPRNG unless ``source``). */
export function privatize(config, values, options) {
  return privatizeWith(fromConfig, config, values, options);
}

/** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
export function privatizeRecord(config, values, options) {
  return privatizeRecordWith(fromConfig, config, values, options);
}
