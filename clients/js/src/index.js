// dpdist client: randomize on the user's device with the same mechanisms, config and wire format
// as the Python aggregator of dpdist.  This entry point holds every protocol; 'dpdist-client/<name>'
// (src/protocols/<name>.js, the protocol's class) holds one, for bundles that need one.

import { privatizeRecordWith, privatizeWith } from './privatize.js';
import { fromConfig } from './registry.js';

export * from './errors.js';
export { RandomSource } from './random.js';
export { ReportBatch } from './protocols/_base.js';
export { encodeRecord, crc32, newFileId, recordHeader } from './wire.js';
export { SUPPORTED_PROTOCOLS, fromConfig } from './registry.js';
export { Client, LEDGER_KEY, ServiceError } from './client.js';
export { TOKENS_KEY } from './tokens.js';
export { ACK_ANSWER_BYTES, MAX_ANSWER_BYTES } from './answer.js';
export { DEFAULT_BUDGET, Ledger, PrivacyBudgetError, budgetScope, historyEpsilon, normalCollector } from './ledger.js';
export { Memo, isLongitudinal } from './protocols/_longitudinal.js';
export { permutation, shuffleBatch, shuffled } from './shuffle.js';
export { Participation, ReportAlreadyDrawnError, participationKey } from './participation.js';
export { consentText, guessBound, guessOdds, percent } from './odds.js';

/**
 * Randomize ``values`` under ``config``: one report per value.
 * @param {object|string} config
 * @param {ArrayLike<number>} values items 0..d-1 (frequency protocols) or reals in bounds
 * @param {{source?: RandomSource}} [options] ``source`` only for tests: default crypto.getRandomValues
 */
export function privatize(config, values, options) {
  return privatizeWith(fromConfig, config, values, options);
}

/**
 * ``privatize`` then ``encodeRecord``: the bytes of one binary report record, its reports in a
 * uniformly random order (not the order of ``values``: a record is what leaves the device).
 * @param {{source?: RandomSource, fileId?: string|null}} [options]
 */
export function privatizeRecord(config, values, options) {
  return privatizeRecordWith(fromConfig, config, values, options);
}

