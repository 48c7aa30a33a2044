package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.Bytes;
import org.dpdist.client.Grid;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Apple's count-mean sketch, "cms" (Apple's Differential Privacy Team, "Learning with Privacy at Scale", 2017, sec. 3,
 * Alg. 1; {@code dpdist.local.frequency.cms}): one of k public hash functions h_j uniform, the m-coordinate vector +1 at
 * h_j(v) and -1 elsewhere, every coordinate flipped w.p. 1/(e^(eps/2) + 1); a report is uint64 (j, then the m bits,
 * packed little-endian 64 to a word).  Every Bernoulli is exact, so the law is the channel Python's channel() states.
 */
public final class CMS extends Sketch {
    public static final String PROTOCOL = "cms";

    /** Per coordinate: the largest 2^-53 grid probability with p / (1 - p) &lt;= e^(eps/2). */
    public final double p;
    private final int words;

    public CMS(Map<String, Object> config) {
        super(PROTOCOL, config, (k, m) -> k * (m + 1));
        this.p = Grid.oddsProbability(Grid.expLower(epsilon() / 2.0));
        this.words = (m + 63) / 64;
        this.format = ReportFormat.integerRowReports(1 + words, "<u8"); // function index, then the m bits in words
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("p", p, "coefficients", coefficientList());
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        int j = (int) source.uniformInt(k);
        int own = hashed(j, item);
        Bytes.putUnsigned(bytes, offset, 8, j);
        int start = offset + 8;
        Arrays.fill(bytes, start, start + 8 * words, (byte) 0);
        for (int l = 0; l < m; l++) {
            // the item's coordinate reads +1 w.p. p, every other one w.p. 1 - p (flipped from -1)
            boolean plus = l == own ? source.bernoulli(p) : !source.bernoulli(p);
            if (plus) bytes[start + (l >> 3)] |= (byte) (1 << (l & 7)); // little-endian bits of little-endian words
        }
    }

    private int bit(byte[] row, int l) {
        return (row[8 + (l >> 3)] >> (l & 7)) & 1;
    }

    /** Python's column: j 2^m + the bits as an integer (small m only). */
    @Override
    public long reportIndex(byte[] row) {
        long j = Bytes.getU32(row, 0);
        long bits = 0;
        for (int l = 0; l < m; l++) bits += (long) bit(row, l) << l;
        return (j << m) + bits;
    }

    @Override
    public double[] channelRow(int item) {
        if ((long) k << m > MAX_CHANNEL_OUTPUTS || m > 20) throw notEnumerable("k 2^m outputs; only up to " + MAX_CHANNEL_OUTPUTS);
        double[] row = new double[k << m];
        for (int j = 0; j < k; j++) {
            int own = hashed(j, item);
            for (int x = 0; x < 1 << m; x++) {
                double probability = 1.0 / k;
                for (int l = 0; l < m; l++) {
                    boolean plus = ((x >> l) & 1) != 0;
                    probability *= l == own ? (plus ? p : 1 - p) : plus ? 1 - p : p;
                }
                row[(j << m) + x] = probability;
            }
        }
        return row;
    }

    @Override
    public long statisticSize() {
        return (long) k * (m + 1);
    }
}
