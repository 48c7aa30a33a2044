package org.dpdist.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A 1-D structured array of fields, each of NumPy descr {@code dtype} and per-report {@code shape}, packed one after
 * another ({@code RecordReports}): the multi-attribute protocols' reports.  A field is bounded by [low, high) when the
 * server checks it on its own (high -1: none).
 */
public final class RecordFormat extends ReportFormat {
    /** One field of a record. */
    public static final class Field {
        public final String name;
        public final String dtype;
        public final int[] shape;
        public final long low;
        public final Long high;
        public final String reason;

        public Field(String name, String dtype, int[] shape, long low, Long high, String reason) {
            this.name = name;
            this.dtype = dtype;
            this.shape = shape.clone();
            this.low = low;
            this.high = high;
            this.reason = high == null && low == 0 ? null : (reason != null ? reason : name + "_out_of_range");
        }

        /** A field without bounds. */
        public Field(String name, String dtype, int[] shape) {
            this(name, dtype, shape, 0, null, null);
        }

        int bytes() {
            int bytes = itemBytesOf(dtype);
            for (int size : shape) bytes *= size;
            return bytes;
        }
    }

    public final List<Field> fields;
    private final int[] offsets;
    private final int rowBytes;

    public RecordFormat(List<Field> fields) {
        super("records", descr(fields), new int[0], 1);
        this.fields = new ArrayList<>(fields);
        this.offsets = new int[fields.size()];
        int offset = 0;
        for (int i = 0; i < fields.size(); i++) {
            offsets[i] = offset;
            offset += fields.get(i).bytes();
        }
        this.rowBytes = offset;
    }

    /** NumPy's descr of the fields: {@code [name, dtype]} or {@code [name, dtype, shape]} each. */
    private static List<Object> descr(List<Field> fields) {
        List<Object> out = new ArrayList<>();
        for (Field field : fields) {
            List<Object> entry = new ArrayList<>();
            entry.add(field.name);
            entry.add(field.dtype);
            if (field.shape.length > 0) entry.add(shapeList(field.shape));
            out.add(entry);
        }
        return out;
    }

    @Override
    public int rowBytes() {
        return rowBytes;
    }

    /** The byte offset of field {@code index} in a report. */
    public int offsetOf(int index) {
        return offsets[index];
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> out = super.describe();
        out.put("fields", fieldBounds());
        return out;
    }

    private List<Object> fieldBounds() {
        List<Object> out = new ArrayList<>();
        for (Field field : fields) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", field.name);
            entry.put("low", field.low);
            entry.put("high", field.high);
            entry.put("reason", field.reason);
            out.add(entry);
        }
        return out;
    }

    @Override
    protected boolean sameFields(Map<String, Object> published) {
        return Json.same(fieldBounds(), published.get("fields"));
    }
}
