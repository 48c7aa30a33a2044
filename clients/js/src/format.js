// The declared report format of a protocol: Python's ``protocol.report_format.describe()``.
//
// Every protocol declares its reports as one of a few kinds (dpdist/local/_report_kinds.py): items
// below a size in the narrowest unsigned dtype, rows of bits packed by numpy.packbits, rows of
// integers below a limit per column.  Each protocol of this client declares its format with the
// same kinds, from the same parameters, so the dtype (NumPy descr) and the row shape of the record
// header come from one place; a collector's published client view states the format too, and the
// client refuses a view whose kind, dtype or row shape differs (Protocol.checkView).

import { InvalidParameterError } from './errors.js';

/** NumPy descr of the narrowest unsigned dtype holding 0 .. count - 1 (``smallest_unsigned_dtype``). */
export function smallestUnsigned(count) {
  if (count - 1 <= 0xff) return '|u1';
  if (count - 1 <= 0xffff) return '<u2';
  if (count - 1 <= 0xffffffff) return '<u4';
  return '<u8';
}

const ITEM_BYTES = { '|u1': 1, '<u2': 2, '<u4': 4, '<u8': 8 };

/** A declared format: ``kind``, the NumPy descr ``dtype`` and the shape of one report ``rowShape``. */
export class ReportFormat {
  constructor(kind, dtype, rowShape) {
    this.kind = kind;
    this.dtype = dtype;
    this.rowShape = rowShape;
    this.itemBytes = ITEM_BYTES[dtype];
  }

  /** Bytes of one report. */
  get rowBytes() {
    return this.itemBytes * this.rowShape.reduce((a, b) => a * b, 1);
  }

  /** What ``describe()`` states of the wire: kind, dtype and row shape. */
  describe() {
    return { kind: this.kind, dtype: this.dtype, row_shape: [...this.rowShape] };
  }

  /** Write the unsigned integer ``value`` (below 2^53) as entry ``index`` of the row at ``offset``, little-endian. */
  write(view, offset, index, value) {
    const at = offset + index * this.itemBytes;
    if (this.itemBytes === 1) view.setUint8(at, value);
    else if (this.itemBytes === 2) view.setUint16(at, value, true);
    else if (this.itemBytes === 4) view.setUint32(at, value, true);
    else view.setBigUint64(at, BigInt(value), true);
  }

  /** Entry ``index`` of the row at ``offset`` (a number; 8-byte entries must be below 2^53). */
  read(view, offset, index) {
    const at = offset + index * this.itemBytes;
    if (this.itemBytes === 1) return view.getUint8(at);
    if (this.itemBytes === 2) return view.getUint16(at, true);
    if (this.itemBytes === 4) return view.getUint32(at, true);
    return Number(view.getBigUint64(at, true));
  }

  /** Entry ``index`` of one report's bytes ``row`` (a Uint8Array), as ``read`` (no DataView below 8 bytes: the
   * decoding of every sampled report in the channel tests spent most of its time making them). */
  readRow(row, index = 0) {
    const at = index * this.itemBytes;
    if (this.itemBytes === 1) return row[at];
    if (this.itemBytes === 2) return row[at] | (row[at + 1] << 8);
    if (this.itemBytes === 4) return (row[at] | (row[at + 1] << 8) | (row[at + 2] << 16)) + row[at + 3] * 0x1000000;
    return this.read(new DataView(row.buffer, row.byteOffset, row.byteLength), 0, index);
  }

  /** Refuse a published format (``describe()`` of the collector's client view) that is not this one. */
  check(published, owner) {
    const expected = this.describe();
    const got = published ?? {};
    const same = got.kind === expected.kind && got.dtype === expected.dtype && JSON.stringify(got.row_shape) === JSON.stringify(expected.row_shape);
    if (!same) {
      throw new InvalidParameterError(
        `The collector's client view declares ${owner} reports as ${JSON.stringify(got)}; this client writes ` +
          `${JSON.stringify(expected)} for the config. The view is refused.`,
      );
    }
  }
}

/** One item in [0, size) per report (``ItemReports``). */
export function itemReports(size) {
  return new ReportFormat('items', smallestUnsigned(size), []);
}

/** Rows of ``bits`` bits packed by numpy.packbits (``PackedBitReports``). */
export function packedBitReports(bits) {
  return new ReportFormat('packed_bits', '|u1', [Math.ceil(bits / 8)]);
}

/** Rows of ``width`` integers of NumPy descr ``dtype`` (``IntegerRowReports``; ``smallestUnsigned`` of the largest limit by default in Python). */
export function integerRowReports(width, dtype) {
  return new ReportFormat('integer_rows', dtype, [width]);
}

/** NumPy's descr of one field of a structured dtype: ``[name, dtype]`` or ``[name, dtype, shape]``. */
function fieldDescr({ name, dtype, shape = [] }) {
  return shape.length ? [name, dtype, [...shape]] : [name, dtype];
}

/**
 * A 1-D structured array of fields, each of NumPy descr ``dtype`` and per-report ``shape``, packed one
 * after another (``RecordReports``): the multi-attribute protocols' reports.  A field is bounded by
 * ``[low, high)`` when the server checks it on its own (``high: null`` for none).
 */
export class RecordFormat extends ReportFormat {
  constructor(fields) {
    super('records', fields.map(fieldDescr), []);
    this.fields = fields.map(({ name, dtype, shape = [], low = 0, high = null, reason = null }) => ({
      name, dtype, shape: [...shape], low, high, reason: high === null && low === 0 ? null : (reason ?? `${name}_out_of_range`),
    }));
    let offset = 0;
    this.offsets = this.fields.map((field) => {
      const at = offset;
      offset += ITEM_BYTES[field.dtype] * field.shape.reduce((a, b) => a * b, 1);
      return at;
    });
    this._rowBytes = offset;
  }

  get rowBytes() {
    return this._rowBytes;
  }

  /** The byte offset of field ``index`` in a report. */
  offsetOf(index) {
    return this.offsets[index];
  }

  describe() {
    const fields = this.fields.map(({ name, low, high, reason }) => ({ name, low, high, reason }));
    return { kind: this.kind, dtype: this.dtype.map((descr) => JSON.parse(JSON.stringify(descr))), row_shape: [], fields };
  }

  check(published, owner) {
    const expected = this.describe();
    const got = published ?? {};
    const same = got.kind === expected.kind && JSON.stringify(got.dtype) === JSON.stringify(expected.dtype) &&
      JSON.stringify(got.row_shape) === JSON.stringify(expected.row_shape) &&
      JSON.stringify(got.fields) === JSON.stringify(expected.fields);
    if (!same) {
      throw new InvalidParameterError(
        `The collector's client view declares ${owner} reports as ${JSON.stringify(got)}; this client writes ` +
          `${JSON.stringify(expected)} for the config. The view is refused.`,
      );
    }
  }
}

/** Records of the given fields (``RecordReports``). */
export function recordReports(fields) {
  return new RecordFormat(fields);
}
