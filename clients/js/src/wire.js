// dpdist's binary report record (dpdist/_io/_binary.py), written byte for byte as Python does:
//
//   magic    8 bytes "DPDISTR\n"
//   version  uint16 little-endian (1)
//   length   uint32 little-endian, bytes of the header
//   header   UTF-8 JSON, json.dumps(sort_keys=True): config, dtype (NumPy descr), shape,
//            payload_bytes, crc32 (zlib's CRC-32 of the payload) and file_id (32 lower-case hex
//            digits, the same in every record of one file: the ingest paths' no-file-twice key)
//   payload  the reports' C-order bytes
//
// A report file is a sequence of records.

import { InvalidParameterError } from './errors.js';
import { pythonJsonDumps } from './pyjson.js';

export const RECORD_MAGIC = new Uint8Array([0x44, 0x50, 0x44, 0x49, 0x53, 0x54, 0x52, 0x0a]); // DPDISTR\n
export const RECORD_VERSION = 1;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** zlib.crc32 of a byte array (an unsigned 32-bit integer). */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const FILE_ID = /^[0-9a-f]{32}$/;

/** A fresh random file id: 32 lower-case hex digits (128 bits from crypto.getRandomValues). */
export function newFileId() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function checkFileId(fileId) {
  if (typeof fileId !== 'string' || !FILE_ID.test(fileId)) {
    throw new InvalidParameterError(`The 'fileId' option must be 32 lower-case hex digits. Got ${JSON.stringify(fileId)} instead.`);
  }
  return fileId;
}

/** The JSON header of a record for ``batch`` (a ReportBatch), as Python writes it. */
export function recordHeader(batch, { fileId = null } = {}) {
  const header = {
    config: batch.config,
    crc32: crc32(batch.bytes),
    dtype: batch.descr,
    payload_bytes: batch.bytes.length,
    shape: batch.shape,
  };
  if (fileId !== null) header.file_id = checkFileId(fileId);
  return pythonJsonDumps(header, batch.floatKeys);
}

/**
 * One binary record holding ``batch``.
 * @param {import('./protocols/_base.js').ReportBatch} batch
 * @param {{fileId?: string|null}} [options] the file id of the file the record belongs to
 *   (give every record of a file the same one, from newFileId(); null writes none)
 * @returns {Uint8Array}
 */
export function encodeRecord(batch, { fileId = null } = {}) {
  const header = new TextEncoder().encode(recordHeader(batch, { fileId }));
  const out = new Uint8Array(14 + header.length + batch.bytes.length);
  out.set(RECORD_MAGIC, 0);
  const view = new DataView(out.buffer);
  view.setUint16(8, RECORD_VERSION, true);
  view.setUint32(10, header.length, true);
  out.set(header, 14);
  out.set(batch.bytes, 14 + header.length);
  return out;
}
