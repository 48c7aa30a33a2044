package org.dpdist.client;

import java.util.Collections;
import java.util.Map;
import java.util.Set;

/**
 * A batch of reports ready for the wire: {@link #bytes} is the C-order payload of an array of NumPy dtype
 * {@link #descr} and shape {@link #shape} (first axis: one row per user), with the normalized config of the protocol
 * that drew it and the keys of that config whose numbers are floats (for the record header).
 */
public final class ReportBatch {
    public final Map<String, Object> config;
    public final Set<String> floatKeys;
    /** The NumPy descr: a string, or for records a list of fields. */
    public final Object descr;
    public final int[] shape;
    public final byte[] bytes;

    public ReportBatch(Map<String, Object> config, Set<String> floatKeys, Object descr, int[] shape, byte[] bytes) {
        this.config = config;
        this.floatKeys = floatKeys == null ? Collections.<String>emptySet() : floatKeys;
        this.descr = descr;
        this.shape = shape.clone();
        this.bytes = bytes;
    }

    /** The number of reports. */
    public int length() {
        return shape[0];
    }

    /** Bytes of one report. */
    public int rowBytes() {
        return bytes.length / Math.max(shape[0], 1);
    }

    /** The bytes of report {@code index} (a copy). */
    public byte[] row(int index) {
        int size = rowBytes();
        byte[] out = new byte[size];
        System.arraycopy(bytes, index * size, out, 0, size);
        return out;
    }

    /** This batch's config, dtype and row shape with other reports ({@code rows} of them, in {@code bytes}). */
    public ReportBatch withRows(int rows, byte[] bytes) {
        int[] shape = this.shape.clone();
        shape[0] = rows;
        return new ReportBatch(config, floatKeys, descr, shape, bytes);
    }
}
