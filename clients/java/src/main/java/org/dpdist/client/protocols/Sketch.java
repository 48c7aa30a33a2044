package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongBinaryOperator;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;

/**
 * Apple's count-mean sketches (Apple's Differential Privacy Team, "Learning with Privacy at Scale", 2017, sec. 3), the
 * base of "cms" (Alg. 1) and "hcms" (Alg. 3), as {@code dpdist.local.frequency.cms / .hcms}: the parameters, the public
 * hash family ({@link HashFamily}: one of k Carter-Wegman functions h_j(x) = ((a_j x + b_j) mod P) mod m), h_j(item).
 */
public abstract class Sketch extends FrequencyProtocol {
    /** the sketch's table, not the domain, is the aggregate (Python's SketchOracle._bytes_per_item; its size is checked apart). */
    @Override
    protected int bytesPerItem() {
        return 0;
    }

    private static final long MAX_TABLE_CELLS = 1 << 24;
    static final long MAX_CHANNEL_OUTPUTS = 1 << 20;

    public final int k;
    public final int m;
    public final long prime;
    protected final long[][] coefficients;

    /** @param tableCells (k, m) -&gt; the counts the aggregator keeps */
    protected Sketch(String name, Map<String, Object> config, LongBinaryOperator tableCells) {
        super(name, config, Params.frequencyRules(
            "hash_count", Params.integer(1, MAX_TABLE_CELLS / 2), "width", Params.integer(2, 1 << 20),
            "hash_prime", Params.integer(3, LocalHashing.MERSENNE_31), "family_seed", Params.integer(0, 9007199254740991L)),
            Params.defaults("labels", null, "hash_count", 2048L, "width", 1024L, "hash_prime", LocalHashing.MERSENNE_31, "family_seed", 0L));
        int count = ((Number) params.get("hash_count")).intValue();
        int width = ((Number) params.get("width")).intValue();
        long chosen = ((Number) params.get("hash_prime")).longValue();
        if (!LocalHashing.isPrime(chosen)) throw new InvalidParameterError("The 'hash_prime' parameter of " + display() + " must be a prime. Got " + chosen + " instead.");
        if (domainSize() > chosen) {
            throw new InvalidParameterError("The 'domain_size' parameter of " + display() + " must be <= hash_prime = " + chosen
                + " (items are hashed modulo that prime). Got " + domainSize() + " instead.");
        }
        if ((width & (width - 1)) != 0) throw new InvalidParameterError("The 'width' parameter of " + display() + " must be a power of two. Got " + width + " instead.");
        long cells = tableCells.applyAsLong(count, width);
        if (cells > MAX_TABLE_CELLS) {
            throw new InvalidParameterError(display() + " would keep a table of " + cells + " counts for hash_count = " + count + " and width = " + width
                + "; it must be <= " + MAX_TABLE_CELLS + ". Lower 'hash_count' (or 'width').");
        }
        this.k = count;
        this.m = width;
        this.prime = chosen;
        this.coefficients = HashFamily.coefficients(((Number) params.get("family_seed")).longValue(), count, chosen);
    }

    /** h_j(item). */
    public int hashed(int j, int item) {
        return (int) LocalHashing.hashItem(coefficients[j][0], coefficients[j][1], item, prime, m);
    }

    /** The family's (a, b) pairs, as the client view states them. */
    protected List<Object> coefficientList() {
        List<Object> out = new ArrayList<>();
        for (long[] pair : coefficients) out.add(listOf(pair[0], pair[1]));
        return out;
    }
}
