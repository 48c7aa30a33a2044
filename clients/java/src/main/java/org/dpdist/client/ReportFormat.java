package org.dpdist.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The declared report format of a protocol: Python's {@code protocol.report_format.describe()} (the JavaScript client's
 * {@code src/format.js}).  Every protocol declares its reports as one of a few kinds ({@code dpdist/local/_report_kinds.py}):
 * items below a size in the narrowest unsigned dtype, rows of bits packed by numpy.packbits, rows of integers below a
 * limit per column, records of fields.  The dtype (NumPy descr) and the row shape of the record header come from here;
 * a collector's published client view states the format too, and the client refuses a view whose kind, dtype or row
 * shape differs ({@link #check}).
 */
public class ReportFormat {
    public final String kind;
    /** The NumPy descr: a string ("|u1", "&lt;u8", ...), or for records a list of fields. */
    public final Object dtype;
    public final int[] rowShape;
    public final int itemBytes;

    protected ReportFormat(String kind, Object dtype, int[] rowShape, int itemBytes) {
        this.kind = kind;
        this.dtype = dtype;
        this.rowShape = rowShape.clone();
        this.itemBytes = itemBytes;
    }

    /** Bytes of one entry of the unsigned NumPy descr {@code dtype}. */
    public static int itemBytesOf(String dtype) {
        switch (dtype) {
            case "|u1": return 1;
            case "<u2": return 2;
            case "<u4": return 4;
            case "<u8": return 8;
            default: throw new IllegalArgumentException("not an unsigned dtype: " + dtype);
        }
    }

    /** NumPy descr of the narrowest unsigned dtype holding 0 .. count - 1 ({@code smallest_unsigned_dtype}). */
    public static String smallestUnsigned(long count) {
        if (count - 1 <= 0xffL) return "|u1";
        if (count - 1 <= 0xffffL) return "<u2";
        if (count - 1 <= 0xffffffffL) return "<u4";
        return "<u8";
    }

    /** One item in [0, size) per report ({@code ItemReports}). */
    public static ReportFormat itemReports(long size) {
        String dtype = smallestUnsigned(size);
        return new ReportFormat("items", dtype, new int[0], itemBytesOf(dtype));
    }

    /** Rows of {@code bits} bits packed by numpy.packbits ({@code PackedBitReports}). */
    public static ReportFormat packedBitReports(long bits) {
        return new ReportFormat("packed_bits", "|u1", new int[] {(int) ((bits + 7) / 8)}, 1);
    }

    /** Rows of {@code width} integers of NumPy descr {@code dtype} ({@code IntegerRowReports}). */
    public static ReportFormat integerRowReports(int width, String dtype) {
        return new ReportFormat("integer_rows", dtype, new int[] {width}, itemBytesOf(dtype));
    }

    /** Bytes of one report. */
    public int rowBytes() {
        int bytes = itemBytes;
        for (int size : rowShape) bytes *= size;
        return bytes;
    }

    /** What {@code describe()} states of the wire: kind, dtype and row shape. */
    public Map<String, Object> describe() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kind", kind);
        out.put("dtype", dtype);
        out.put("row_shape", shapeList(rowShape));
        return out;
    }

    static List<Object> shapeList(int[] shape) {
        List<Object> out = new ArrayList<>();
        for (int size : shape) out.add((long) size);
        return out;
    }

    /** Write the unsigned integer {@code value} as entry {@code index} of the row at {@code offset}, little-endian. */
    public void write(byte[] bytes, int offset, int index, long value) {
        Bytes.putUnsigned(bytes, offset + index * itemBytes, itemBytes, value);
    }

    /** Entry {@code index} of the row at {@code offset}. */
    public long read(byte[] bytes, int offset, int index) {
        return Bytes.getUnsigned(bytes, offset + index * itemBytes, itemBytes);
    }

    /** Refuse a published format ({@code describe()} of the collector's client view) that is not this one. */
    public void check(Object published, String owner) {
        Map<String, Object> expected = describe();
        Object got = published == null ? new LinkedHashMap<String, Object>() : published;
        Map<String, Object> map = Json.asObject(got);
        boolean same = map != null && expected.get("kind").equals(map.get("kind")) && Json.same(expected.get("dtype"), map.get("dtype"))
            && Json.same(expected.get("row_shape"), map.get("row_shape")) && sameFields(map);
        if (!same) {
            throw new InvalidParameterError("The collector's client view declares " + owner + " reports as " + Json.show(got)
                + "; this client writes " + Json.show(expected) + " for the config. The view is refused.");
        }
    }

    /** Whether a published format's further entries (a records format's fields) are this one's. */
    protected boolean sameFields(Map<String, Object> published) {
        return true;
    }
}
