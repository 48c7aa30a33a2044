package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * PCKV-GRR, "pckv-grr" (Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020, Algorithms 1 and 3;
 * {@code dpdist.local.keyvalue.pckv_grr}): Padding-and-Sampling of one pair of the set padded to length l
 * ({@link PaddedKeyValue}), then &lt;k, v*&gt; w.p. a p, &lt;k, -v*&gt; w.p. a (1 - p), and &lt;i, +-1&gt; for each other key
 * i of the d' = d + l w.p. b/2 each, b = (1 - a)/(d' - 1).  p and a are Python's (the optimized allocation, Theorem 3's
 * epsilon at most the stated one in exact rational arithmetic).  Reports: the item 2i + s, s = 0 for +1 (items below 2d').
 */
public final class PCKVGRR extends PaddedKeyValue {
    public static final String PROTOCOL = "pckv-grr";

    public final double a;
    public final double p;
    public final double b;

    public PCKVGRR(Map<String, Object> config) {
        super(PROTOCOL, config);
        double[] constants = grrConstants(epsilon(), paddingLength(), extendedSize());
        this.a = constants[0];
        this.p = constants[1];
        this.b = (1.0 - a) / (extendedSize() - 1);
        this.format = ReportFormat.itemReports(2L * extendedSize());
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("a", a, "b", b, "p", p);
    }

    @Override
    public void writeReport(KeyValueSet set, RandomSource source, byte[] bytes, int offset) {
        Sample sampled = sample(set, source);
        int width = extendedSize();
        boolean kept = source.bernoulli(a);
        boolean valueKept = source.bernoulli(p);
        long other = source.uniformInt(width - 1); // drawn either way
        if (other >= sampled.key) other += 1;
        boolean fair = source.bernoulli(0.5);
        boolean positive = kept ? (valueKept ? sampled.up : !sampled.up) : fair;
        format.write(bytes, offset, 0, 2 * (kept ? sampled.key : other) + (positive ? 0 : 1));
    }

    /** Pr[output 2i + s | sampled key k, sign s'] (rows 2k + s'). */
    private double pairLaw(int k, int s, int output) {
        int i = output >> 1;
        if (i != k) return b / 2;
        return (output & 1) == s ? a * p : a * (1 - p);
    }

    @Override
    public double[] channelRow(KeyValueSet set) {
        double[] law = sampleLaw(set);
        int width = extendedSize();
        double[] row = new double[2 * width];
        for (int output = 0; output < 2 * width; output++) {
            double total = 0;
            for (int k = 0; k < width; k++) for (int s = 0; s < 2; s++) total += law[2 * k + s] * pairLaw(k, s, output);
            row[output] = total;
        }
        return row;
    }
}
