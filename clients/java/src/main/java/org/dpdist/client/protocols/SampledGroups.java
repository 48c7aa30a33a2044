package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

import org.dpdist.client.Bytes;
import org.dpdist.client.RandomSource;
import org.dpdist.client.RecordFormat;
import org.dpdist.client.ReportFormat;

/**
 * Users sampled into groups, each reporting through its group's 1-D protocol (Python's
 * {@code dpdist.local.multi._groups.SampledGroups}; the JavaScript client's {@code src/groups.js}): smp (a group per
 * attribute), calm (a group per marginal) and hdg (a group per grid) share this design.  Each user draws a group
 * uniformly at random, independently of their record, and reports the group's index with their group value randomized
 * by the group's protocol at the whole budget.  The report is a record of two fields: {@code <field>} (the group in the
 * narrowest unsigned integer) and {@code payload} (the group protocol's report as its little-endian bytes, zero-padded
 * to the widest group).  Its law is M_g(y | value_g) / (groups).
 */
public final class SampledGroups {
    public final List<Protocol> inners;
    public final String field;
    public final List<String> names;
    public final RecordFormat format;
    private final int width;
    private final int payloadOffset;
    private long[] outputOffsets;

    public SampledGroups(List<Protocol> inners, String field, List<String> names) {
        this.inners = new ArrayList<>(inners);
        this.field = field;
        this.names = new ArrayList<>(names);
        int widest = 0;
        for (Protocol inner : inners) widest = Math.max(widest, inner.rowBytes());
        this.width = widest;
        int count = inners.size();
        this.format = new RecordFormat(Arrays.asList(
            new RecordFormat.Field(field, ReportFormat.smallestUnsigned(count), new int[0], 0, (long) count, field + "_out_of_range"),
            new RecordFormat.Field("payload", "|u1", new int[] {width})));
        this.payloadOffset = format.offsetOf(1); // 1, 2 or 4: the index field comes first
    }

    public int count() {
        return inners.size();
    }

    /** The parts a client view's design lists, in order: each group's name and protocol. */
    public List<RecordProtocol.Part> parts() {
        List<RecordProtocol.Part> out = new ArrayList<>();
        for (int index = 0; index < inners.size(); index++) out.add(new RecordProtocol.Part(names.get(index), inners.get(index)));
        return out;
    }

    /** Write one report at {@code offset}: a uniform group g, then {@code valueOf(g)} (checked) randomized by g's protocol. */
    public void writeReport(IntFunction<Object> valueOf, RandomSource source, byte[] bytes, int offset) {
        int chosen = (int) source.uniformInt(count());
        Bytes.putUnsigned(bytes, offset, payloadOffset, chosen);
        int at = offset + payloadOffset;
        Arrays.fill(bytes, at, at + width, (byte) 0); // padding: zero
        inners.get(chosen).writeChecked(valueOf.apply(chosen), source, bytes, at);
    }

    /** The exact law of a report given each group's checked value: the groups' outputs in turn. */
    public double[] channelRow(IntFunction<Object> valueOf) {
        List<double[]> rows = new ArrayList<>();
        int total = 0;
        for (int group = 0; group < count(); group++) {
            double[] row = inners.get(group).channelRowChecked(valueOf.apply(group));
            rows.add(row);
            total += row.length;
        }
        double[] out = new double[total];
        int at = 0;
        for (double[] row : rows) {
            for (int y = 0; y < row.length; y++) out[at + y] = row[y] / count();
            at += row.length;
        }
        return out;
    }

    /** The group of a report. */
    public int groupOf(byte[] row) {
        return (int) Bytes.getUnsigned(row, 0, payloadOffset);
    }

    /** The payload's bytes of a report (its group protocol's report). */
    public byte[] payload(byte[] row) {
        return Protocol.slice(row, payloadOffset, inners.get(groupOf(row)).rowBytes());
    }

    /** The report's column in {@link #channelRow} (the groups' outputs one after another). */
    public long reportIndex(byte[] row) {
        if (outputOffsets == null) {
            long[] offsets = new long[count()];
            long total = 0;
            for (int group = 0; group < count(); group++) {
                offsets[group] = total;
                total += inners.get(group).channelRowChecked(RecordProtocol.firstInput(inners.get(group))).length;
            }
            outputOffsets = offsets;
        }
        return outputOffsets[groupOf(row)] + inners.get(groupOf(row)).reportIndex(payload(row));
    }

    /** Entries of the groups' statistic (Python's {@code SampledGroups.statistic_size}): each group's count, then its protocol's. */
    public long statisticSize() {
        long total = inners.size();
        for (Protocol inner : inners) total += inner.statisticSize();
        return total;
    }
}
