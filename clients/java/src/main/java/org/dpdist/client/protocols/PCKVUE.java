package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * PCKV-UE, "pckv-ue" (Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020, Algorithms 1 and 2;
 * {@code dpdist.local.keyvalue.pckv_ue}): Padding-and-Sampling of one pair of the set padded to length l
 * ({@link PaddedKeyValue}), then a vector y over the d' = d + l keys: y_k = v* w.p. a p, -v* w.p. a (1 - p), 0 w.p.
 * 1 - a at the sampled key, and +-1 w.p. b/2 each, 0 w.p. 1 - b elsewhere.  Reports: 2d' bits packed as numpy.packbits,
 * bit i says y_i = +1, bit d' + i says y_i = -1.  Every position draws its two Bernoulli coins, the sampled one too.
 */
public final class PCKVUE extends PaddedKeyValue {
    public static final String PROTOCOL = "pckv-ue";
    /** The most extended keys d' whose 3^d' outputs channelRow enumerates. */
    private static final int CHANNEL_KEYS = 10;

    public final double a;
    public final double b;
    public final double p;

    public PCKVUE(Map<String, Object> config) {
        super(PROTOCOL, config);
        double[] constants = ueConstants(epsilon());
        this.a = constants[0];
        this.b = constants[1];
        this.p = constants[2];
        this.format = ReportFormat.packedBitReports(2L * extendedSize());
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("a", a, "b", b, "p", p);
    }

    @Override
    public void writeReport(KeyValueSet set, RandomSource source, byte[] bytes, int offset) {
        Sample sampled = sample(set, source);
        int width = extendedSize();
        Arrays.fill(bytes, offset, offset + rowBytes(), (byte) 0);
        for (int i = 0; i < width; i++) {
            boolean at = i == sampled.key;
            boolean nonzero = source.bernoulli(at ? a : b);
            boolean coin = source.bernoulli(at ? p : 0.5);
            if (!nonzero) continue;
            boolean positive = at ? (coin ? sampled.up : !sampled.up) : coin;
            int bit = positive ? i : width + i;
            bytes[offset + (bit >> 3)] |= (byte) (0x80 >> (bit & 7));
        }
    }

    /** Python's report_index: the codes (0: y = 0, 1: +1, 2: -1) in base 3, key 0 the most significant. */
    @Override
    public long reportIndex(byte[] row) {
        int width = extendedSize();
        long index = 0;
        for (int i = 0; i < width; i++) index = 3 * index + UnaryEncoding.bit(row, i) + 2L * UnaryEncoding.bit(row, width + i);
        return index;
    }

    @Override
    public double[] channelRow(KeyValueSet set) {
        int width = extendedSize();
        if (width > CHANNEL_KEYS) throw refuseChannel(width, CHANNEL_KEYS);
        double[] other = {1 - b, b / 2, b / 2};
        double[][] kept = {{1 - a, a * p, a * (1 - p)}, {1 - a, a * (1 - p), a * p}}; // sampled v* = +1, -1
        double[] law = sampleLaw(set);
        double[] row = new double[(int) Math.round(Math.pow(3, width))];
        int[] codes = new int[width];
        for (int y = 0; y < row.length; y++) {
            int rest = y;
            for (int i = width - 1; i >= 0; i--) {
                codes[i] = rest % 3;
                rest /= 3;
            }
            double everyone = 1;
            for (int i = 0; i < width; i++) everyone *= other[codes[i]];
            double total = 0;
            for (int k = 0; k < width; k++) {
                for (int s = 0; s < 2; s++) total += law[2 * k + s] * ((everyone * kept[s][codes[k]]) / other[codes[k]]);
            }
            row[y] = total;
        }
        return row;
    }
}
