package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Generalized randomized response, "grr" (Kairouz, Bonawitz, Ramage 2016; {@code dpdist.local.frequency.grr}): keep the
 * true item with probability lambda (ideally (e^eps - 1) / (e^eps + d - 1)), otherwise report a uniform item of all d:
 * Pr[v] = lambda + (1 - lambda)/d = p, Pr[other] = (1 - lambda)/d = q.  lambda is Python's: the largest multiple of
 * 2^-53 whose ratio is at most e^eps ({@link Grid#mixtureKeep}).  Both draws are exact: Bernoulli(lambda) for the
 * double lambda, a uniform index by rejection.
 */
public final class GRR extends FrequencyProtocol {
    public static final String PROTOCOL = "grr";

    /** lambda, the probability of keeping the item. */
    public final double keep;

    public GRR(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules(), Params.defaults("labels", null));
        this.keep = Grid.mixtureKeep(epsilon(), 1, domainSize());
        this.format = ReportFormat.itemReports(domainSize());
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("keep", keep);
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        boolean kept = source.bernoulli(keep);
        long other = source.uniformInt(domainSize()); // drawn either way: the draws must not tell whether it is kept
        format.write(bytes, offset, 0, kept ? item : other);
    }

    /** Exact law of the report for input {@code item}, indexed by the reported item. */
    @Override
    public double[] channelRow(int item) {
        int d = domainSize();
        double[] row = new double[d];
        Arrays.fill(row, (1 - keep) / d);
        row[item] += keep;
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }
}
