package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Libm;
import org.dpdist.client.Params;

/**
 * Optimized local hashing, "olh" (Wang et al. 2017, sec. 4.4; {@code dpdist.local.frequency.olh}): local hashing
 * ({@link LocalHashing}: the family, the randomizer, the reports) with g = hash_range, else round(e^eps + 1) with
 * Python's round-half-even.
 */
public final class OLH extends LocalHashing {
    public static final String PROTOCOL = "olh";

    public OLH(Map<String, Object> config) {
        super(PROTOCOL, config,
            new Object[] {"hash_range", Params.optional(Params.integer(2, 1 << 20)), "hash_prime", Params.integer(3, MERSENNE_31)},
            "hash_range", null, "hash_prime", MERSENNE_31);
    }

    /** The range g: hash_range, else round(e^eps + 1) (Python's round-half-even). */
    @Override
    protected long hashRange() {
        Object range = params.get("hash_range");
        if (range != null) return ((Number) range).longValue();
        return Math.max(2, (long) Libm.roundHalfEven(Libm.exp(epsilon()) + 1.0));
    }
}
