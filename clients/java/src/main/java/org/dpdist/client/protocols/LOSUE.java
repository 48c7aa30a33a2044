package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.IncompatibleStateError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;

/**
 * Longitudinal OSUE, "l-osue" (Arcolezi, Couchot, Al Bouna &amp; Xiao, ICDE 2022, sec. 4; {@code dpdist.local.frequency.l_osue}):
 * OUE(eps_inf) memoized per value, then SUE with the IRR budget of eps_1 (the rounds chained and the device's
 * {@link Memo}: {@link Longitudinal}; the bits: {@link UnaryEncoding}).
 */
public final class LOSUE extends UnaryEncoding implements Longitudinal {
    public static final String PROTOCOL = "l-osue";

    public final double p1;
    public final double q1;
    public final double p2;
    public final double q2;
    public final long p2Threshold;
    public final long q2Threshold;

    public LOSUE(Map<String, Object> config) {
        super(PROTOCOL, config, (epsilon, d) -> new double[] {0.5, 1.0 / (Libm.exp(epsilon) + 1.0)}, "epsilon_1", Params.EPSILON);
        double target = ((Number) params.get("epsilon_1")).doubleValue();
        Longitudinal.checkBudgets(display(), epsilon(), target);
        this.p1 = p;
        this.q1 = q;
        double low = 0.0;
        double high = 2.0 * (epsilon() + target) + 64.0;
        for (int step = 0; step < 200; step++) {
            // bisection on the IRR budget, keeping the side at or below the target (Python's loop)
            double middle = 0.5 * (low + high);
            double[] irr = irrProbabilities(middle);
            double[] chained = Longitudinal.chain(p1, q1, irr[0], irr[1]);
            if (Libm.log((chained[0] * (1 - chained[1])) / (chained[1] * (1 - chained[0]))) <= target) low = middle;
            else high = middle;
        }
        double[] irr = irrProbabilities(low);
        this.p2 = irr[0];
        this.q2 = irr[1];
        this.p2Threshold = (long) Libm.jsRound(p2 * SCALE);
        this.q2Threshold = (long) Libm.jsRound(q2 * SCALE);
        double[] chained = Longitudinal.chain(p1, q1, p2, q2);
        this.p = chained[0];
        this.q = chained[1];
    }

    /** SUE bits of budget {@code epsilonIrr} realized on the 2^-32 grid (p rounded down, q up), as Python. */
    private static double[] irrProbabilities(double epsilonIrr) {
        double half = Libm.exp(epsilonIrr / 2);
        double p = half / (half + 1);
        return new double[] {Math.floor(p * SCALE) / SCALE, Math.ceil((1 - p) * SCALE) / SCALE};
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("pThreshold", pThreshold, "qThreshold", qThreshold, "p2Threshold", p2Threshold, "q2Threshold", q2Threshold);
    }

    @Override
    public Losses losses() {
        double epsilonI = domainSize() * Libm.log(Math.max(p2 / q2, (1 - q2) / (1 - p2))); // all d bits may differ
        return new Losses(domainSize(), false, Libm.log((p * (1 - q)) / (q * (1 - p))), Libm.log((p1 * (1 - q1)) / (q1 * (1 - p1))), epsilonI);
    }

    @Override
    public long bucketOf(int item, Object randomness) {
        return item;
    }

    /** Round one of an item: OUE bits, packed (what the device memoizes). */
    @Override
    public Object permanentResponse(long key, RandomSource source, Object randomness) {
        byte[] bytes = new byte[rowBytes()];
        super.writeReport((int) key, source, bytes, 0); // OUE's thresholds
        return bytes;
    }

    /** Round two: each memoized bit is 1 w.p. p2 if it was 1, w.p. q2 if it was 0. */
    @Override
    public void writeMemoized(Object memoized, RandomSource source, byte[] out, int offset, Object randomness) {
        byte[] memo = (byte[]) memoized;
        int d = domainSize();
        int[] words = WORDS.get();
        for (int chunk = 0; chunk < d; chunk += 8192) {
            int size = Math.min(8192, d - chunk);
            source.words(size, words);
            for (int j = 0; j < size; j += 8) {
                int value = 0;
                int stop = Math.min(j + 8, size);
                for (int k = j; k < stop; k++) {
                    int item = chunk + k;
                    boolean was = ((memo[item >> 3] >> (7 - (item & 7))) & 1) != 0;
                    value |= ((words[k] & 0xffffffffL) < (was ? p2Threshold : q2Threshold) ? 1 : 0) << (7 - (k - j));
                }
                out[offset + ((chunk + j) >> 3)] = (byte) value;
            }
        }
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        writeMemoized(permanentResponse(item, source, null), source, bytes, offset, null);
    }

    /** Memo entries as Python's MemoizedClient.to_dict writes them (the packed bytes as a list). */
    @Override
    public Object memoToJson(Object memoized) {
        java.util.List<Object> out = new java.util.ArrayList<>();
        for (byte value : (byte[]) memoized) out.add((long) (value & 0xff));
        return out;
    }

    @Override
    public Object memoFromJson(Object value, long key) {
        java.util.List<Object> list = Json.asList(value);
        boolean ok = list != null && list.size() == rowBytes();
        byte[] out = new byte[rowBytes()];
        for (int i = 0; ok && i < out.length; i++) {
            Object entry = list.get(i);
            ok = Json.isInteger(entry) && ((Number) entry).doubleValue() >= 0 && ((Number) entry).doubleValue() <= 255;
            if (ok) out[i] = (byte) ((Number) entry).intValue();
        }
        if (!ok) throw new IncompatibleStateError("A memo maps items to lists of " + rowBytes() + " bytes. Got an entry that does not (not shown: a user's value is private).");
        return out;
    }
}
