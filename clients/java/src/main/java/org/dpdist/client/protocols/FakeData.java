package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.dpdist.client.RandomSource;

/**
 * Fake reports of the attributes a user did not sample (rsfd and rsrfd; Python's {@code dpdist.local.multi._fake}; the
 * JavaScript client's {@code src/fake.js}): each kind writes one fake report in the attribute's report format and gives
 * its law over the attribute protocol's outputs (the exact channel).
 * <ul>
 * <li>uniform: a uniform item, as GRR reports it (RS+FD[GRR]);</li>
 * <li>prior: an item drawn from a public prior, sent as it is (RS+RFD[GRR], PVLDB 2023 Alg. 1 line 6);</li>
 * <li>zero: unary encoding of the all-zero vector, every bit at q (RS+FD[UE-z]);</li>
 * <li>randomized: the attribute's randomizer applied to an item drawn uniformly (RS+FD[UE-r]) or from the prior (RS+RFD[UE-r]).</li>
 * </ul>
 * Priors are realized exactly as Python realizes them ({@link #quantizePrior}): integer weights summing to 2^32, an item
 * drawn by comparing one uniform 32-bit word with their cumulative sums, so the law the server's estimators subtract is
 * the law sampled here.
 */
public final class FakeData {
    private static final double SCALE = 4294967296.0; // 2^32

    public final String kind;
    private final FrequencyProtocol inner;
    private final long[] weights; // null: uniform items
    private final long[] cumulative;

    /**
     * @param kind    "uniform", "prior", "zero" or "randomized"
     * @param weights the realized prior ({@link #quantizePrior}), or null for a uniform item
     */
    public FakeData(FrequencyProtocol inner, String kind, long[] weights) {
        this.inner = inner;
        this.kind = kind;
        this.weights = weights;
        if (weights != null) {
            cumulative = new long[weights.length];
            long sum = 0;
            for (int i = 0; i < weights.length; i++) cumulative[i] = sum += weights[i];
        } else {
            cumulative = null;
        }
    }

    /** {@code sum} of a float64 array as numpy's pairwise summation adds it (numpy/_core/src/umath/loops_utils.h). */
    public static double numpySum(double[] values, int start, int n) {
        if (n < 8) {
            double total = 0;
            for (int i = start; i < start + n; i++) total += values[i];
            return total;
        }
        if (n <= 128) {
            double[] r = new double[8];
            for (int j = 0; j < 8; j++) r[j] = values[start + j];
            int i = 8;
            for (; i < n - (n % 8); i += 8) for (int j = 0; j < 8; j++) r[j] += values[start + i + j];
            double total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            for (; i < n; i++) total += values[start + i];
            return total;
        }
        int half = n / 2;
        half -= half % 8;
        return numpySum(values, start, half) + numpySum(values, start + half, n - half);
    }

    /** Python's stable argsort(-keys): positions by decreasing key, ties in position order. */
    private static List<Integer> decreasing(double[] keys) {
        List<Integer> positions = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) positions.add(i);
        positions.sort((a, b) -> keys[a] != keys[b] ? Double.compare(keys[b], keys[a]) : Integer.compare(a, b));
        return positions;
    }

    /** Integer weights summing to 2^32, proportional to {@code prior} (positive entries stay positive): Python's {@code quantize_prior}. */
    public static long[] quantizePrior(double[] prior) {
        double total = numpySum(prior, 0, prior.length);
        double[] exact = new double[prior.length];
        long[] weights = new long[prior.length];
        long sum = 0;
        for (int i = 0; i < prior.length; i++) {
            double normalized = prior[i] / total;
            exact[i] = normalized * SCALE;
            weights[i] = normalized > 0 && Math.floor(exact[i]) == 0 ? 1 : (long) Math.floor(exact[i]);
            sum += weights[i];
        }
        long shortBy = (1L << 32) - sum;
        if (shortBy > 0) {
            double[] remainders = new double[prior.length];
            for (int i = 0; i < prior.length; i++) remainders[i] = exact[i] - Math.floor(exact[i]);
            for (int position : decreasing(remainders).subList(0, (int) Math.min(shortBy, prior.length))) weights[position] += 1;
        } else if (shortBy < 0) {
            double[] keys = new double[prior.length];
            for (int i = 0; i < prior.length; i++) keys[i] = weights[i];
            for (int position : decreasing(keys).subList(0, (int) Math.min(-shortBy, prior.length))) weights[position] -= 1;
        }
        return weights;
    }

    /** An item drawn with probabilities weights / 2^32: the first whose cumulative weight exceeds one uniform word. */
    private int drawItem(RandomSource source) {
        long word = source.word();
        int low = 0;
        int high = cumulative.length - 1; // cumulative[last] = 2^32 > every word
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (cumulative[middle] <= word) low = middle + 1;
            else high = middle;
        }
        return low;
    }

    private int item(RandomSource source) {
        return cumulative == null ? (int) source.uniformInt(inner.domainSize()) : drawItem(source);
    }

    /** The law of an item: weights / 2^32, or uniform. */
    private double[] itemLaw() {
        int d = inner.domainSize();
        double[] law = new double[d];
        if (weights == null) Arrays.fill(law, 1.0 / d);
        else for (int i = 0; i < d; i++) law[i] = weights[i] / SCALE;
        return law;
    }

    /** Write one fake report at {@code offset}. */
    public void write(RandomSource source, byte[] bytes, int offset) {
        switch (kind) {
            case "zero":
                inner.writeReport(-1, source, bytes, offset);
                return;
            case "uniform":
            case "prior":
                inner.format().write(bytes, offset, 0, item(source));
                return;
            default:
                inner.writeReport(item(source), source, bytes, offset);
        }
    }

    /** The law of a fake report over the attribute protocol's outputs. */
    public double[] row() {
        if (kind.equals("zero")) return inner.channelRow(-1);
        if (kind.equals("uniform") || kind.equals("prior")) return itemLaw();
        double[] law = itemLaw();
        double[] out = new double[inner.channelRow(0).length];
        for (int x = 0; x < law.length; x++) {
            double[] row = inner.channelRow(x);
            for (int y = 0; y < row.length; y++) out[y] += law[x] * row[y];
        }
        return out;
    }
}
