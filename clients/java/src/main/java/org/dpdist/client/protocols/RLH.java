package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Libm;
import org.dpdist.client.Params;

/**
 * Re-optimized local hashing, "rlh" (Fang, Chen &amp; Liu, USENIX Security 2025; {@code dpdist.local.frequency.rlh}):
 * OLH's family, randomizer and reports ({@link LocalHashing}) with the range g that minimizes the mean MSE: the floor
 * or the ceiling of h e^eps + 1, h = sqrt((d - 1 + e^-eps)/(d - 1 + e^eps)), whichever has the lower
 * q(1-q)/(p-q)^2 + (1-p-q)/(d(p-q)) with p = e^eps/(e^eps + g - 1), q = 1/g (the smaller on a tie), with the same
 * operations as Python's so the same g.
 */
public final class RLH extends LocalHashing {
    public static final String PROTOCOL = "rlh";

    public RLH(Map<String, Object> config) {
        super(PROTOCOL, config, new Object[] {"hash_prime", Params.integer(3, MERSENNE_31)}, "hash_prime", MERSENNE_31);
    }

    /** The paper's mean MSE (times n) of local hashing into g values with q* = 1/g. */
    private static double meanMse(double epsilon, int d, double g) {
        double e = Libm.exp(epsilon);
        double pStar = e / (e + g - 1);
        double qStar = 1.0 / g;
        double gap = pStar - qStar;
        return (qStar * (1 - qStar)) / (gap * gap) + (1 - pStar - qStar) / (d * gap);
    }

    @Override
    protected long hashRange() {
        double e = Libm.exp(epsilon());
        int d = domainSize();
        double h = Math.sqrt((d - 1 + 1.0 / e) / (d - 1 + e));
        double optimum = h * e + 1.0;
        double low = Math.max(2, Math.floor(optimum));
        double high = Math.max(2, Math.ceil(optimum));
        return (long) (meanMse(epsilon(), d, high) < meanMse(epsilon(), d, low) ? high : low);
    }
}
