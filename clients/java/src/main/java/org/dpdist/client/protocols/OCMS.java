package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;

/**
 * Optimized count-mean sketch with randomized response, "ocms" (Pan, IEEE CSF 2025, Algorithm 1;
 * {@code dpdist.local.frequency.ocms}).  The report is OLH's ({@link LocalHashing}): a hash function of the
 * Carter-Wegman family drawn per user, and the hashed item perturbed by m-ary randomized response.  What OCMS+RR
 * changes is the width m (Algorithm 1, HASHRANGE; eq. 13, 20 and Theorem 3.8), derived from epsilon as Python does:
 * worst-case with f* &gt; 1/2: 1 + e^(eps/2); worst-case with f* &lt;= 1/2: 1 + Delta / (f* e^eps + 1 - f*),
 * Delta = e^(eps/2) sqrt([(1-f*)e^eps + f*][f* e^eps + 1 - f*]); l2: 1 + Delta_l / (e^eps + d - 1),
 * Delta_l = e^(eps/2) sqrt((e^eps + d - 1)(d e^eps - e^eps + 1)); the better of the two integers around them by the loss
 * of eq. 19 / 21 (the smaller on a tie), kept in [2, 2^20].
 */
public final class OCMS extends LocalHashing {
    public static final String PROTOCOL = "ocms";
    private static final double MAX_WIDTH = 1 << 20;

    public OCMS(Map<String, Object> config) {
        super(PROTOCOL, config,
            new Object[] {"objective", Params.options("worst-case", "l2"), "max_frequency", Params.closed(0, 1), "hash_prime", Params.integer(3, MERSENNE_31)},
            "objective", "worst-case", "max_frequency", 1.0, "hash_prime", MERSENNE_31);
    }

    /** The loss of width m for n = 1 and collision probability 1/m (eq. 19, 21), as Python's _loss. */
    private static double loss(double width, double e, int domainSize, String objective, double maxFrequency) {
        double p = e / (e + width - 1.0);
        double q = 1.0 / width;
        double scale = Libm.pow(p - q, 2);
        if (objective.equals("l2")) return (p * (1.0 - p) + (domainSize - 1.0) * q * (1.0 - q)) / scale;
        double atZero = (q * (1.0 - q)) / scale;
        double atBound = (maxFrequency * p * (1.0 - p) + (1.0 - maxFrequency) * q * (1.0 - q)) / scale;
        return Math.max(atZero, atBound);
    }

    /** The width m of OCMS+RR (Python's ocms_hash_range): the better of the two integers around the paper's optimum. */
    public static long ocmsHashRange(double epsilon, int domainSize, String objective, double maxFrequency) {
        double e = Libm.exp(epsilon);
        double root = Libm.exp(epsilon / 2);
        double optimum;
        if (objective.equals("l2")) {
            double delta = root * Math.sqrt((e + domainSize - 1.0) * (domainSize * e - e + 1.0));
            optimum = 1.0 + delta / (e + domainSize - 1.0);
        } else if (maxFrequency > 0.5) {
            optimum = 1.0 + root;
        } else {
            double f = maxFrequency;
            double delta = root * Math.sqrt(((1.0 - f) * e + f) * (f * e + 1.0 - f));
            optimum = 1.0 + delta / (f * e + 1.0 - f);
        }
        double low = Math.min(MAX_WIDTH, Math.max(2, Math.floor(optimum)));
        double high = Math.min(MAX_WIDTH, low + 1);
        return (long) (loss(high, e, domainSize, objective, maxFrequency) < loss(low, e, domainSize, objective, maxFrequency) ? high : low);
    }

    /** The width m (Algorithm 1), after Python's check that f* is in [1/d, 1] (some item has at least 1/d). */
    @Override
    protected long hashRange() {
        double bound = ((Number) params.get("max_frequency")).doubleValue();
        int d = domainSize();
        if (!(bound * d >= 1.0 - 1e-12)) {
            throw new InvalidParameterError("The 'max_frequency' parameter of " + display() + " must be in [1/d, 1] = ["
                + Json.sixDigits(1.0 / d) + ", 1] with d = domain_size = " + d
                + " (the d frequencies sum to 1, so some item has at least 1/d). Got " + bound + " instead.");
        }
        return ocmsHashRange(epsilon(), d, (String) params.get("objective"), bound);
    }
}
