package org.dpdist.client;

import java.util.ArrayList;
import java.util.List;

/**
 * Reports in a uniformly random order (the JavaScript client's {@code src/shuffle.js}).  Report i of a batch or file
 * must not be the report of the i-th value given: when the values are sorted (or grouped, or in time order), a report's
 * position gives its value away whatever the randomizer did.  The client sends, and {@code privatizeRecord} writes,
 * reports in an order drawn here from the CSPRNG (the same source the reports are drawn from).
 */
public final class Shuffle {
    private Shuffle() {
    }

    /** A uniformly random permutation of 0 .. n-1 (Fisher-Yates) drawn from {@code source}. */
    public static int[] permutation(int n, RandomSource source) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) order[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int) source.uniformInt(i + 1);
            int kept = order[i];
            order[i] = order[j];
            order[j] = kept;
        }
        return order;
    }

    /** A new list of the items of {@code values} in a uniformly random order. */
    public static <T> List<T> shuffled(List<T> values, RandomSource source) {
        int[] order = permutation(values.size(), source);
        List<T> out = new ArrayList<>(values.size());
        for (int index : order) out.add(values.get(index));
        return out;
    }

    /** The rows of {@code bytes} (whole rows of {@code rowBytes} bytes), row i of the result being row {@code order[i]}. */
    public static byte[] permuteRows(byte[] bytes, int rowBytes, int[] order) {
        byte[] out = new byte[order.length * rowBytes];
        for (int i = 0; i < order.length; i++) System.arraycopy(bytes, order[i] * rowBytes, out, i * rowBytes, rowBytes);
        return out;
    }

    /** {@code batch} with its rows in a uniformly random order. */
    public static ReportBatch shuffleBatch(ReportBatch batch, RandomSource source) {
        int n = batch.length();
        if (n < 2) return batch;
        return batch.withRows(n, permuteRows(batch.bytes, batch.rowBytes(), permutation(n, source)));
    }
}
