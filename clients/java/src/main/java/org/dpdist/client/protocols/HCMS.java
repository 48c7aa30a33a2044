package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Apple's Hadamard count-mean sketch, "hcms" (Apple's Differential Privacy Team, "Learning with Privacy at Scale", 2017,
 * sec. 3, Alg. 3; {@code dpdist.local.frequency.hcms}): j and l uniform, the Hadamard entry
 * H[h_j(v), l] = (-1)^popcount(h_j(v) &amp; l) kept w.p. e^eps/(e^eps + 1); a report is (j, l, bit = +1) in the narrowest
 * unsigned dtype (the family: {@link Sketch}).
 */
public final class HCMS extends Sketch {
    public static final String PROTOCOL = "hcms";

    public final double p;

    public HCMS(Map<String, Object> config) {
        super(PROTOCOL, config, (k, m) -> 2 * k * m);
        this.p = Grid.oddsProbability(Grid.expLower(epsilon())); // on the 2^-53 grid
        this.format = ReportFormat.integerRowReports(3, ReportFormat.smallestUnsigned(Math.max(Math.max(k, m), 2))); // (function, column, bit)
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("p", p, "coefficients", coefficientList());
    }

    private boolean plus(int j, long l, int item) {
        return Long.bitCount(hashed(j, item) & l) % 2 == 0;
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        int j = (int) source.uniformInt(k);
        long l = source.uniformInt(m);
        boolean plus = plus(j, l, item);
        boolean bit = source.bernoulli(p) ? plus : !plus;
        format.write(bytes, offset, 0, j);
        format.write(bytes, offset, 1, l);
        format.write(bytes, offset, 2, bit ? 1 : 0);
    }

    /** Python's column: (j m + l) 2 + bit. */
    @Override
    public long reportIndex(byte[] row) {
        return (format.read(row, 0, 0) * m + format.read(row, 0, 1)) * 2 + format.read(row, 0, 2);
    }

    @Override
    public double[] channelRow(int item) {
        double[] row = new double[2 * k * m];
        for (int j = 0; j < k; j++) {
            for (int l = 0; l < m; l++) {
                boolean plus = plus(j, l, item);
                row[(j * m + l) * 2 + 1] = (plus ? p : 1 - p) / ((double) k * m);
                row[(j * m + l) * 2] = (plus ? 1 - p : p) / ((double) k * m);
            }
        }
        return row;
    }

    @Override
    public long statisticSize() {
        return 2L * k * m;
    }
}
