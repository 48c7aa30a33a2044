package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Random wheel spinner, "rws" (Fang, Chen &amp; Liu, USENIX Security 2025; {@code dpdist.local.frequency.rws}).  The
 * wheel has m positions, m the smallest prime &gt;= d (positions &gt;= d hold no item).  A device draws a multiplier a
 * uniform on [1, m) (its public set S_a = {0, a, ..., (k-1) a} mod m) and spins: with probability lambda (Python's, on
 * the 2^-53 grid: ratio 1 + lambda m / (k (1 - lambda)) at most e^eps) a uniform position of v - S_a, else a uniform
 * position of all m.  Every draw is made either way.  k is the floor or the ceiling of m/(e^eps + 1), the lower mean MSE
 * (1 when it is at most 1), as Python derives it.  A report is one integer, (a - 1) m + y, in the narrowest unsigned
 * dtype holding (m - 1) m values, little-endian.
 */
public final class RWS extends FrequencyProtocol {
    public static final String PROTOCOL = "rws";
    private static final long MAX_CHANNEL_OUTPUTS = 1 << 16;

    public final int positions;
    public final int subsetSize;
    public final double keep;
    private final double qPosition;
    private final double pPosition;

    public RWS(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules(), Params.defaults("labels", null));
        this.positions = nextPrime(domainSize());
        this.subsetSize = subsetSize(epsilon(), positions, domainSize());
        this.keep = Grid.mixtureKeep(epsilon(), subsetSize, positions);
        this.qPosition = (1.0 - keep) / positions;
        this.pPosition = keep / subsetSize + qPosition;
        this.format = ReportFormat.itemReports((long) (positions - 1) * positions); // (a - 1) m + y
    }

    /** The smallest prime &gt;= n. */
    public static int nextPrime(int n) {
        int candidate = Math.max(2, n);
        while (!LocalHashing.isPrime(candidate)) candidate += 1;
        return candidate;
    }

    /** k: the floor or the ceiling of m/(e^eps + 1), the lower mean MSE; 1 when it is at most 1. */
    public static int subsetSize(double epsilon, int m, int d) {
        double optimum = m / (Libm.exp(epsilon) + 1.0);
        if (optimum <= 1.0) return 1;
        double low = Math.floor(optimum);
        double high = Math.min(m - 1, Math.ceil(optimum));
        // the paper's mean MSE (times n) of k of m positions over d items: subset selection's
        return (int) (PGR.subsetVariance(epsilon, m, d, (long) high) < PGR.subsetVariance(epsilon, m, d, (long) low) ? high : low);
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("positions", (long) positions, "subsetSize", (long) subsetSize, "keep", keep);
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        int m = positions;
        long aMinusOne = source.uniformInt(m - 1);
        boolean kept = source.bernoulli(keep);
        long step = source.uniformInt(subsetSize); // drawn either way, as the uniform position
        long other = source.uniformInt(m);
        long spun = (item - LocalHashing.mulMod(aMinusOne + 1, step, m) + m) % m; // a position of v - S_a
        format.write(bytes, offset, 0, aMinusOne * m + (kept ? spun : other));
    }

    /** Exact law over the reports (a - 1) m + y; small d only. */
    @Override
    public double[] channelRow(int item) {
        int m = positions;
        long outputs = (long) (m - 1) * m;
        if (outputs > MAX_CHANNEL_OUTPUTS) throw notEnumerable("(m-1) m outputs; only up to " + MAX_CHANNEL_OUTPUTS);
        double[] row = new double[(int) outputs];
        Arrays.fill(row, qPosition / (m - 1));
        for (int a = 1; a < m; a++) {
            for (int i = 0; i < subsetSize; i++) {
                long y = (item - LocalHashing.mulMod(a, i, m) + m) % m;
                row[(int) ((a - 1) * (long) m + y)] = pPosition / (m - 1);
            }
        }
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }
}
