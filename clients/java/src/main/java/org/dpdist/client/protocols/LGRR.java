package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.IncompatibleStateError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Longitudinal GRR, "l-grr" (Arcolezi, Couchot, Al Bouna &amp; Xiao, ICDE 2022, sec. 4; {@code dpdist.local.frequency.l_grr}):
 * GRR(eps_inf) memoized per value, then GRR with the IRR budget of eps_1, so one report is exactly eps_1-LDP (the two
 * rounds' constants and the device's {@link Memo}: {@link Longitudinal}).
 */
public final class LGRR extends FrequencyProtocol implements Longitudinal {
    public static final String PROTOCOL = "l-grr";

    public final double keep1;
    public final double keep2;
    public final double p1;
    public final double q1;
    public final double p2;
    public final double q2;
    public final double p;
    public final double q;

    public LGRR(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules("epsilon_1", Params.EPSILON), Params.defaults("labels", null));
        Longitudinal.checkBudgets(display(), epsilon(), ((Number) params.get("epsilon_1")).doubleValue());
        int d = domainSize();
        double[] keeps = Longitudinal.grrKeeps(d, epsilon(), ((Number) params.get("epsilon_1")).doubleValue());
        this.keep1 = keeps[0];
        this.keep2 = keeps[1];
        double[] one = Longitudinal.grrProbabilities(keep1, d);
        double[] two = Longitudinal.grrProbabilities(keep2, d);
        this.p1 = one[0];
        this.q1 = one[1];
        this.p2 = two[0];
        this.q2 = two[1];
        double[] chained = Longitudinal.chain(p1, q1, p2, q2);
        this.p = chained[0];
        this.q = chained[1];
        this.format = ReportFormat.itemReports(d);
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("keep1", keep1, "keep2", keep2, "p1", p1, "q1", q1, "p2", p2, "q2", q2);
    }

    /** The device memoizes per value (no user randomness): the memo key of an item is the item. */
    @Override
    public Losses losses() {
        return new Losses(domainSize(), false, Libm.log(p / q), Libm.log(p1 / q1), Libm.log(p2 / q2));
    }

    @Override
    public long bucketOf(int item, Object randomness) {
        return item;
    }

    private long grr(long item, double keep, RandomSource source) {
        boolean kept = source.bernoulli(keep);
        long other = source.uniformInt(domainSize()); // drawn either way: the draws must not tell whether it is kept
        return kept ? item : other; // keep, else uniform over all d
    }

    /** Round one of an item: what the device memoizes (an item). */
    @Override
    public Object permanentResponse(long key, RandomSource source, Object randomness) {
        return grr(key, keep1, source);
    }

    @Override
    public void writeMemoized(Object memoized, RandomSource source, byte[] bytes, int offset, Object randomness) {
        format.write(bytes, offset, 0, grr((Long) memoized, keep2, source));
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        writeMemoized(permanentResponse(item, source, null), source, bytes, offset, null);
    }

    @Override
    public Object memoToJson(Object memoized) {
        return memoized;
    }

    @Override
    public Object memoFromJson(Object value, long key) {
        if (!Json.isInteger(value) || ((Number) value).doubleValue() < 0 || ((Number) value).doubleValue() >= domainSize()) {
            throw new IncompatibleStateError("A memo maps items to items in [0, " + domainSize() + "). Got an entry that does not (not shown: a user's value is private).");
        }
        return ((Number) value).longValue();
    }

    /** Exact law of one report (both rounds) for input {@code item}, indexed by the reported item. */
    @Override
    public double[] channelRow(int item) {
        double[] row = new double[domainSize()];
        Arrays.fill(row, q);
        row[item] = p;
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }
}
