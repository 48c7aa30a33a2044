// 'dpdist-client/pem': the pem randomizer alone, so that a bundler leaves out every other protocol
// (the whole client is 'dpdist-client').  Same functions as the main entry point, for pem configs only.

import { buildProtocol } from '../config.js';
import { privatizeRecordWith, privatizeWith } from '../privatize.js';
import { PEM } from '../protocols/pem.js';

export { PEM };
export { RandomSource } from '../random.js';
export { ReportBatch } from '../protocols/base.js';
export * from '../errors.js';

/** The name of the protocol this entry point implements. */
export const PROTOCOL = 'pem';

/** The pem protocol a config describes (a config of another protocol is refused). */
export function fromConfig(config) {
  return buildProtocol(config, { 'pem': PEM }, 'dpdist-client/pem');
}

/** Randomize ``values`` under a pem ``config``: one report per value (CSPRNG unless ``source``). */
export function privatize(config, values, options) {
  return privatizeWith(fromConfig, config, values, options);
}

/** ``privatize`` then ``encodeRecord``: one binary report record, its reports in a uniformly random order. */
export function privatizeRecord(config, values, options) {
  return privatizeRecordWith(fromConfig, config, values, options);
}
