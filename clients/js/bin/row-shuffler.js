// Rows of reports in a uniformly random order, in bounded memory (Node: temporary files).
//
// privatize.js writes a file's reports in this order, never in the order of its input lines: on
// sorted input a report's position would give its value away. The algorithm is the one of
// Python's dpdist/_io/_shuffle.py, the random-bucket (Rao-Sandelius) shuffle (C. R. Rao, Sankhya A
// 23, 1961; L. Sandelius, J. R. Stat. Soc. B 24, 1962; external memory: P. Sanders, Inf. Process.
// Lett. 67, 1998). While the rows fit in ``memoryBytes`` they are held and permuted at the end
// (Fisher-Yates). Past that every row (those held and all later ones) goes to one of ``buckets``
// temporary files chosen uniformly and independently; at the end each bucket is permuted in memory
// (or, if still too large, shuffled the same way, recursively) and the buckets are read out in
// order. Given the bucket sizes, which rows land in which bucket is uniform, and each bucket's
// order is uniform: the output is a uniformly random permutation. Whether buckets are used depends
// only on how many rows there are, never on the draws. The files hold randomized reports only, in a
// private directory (mode 0700) removed by ``close``.

import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { permutation, permuteRows } from '../src/shuffle.js';

export const SHUFFLE_MEMORY_BYTES = 128 * 1024 * 1024;
export const SHUFFLE_BUCKETS = 64;
const MAX_DEPTH = 4; // past it a bucket is permuted in memory whatever its size
const SPILL_BUFFER_BYTES = 1 << 16;

export class RowShuffler {
  /**
   * @param {number} rowBytes bytes of one report
   * @param {import('../src/random.js').RandomSource} source the order's randomness (the CSPRNG)
   * @param {{memoryBytes?: number, buckets?: number, directory?: string, depth?: number}} [options]
   */
  constructor(rowBytes, source, { memoryBytes = SHUFFLE_MEMORY_BYTES, buckets = SHUFFLE_BUCKETS, directory = tmpdir(), depth = 0 } = {}) {
    if (!Number.isInteger(rowBytes) || rowBytes < 1) throw new RangeError(`RowShuffler needs rowBytes >= 1, got ${rowBytes}`);
    if (!(memoryBytes >= 1) || !Number.isInteger(buckets) || buckets < 2) {
      throw new RangeError(`RowShuffler needs memoryBytes >= 1 and buckets >= 2, got ${memoryBytes} and ${buckets}`);
    }
    this.rowBytes = rowBytes;
    this.source = source;
    this.memoryBytes = memoryBytes;
    this.buckets = buckets;
    this.directory = directory;
    this.depth = depth;
    this.rows = 0;
    this._held = [];
    this._heldBytes = 0;
    this._temporary = null; // the private directory, once rows spill
    this._spill = null; // per bucket: {path, fd, buffer, used, rows}
  }

  /** Add whole rows (a Uint8Array of k * rowBytes bytes; copied). */
  add(bytes) {
    if (bytes.length % this.rowBytes !== 0) throw new RangeError(`RowShuffler.add needs whole rows of ${this.rowBytes} bytes, got ${bytes.length}`);
    this.rows += bytes.length / this.rowBytes;
    if (this._spill !== null) {
      this._spillRows(bytes);
      return;
    }
    this._held.push(bytes.slice());
    this._heldBytes += bytes.length;
    if (this._heldBytes > this.memoryBytes) {
      this._openBuckets();
      const held = this._held;
      this._held = [];
      this._heldBytes = 0;
      for (const part of held) this._spillRows(part);
    }
  }

  _openBuckets() {
    if (this._temporary === null) this._temporary = mkdtempSync(join(this.directory, '.dpdist-shuffle-'));
    const rowsPerBuffer = Math.max(1, Math.floor(SPILL_BUFFER_BYTES / this.rowBytes));
    this._spill = Array.from({ length: this.buckets }, (_, b) => {
      const path = join(this._temporary, `${this.depth}-${b}`);
      return { path, fd: openSync(path, 'w', 0o600), buffer: new Uint8Array(rowsPerBuffer * this.rowBytes), used: 0, rows: 0 };
    });
  }

  _spillRows(bytes) {
    const { rowBytes } = this;
    for (let start = 0; start < bytes.length; start += rowBytes) {
      const bucket = this._spill[this.source.uniformInt(this.buckets)];
      bucket.buffer.set(bytes.subarray(start, start + rowBytes), bucket.used);
      bucket.used += rowBytes;
      bucket.rows += 1;
      if (bucket.used === bucket.buffer.length) {
        writeSync(bucket.fd, bucket.buffer, 0, bucket.used);
        bucket.used = 0;
      }
    }
  }

  /** Every row added, in a uniformly random order, as Uint8Arrays of whole rows. */
  *chunks() {
    if (this._spill === null) {
      const held = this._held;
      this._held = [];
      this._heldBytes = 0;
      const total = held.reduce((sum, part) => sum + part.length, 0);
      if (total === 0) return;
      const bytes = held.length === 1 ? held[0] : new Uint8Array(total);
      if (held.length > 1) {
        let offset = 0;
        for (const part of held) {
          bytes.set(part, offset);
          offset += part.length;
        }
      }
      const n = total / this.rowBytes;
      yield permuteRows(bytes, this.rowBytes, permutation(n, this.source));
      return;
    }
    for (const bucket of this._spill) {
      if (bucket.used > 0) writeSync(bucket.fd, bucket.buffer, 0, bucket.used);
      closeSync(bucket.fd);
      bucket.fd = null;
      bucket.buffer = null;
    }
    const spill = this._spill;
    for (const bucket of spill) {
      const size = bucket.rows * this.rowBytes;
      if (size <= this.memoryBytes || this.depth + 1 >= MAX_DEPTH) {
        const bytes = readFileSync(bucket.path);
        unlinkSync(bucket.path);
        if (bucket.rows > 0) yield permuteRows(bytes, this.rowBytes, permutation(bucket.rows, this.source));
        continue;
      }
      const inner = new RowShuffler(this.rowBytes, this.source, {
        memoryBytes: this.memoryBytes, buckets: this.buckets, directory: this._temporary, depth: this.depth + 1,
      });
      try {
        const piece = new Uint8Array(Math.max(1, Math.floor(this.memoryBytes / this.rowBytes)) * this.rowBytes);
        const fd = openSync(bucket.path, 'r');
        try {
          for (let read = 0; read < size; ) {
            const got = readSync(fd, piece, 0, Math.min(piece.length, size - read), read);
            if (got <= 0 || got % this.rowBytes !== 0) throw new Error(`short read of a shuffle bucket (${got} bytes)`);
            inner.add(piece.subarray(0, got));
            read += got;
          }
        } finally {
          closeSync(fd);
        }
        unlinkSync(bucket.path);
        yield* inner.chunks();
      } finally {
        inner.close();
      }
    }
  }

  /** Remove the temporary files (idempotent). */
  close() {
    if (this._spill !== null) {
      for (const bucket of this._spill) if (bucket.fd !== null) closeSync(bucket.fd);
      this._spill = null;
    }
    if (this._temporary !== null) {
      rmSync(this._temporary, { recursive: true, force: true });
      this._temporary = null;
    }
    this._held = [];
    this._heldBytes = 0;
  }
}
