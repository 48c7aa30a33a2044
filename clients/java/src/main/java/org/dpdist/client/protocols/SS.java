package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Subset selection, "ss" (Ye &amp; Barg 2018; Wang et al. 2016; {@code dpdist.local.frequency.subset}).
 * k = subset_size of the config (Python records the k of least variance in every config it makes); a config without it
 * (written before subset_size, or the inner ss of a multi-attribute config) means k = min(d - 1, max(1, ceil(d / (e^eps +
 * 1)))), as Python reads it.  Any k in 1 .. d - 1 is eps-LDP.  With probability p_in = k e^eps / (k e^eps + d - k) (an exact
 * Bernoulli draw on Python's 2^-53 grid) the subset is the true item plus k - 1 items uniform among the other d - 1,
 * otherwise k items uniform among the other d - 1.  Every report first draws a uniform (k - 1)-subset of the d - 1
 * others by Floyd's algorithm, then a uniform other not yet taken (by rejection), which the true item replaces when it
 * is included: the same draws either way, so the time taken does not depend on the inclusion, nor so on the value.
 * Reports are numpy.packbits rows with exactly k bits set.
 */
public final class SS extends FrequencyProtocol {
    public static final String PROTOCOL = "ss";
    private static final long MAX_CHANNEL_OUTPUTS = 1 << 16;

    public final int subsetSize;
    public final double pIn;
    private final ThreadLocal<boolean[]> chosenOfThread;

    public SS(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules("subset_size", Params.optional(Params.integer(1, Integer.MAX_VALUE))),
            Params.defaults("labels", null, "subset_size", null));
        int d = domainSize();
        Object given = params.get("subset_size");
        if (given == null) { // only a given subset size is in the config
            params.remove("subset_size");
            this.config.remove("subset_size");
            double e = Libm.exp(epsilon());
            this.subsetSize = (int) Math.min(d - 1, Math.max(1, Math.ceil(d / (e + 1))));
        } else if ((Long) given >= d) {
            throw new InvalidParameterError("The 'subset_size' parameter of SS must be below 'domain_size' = " + d
                + " (a report of every item tells nothing). Got " + given + " instead.");
        } else {
            this.subsetSize = (int) (long) (Long) given;
        }
        int k = subsetSize;
        // the largest 2^-53 grid probability with p_in / (1 - p_in) (d - k) / k <= e^eps
        this.pIn = Grid.oddsProbability(Grid.expLower(epsilon()).times(Grid.Rational.of(k, d - k)));
        this.format = ReportFormat.packedBitReports(d);
        this.chosenOfThread = ThreadLocal.withInitial(() -> new boolean[d - 1]);
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("subsetSize", (long) subsetSize, "pIn", pIn);
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        int d = domainSize();
        boolean include = source.bernoulli(pIn);
        int t = subsetSize - 1;
        boolean[] chosen = chosenOfThread.get();
        Arrays.fill(chosen, false);
        // Floyd: for j = n - t .. n - 1, pick r uniform in [0, j]; take r, or j if r is taken
        int n = d - 1;
        for (int j = n - t; j < n; j++) {
            int r = (int) source.uniformInt(j + 1);
            chosen[chosen[r] ? j : r] = true;
        }
        // the k-th item: a uniform other not yet taken (by rejection), drawn whether or not the true item takes its place
        int extra;
        do {
            extra = (int) source.uniformInt(n);
        } while (chosen[extra]);
        if (!include) chosen[extra] = true;
        Arrays.fill(bytes, offset, offset + format.rowShape[0], (byte) 0);
        for (int label = 0; label < n; label++) {
            if (!chosen[label]) continue;
            int other = label < item ? label : label + 1; // the other items, in order, skipping item
            bytes[offset + (other >> 3)] |= (byte) (0x80 >> (other & 7));
        }
        if (include) bytes[offset + (item >> 3)] |= (byte) (0x80 >> (item & 7));
    }

    /** The binomial coefficient C(n, k), exact while it is below 2^53 (channel sizes only). */
    public static long comb(long n, long k) {
        if (k < 0 || k > n) return 0;
        double result = 1;
        for (long i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
        return Math.round(result);
    }

    private int[] members(byte[] row) {
        int[] out = new int[domainSize()];
        int count = 0;
        for (int j = 0; j < domainSize(); j++) if (UnaryEncoding.bit(row, j) == 1) out[count++] = j;
        return Arrays.copyOf(out, count);
    }

    /** Colexicographic rank sum_i C(s_i, i + 1) of the subset (Python's report_index). */
    @Override
    public long reportIndex(byte[] row) {
        int[] members = members(row);
        long rank = 0;
        for (int position = 0; position < members.length; position++) rank += comb(members[position], position + 1);
        return rank;
    }

    /** Exact law over all k-subsets in colex rank order. */
    @Override
    public double[] channelRow(int item) {
        int d = domainSize();
        int k = subsetSize;
        long outputs = comb(d, k);
        if (outputs > MAX_CHANNEL_OUTPUTS) throw notEnumerable("C(d, k) subsets; only up to " + MAX_CHANNEL_OUTPUTS);
        double inside = pIn / comb(d - 1, k - 1);
        double outside = (1 - pIn) / comb(d - 1, k);
        double[] row = new double[(int) outputs];
        int[] subset = new int[k];
        for (int i = 0; i < k; i++) subset[i] = i;
        while (true) {
            long rank = 0;
            boolean holds = false;
            for (int i = 0; i < k; i++) {
                rank += comb(subset[i], i + 1);
                holds |= subset[i] == item;
            }
            row[(int) rank] = holds ? inside : outside;
            int i = 0; // next subset in colex order
            while (i < k - 1 && subset[i] + 1 == subset[i + 1]) i++;
            if (i == k - 1 && subset[i] == d - 1) break;
            subset[i] += 1;
            for (int j = 0; j < i; j++) subset[j] = j;
        }
        return row;
    }
}
