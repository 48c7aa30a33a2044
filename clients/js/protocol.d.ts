// Type declarations of a protocol module 'dpdist-client/<name>' (src/protocols/<name>.js): its default export is
// the protocol's class, with the functions of the main entry point for that protocol's configs only.

import type { ClientView, KeyValueSet, Protocol, ProtocolConfig, RandomSource, RecordValue, ReportBatch } from './index.js';

/** A protocol's class: ``new`` from a parsed config, or the entry point's functions on it. */
export interface ProtocolClass {
  /** The registry name of the protocol ("grr", "oue", ...). */
  readonly protocol: string;
  new (config: ProtocolConfig): Protocol;
  /** The protocol a config (object, client view or JSON text) describes; a config of another protocol is refused. */
  fromConfig(config: ProtocolConfig | ClientView | string): Protocol;
  /** Randomize ``values``: one report per value (crypto.getRandomValues unless ``source``). */
  privatize(
    config: ProtocolConfig | string | Protocol,
    values: ArrayLike<number | string | bigint | RecordValue | KeyValueSet>,
    options?: { source?: RandomSource },
  ): ReportBatch;
  /** ``privatize`` then ``encodeRecord``, the record's reports in a uniformly random order. */
  privatizeRecord(
    config: ProtocolConfig | string | Protocol,
    values: ArrayLike<number | string | bigint | RecordValue | KeyValueSet>,
    options?: { source?: RandomSource; fileId?: string | null },
  ): Uint8Array;
}

declare const protocolClass: ProtocolClass;
export default protocolClass;
