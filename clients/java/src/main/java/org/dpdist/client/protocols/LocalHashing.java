package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Bytes;
import org.dpdist.client.Grid;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Local hashing (Wang et al. 2017, sec. 4.4), the machinery of "olh", "rlh" and "ocms":
 * {@code dpdist.local.frequency._local_hashing} and {@code _hashing}.  Hash family h_{a,b}(x) = ((a x + b) mod P) mod g,
 * a in [1, P), b in [0, P); the seed s = (a - 1) P + b is uniform on [0, (P-1)P) when a - 1 and b are independent uniform
 * integers (drawn by rejection).  The hashed value is perturbed by g-ary randomized response in its "keep with
 * probability lambda, else uniform over all g" form, with an exact Bernoulli(lambda) on Python's 2^-53 grid.  Reports
 * are uint64 pairs (seed, value), little-endian.  A subclass gives its name, rules and {@link #hashRange()}.
 */
public abstract class LocalHashing extends FrequencyProtocol {
    public static final long MERSENNE_31 = (1L << 31) - 1;
    private static final long MAX_CHANNEL_OUTPUTS = 1 << 20;

    public final long prime;
    /** The range g of the hash values. */
    public final long g;
    public final double keep;

    /**
     * @param extra the (name, rule) pairs beyond epsilon, domain_size and labels
     * @param defaults their defaults
     */
    protected LocalHashing(String name, Map<String, Object> config, Object[] extra, Object... defaults) {
        super(name, config, Params.frequencyRules(extra), withLabels(defaults));
        long chosen = ((Number) params.get("hash_prime")).longValue();
        if (!isPrime(chosen)) throw new InvalidParameterError("The 'hash_prime' parameter of " + display() + " must be a prime. Got " + chosen + " instead.");
        if (domainSize() > chosen) {
            throw new InvalidParameterError("The 'domain_size' parameter of " + display() + " must be <= hash_prime = " + chosen
                + " (items are hashed modulo that prime). Got " + domainSize() + " instead.");
        }
        this.prime = chosen;
        this.g = hashRange();
        this.keep = Grid.mixtureKeep(epsilon(), 1, g); // on the 2^-53 grid, as Python's
        this.format = ReportFormat.integerRowReports(2, "<u8"); // (seed, value)
    }

    private static Map<String, Object> withLabels(Object[] defaults) {
        Map<String, Object> out = Params.defaults("labels", null);
        out.putAll(Params.defaults(defaults));
        return out;
    }

    /** The range g of the hash values (each subclass's rule). */
    protected abstract long hashRange();

    @Override
    public Map<String, Object> design() {
        return mapOf("g", g, "keep", keep);
    }

    public static boolean isPrime(long n) {
        if (n < 2) return false;
        if (n < 4) return true;
        if (n % 2 == 0) return false;
        for (long k = 3; k * k <= n; k += 2) if (n % k == 0) return false;
        return true;
    }

    /** (a x) mod P, exactly (a, x &lt; 2^31). */
    public static long mulMod(long a, long x, long prime) {
        return (a * x) % prime;
    }

    /** h_{a,b}(item) = ((a item + b) mod P) mod g. */
    public static long hashItem(long a, long b, long item, long prime, long g) {
        return ((mulMod(a, item, prime) + b) % prime) % g;
    }

    /** Write the uint64 pair (seed, value) of a hash report, seed = (a - 1) P + b &lt; 2^62. */
    public static void writeSeedReport(byte[] bytes, int offset, long aMinusOne, long b, long prime, long value) {
        Bytes.putUnsigned(bytes, offset, 8, aMinusOne * prime + b);
        Bytes.putUnsigned(bytes, offset + 8, 8, value);
    }

    /** The seed of a hash report. */
    public static long seedOf(byte[] row) {
        return Bytes.getUnsigned(row, 0, 8);
    }

    /** The reported value of a hash report. */
    public static long valueOf(byte[] row) {
        return Bytes.getUnsigned(row, 8, 8);
    }

    /** h_seed(item) for the seed's coefficients a (&gt;= 1) and b. */
    public long hash(long a, long b, long item) {
        return hashItem(a, b, item, prime, g);
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        long aMinusOne = source.uniformInt(prime - 1);
        long b = source.uniformInt(prime);
        long hashed = hash(aMinusOne + 1, b, item);
        boolean kept = source.bernoulli(keep);
        long other = source.uniformInt(g); // drawn either way: the draws must not tell whether it is kept
        writeSeedReport(bytes, offset, aMinusOne, b, prime, kept ? hashed : other);
    }

    /** Exact law over (seed, value), column seed * g + value; small hash_prime only. */
    @Override
    public double[] channelRow(int item) {
        long seeds = (prime - 1) * prime;
        if (seeds * g > MAX_CHANNEL_OUTPUTS) throw notEnumerable("(P-1)P g outputs; only up to " + MAX_CHANNEL_OUTPUTS);
        int width = (int) g;
        double[] row = new double[(int) (seeds * g)];
        double other = (1 - keep) / g;
        for (int s = 0; s < seeds; s++) {
            long hashed = hash(s / prime + 1, s % prime, item);
            for (int y = 0; y < width; y++) row[s * width + y] = ((y == hashed ? keep : 0) + other) / seeds;
        }
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return seedOf(row) * g + valueOf(row);
    }
}
