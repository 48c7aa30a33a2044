package org.dpdist.client.protocols;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

import org.dpdist.client.IncompatibleStateError;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Longitudinal local hashing with memoization, "loloha" (Arcolezi, Pinzón, Palamidessi &amp; Gambs, EDBT 2023,
 * Algorithm 1; {@code dpdist.local.frequency.loloha}).  A device draws one hash function h of OLH's family [d] -&gt; [g]
 * once and keeps it (its user randomness, the seed); a value v is hashed to x = h(v); the permanent response
 * x' = GRR_g(x; eps_inf) is memoized per hashed value x; every report is (seed, GRR_g(x'; p2, q2)), so one report is
 * eps_1-LDP, any number of reports of one value eps_inf-LDP, and values that change spend at most g eps_inf.  Variants:
 * "optimal" (OLOLOHA's g, sec. 4.3) and "binary" (g = 2).  Reports are OLH's uint64 pairs (seed, value).
 */
public final class LOLOHA extends FrequencyProtocol implements Longitudinal {
    public static final String PROTOCOL = "loloha";
    private static final long MAX_CHANNEL_OUTPUTS = 1 << 20;

    public final long prime;
    public final long g;
    public final double keep1;
    public final double keep2;
    public final double p1;
    public final double q1;
    public final double p2;
    public final double q2;
    public final double p;
    public final double qOther;

    public LOLOHA(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules("epsilon_1", Params.EPSILON, "variant", Params.options("optimal", "binary"),
            "hash_prime", Params.integer(3, LocalHashing.MERSENNE_31)), Params.defaults("labels", null, "variant", "optimal", "hash_prime", LocalHashing.MERSENNE_31));
        double epsilon1 = ((Number) params.get("epsilon_1")).doubleValue();
        long chosen = ((Number) params.get("hash_prime")).longValue();
        if (!(epsilon1 < epsilon())) {
            throw new InvalidParameterError("The 'epsilon_1' parameter of LOLOHA (one report) must be below 'epsilon' (the longitudinal bound). Got epsilon_1="
                + epsilon1 + " and epsilon=" + epsilon() + " instead.");
        }
        if (!LocalHashing.isPrime(chosen)) throw new InvalidParameterError("The 'hash_prime' parameter of LOLOHA must be a prime. Got " + chosen + " instead.");
        if (domainSize() > chosen) {
            throw new InvalidParameterError("The 'domain_size' parameter of LOLOHA must be <= hash_prime = " + chosen + ". Got " + domainSize() + " instead.");
        }
        this.prime = chosen;
        this.g = "binary".equals(params.get("variant")) ? 2 : optimalHashRange(epsilon(), epsilon1);
        double[] keeps = Longitudinal.grrKeeps(g, epsilon(), epsilon1); // the two GRR_g rounds' keeps on the 2^-53 grid
        this.keep1 = keeps[0];
        this.keep2 = keeps[1];
        double[] one = Longitudinal.grrProbabilities(keep1, g);
        double[] two = Longitudinal.grrProbabilities(keep2, g);
        this.p1 = one[0];
        this.q1 = one[1];
        this.p2 = two[0];
        this.q2 = two[1];
        this.p = Longitudinal.chain(p1, q1, p2, q2)[0];
        this.qOther = (1 - p) / (g - 1); // a report's probability of one given wrong hash value
        this.format = ReportFormat.integerRowReports(2, "<u8"); // (seed, value)
    }

    /** OLOLOHA's g from a = e^eps_inf, b = e^eps_1 (the paper's sec. 4.3; Python's optimal_hash_range). */
    public static long optimalHashRange(double epsilon, double epsilon1) {
        double a = Libm.exp(epsilon);
        double b = Libm.exp(epsilon1);
        double radicand = Libm.pow(a, 4) - 14 * Libm.pow(a, 2) - 12 * Libm.pow(a, 2) * Libm.pow(b, 2) + 12 * a * b + 12 * Libm.pow(a, 3) * b + 1;
        if (radicand <= 0) return 2; // tiny budgets: the formula leaves the reals, the smallest g is the optimum
        double g = (Math.sqrt(radicand) - Libm.pow(a, 2) + 6 * a - 6 * b + 1) / (6 * (a - b));
        return Math.max(2, (long) Math.rint(g)); // Python's int(round(x)): ties to even
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("g", g, "keep1", keep1, "keep2", keep2, "p1", p1, "q1", q1, "p2", p2, "q2", q2, "p", p, "qOther", qOther);
    }

    /** The device keeps its seed and memoizes per hashed value (g keys). */
    @Override
    public Losses losses() {
        return new Losses(g, true, Libm.log(p / qOther), Libm.log(p1 / q1), Libm.log(p2 / q2));
    }

    /** A device's hash function {a, b}: seed s = (a - 1) P + b uniform on [0, (P-1)P), a - 1 and b uniform by rejection. */
    @Override
    public Object drawUserRandomness(RandomSource source) {
        long aMinusOne = source.uniformInt(prime - 1);
        return new long[] {aMinusOne + 1, source.uniformInt(prime)};
    }

    /** The JSON form of Python's BucketMemoClient: [seed], a number up to 2^53, else its decimal string. */
    @Override
    public Object randomnessToJson(Object randomness) {
        long[] ab = (long[]) randomness;
        long seed = (ab[0] - 1) * prime + ab[1];
        return java.util.Collections.<Object>singletonList(seed <= (1L << 53) ? (Object) seed : (Object) Long.toString(seed));
    }

    @Override
    public Object checkUserRandomness(Object randomness) {
        BigInteger bigPrime = BigInteger.valueOf(prime);
        BigInteger seeds = bigPrime.subtract(BigInteger.ONE).multiply(bigPrime);
        List<Object> list = Json.asList(randomness);
        Object value = list != null && list.size() == 1 ? list.get(0) : null;
        BigInteger seed = null;
        if (Json.isSafeInteger(value)) seed = BigInteger.valueOf(((Number) value).longValue());
        else if (value instanceof String && ((String) value).matches("[0-9]{1,20}")) seed = new BigInteger((String) value);
        if (seed == null || seed.signum() < 0 || seed.compareTo(seeds) >= 0) {
            throw new IncompatibleStateError("A LOLOHA client's randomness must be one seed in [0, " + seeds
                + ") (an integer, or its decimal string above 2^53). Got another (not shown: a user's value is private).");
        }
        long s = seed.longValue();
        return new long[] {s / prime + 1, s % prime};
    }

    /** The memo key of an item: its hash under the device's function. */
    @Override
    public long bucketOf(int item, Object randomness) {
        long[] ab = (long[]) randomness;
        return LocalHashing.hashItem(ab[0], ab[1], item, prime, g);
    }

    private long grr(long x, double keep, RandomSource source) {
        boolean kept = source.bernoulli(keep);
        long other = source.uniformInt(g); // drawn either way: the draws must not tell whether it is kept
        return kept ? x : other; // keep, else uniform over all g values
    }

    /** PRR: GRR_g(eps_inf) of a hashed value (what the device memoizes). */
    @Override
    public Object permanentResponse(long key, RandomSource source, Object randomness) {
        return grr(key, keep1, source);
    }

    /** IRR: GRR_g(p2, q2) of the memoized hashed value, with the device's seed. */
    @Override
    public void writeMemoized(Object memoized, RandomSource source, byte[] bytes, int offset, Object randomness) {
        long[] ab = (long[]) randomness;
        LocalHashing.writeSeedReport(bytes, offset, ab[0] - 1, ab[1], prime, grr((Long) memoized, keep2, source));
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        Object randomness = drawUserRandomness(source);
        writeMemoized(permanentResponse(bucketOf(item, randomness), source, randomness), source, bytes, offset, randomness);
    }

    @Override
    public Object memoToJson(Object memoized) {
        return memoized;
    }

    @Override
    public Object memoFromJson(Object value, long key) {
        if (!Json.isInteger(value) || ((Number) value).doubleValue() < 0 || ((Number) value).doubleValue() >= g) {
            throw new IncompatibleStateError("A LOLOHA memo maps hash values in [0, " + g + ") to values in [0, " + g + "). Got an entry that does not "
                + "(not shown: a user's value is private).");
        }
        return ((Number) value).longValue();
    }

    /** Exact law of one report over (seed, y), column seed * g + y; small hash_prime only. */
    @Override
    public double[] channelRow(int item) {
        long seeds = (prime - 1) * prime;
        if (seeds * g > MAX_CHANNEL_OUTPUTS) throw notEnumerable("(P-1)P g outputs; only up to " + MAX_CHANNEL_OUTPUTS);
        double[] row = new double[(int) (seeds * g)];
        for (int s = 0; s < seeds; s++) {
            long hashed = LocalHashing.hashItem(s / prime + 1, s % prime, item, prime, g);
            for (int y = 0; y < g; y++) row[(int) (s * g + y)] = (y == hashed ? p : qOther) / seeds;
        }
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return LocalHashing.seedOf(row) * g + LocalHashing.valueOf(row);
    }
}
