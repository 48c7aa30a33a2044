// Type declarations of the one-protocol entry points 'dpdist-client/<name>' (src/entries/<name>.js):
// the same functions as 'dpdist-client', for configs of that protocol only.

import type { ClientView, Protocol, ProtocolConfig, RandomSource, RecordValue, ReportBatch } from './index.js';

export {
  DPDistError,
  IncompatibleStateError,
  InvalidParameterError,
  InvalidValueTypeError,
  OutOfDomainError,
  RandomSource,
  ReportBatch,
  UnsupportedProtocolError,
} from './index.js';

/** The registry name of the protocol of this entry point ("grr", "oue", ...). */
export const PROTOCOL: string;

/** The protocol a config (object, client view or JSON text) describes; a config of another protocol is refused. */
export function fromConfig(config: ProtocolConfig | ClientView | string): Protocol;

/** Randomize ``values``: one report per value (crypto.getRandomValues unless ``source``). */
export function privatize(
  config: ProtocolConfig | string | Protocol,
  values: ArrayLike<number | string | bigint | RecordValue>,
  options?: { source?: RandomSource },
): ReportBatch;

/** ``privatize`` then ``encodeRecord``, the record's reports in a uniformly random order. */
export function privatizeRecord(
  config: ProtocolConfig | string | Protocol,
  values: ArrayLike<number | string | bigint | RecordValue>,
  options?: { source?: RandomSource; fileId?: string | null },
): Uint8Array;
