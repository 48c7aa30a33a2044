package org.dpdist.client.protocols;

import org.dpdist.client.Grid;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.RandomSource;

/**
 * A protocol whose device must keep a {@link Memo} (l-grr, l-osue, loloha, dbitflippm): reports over time through
 * memoized two-round randomization (Arcolezi, Couchot, Al Bouna &amp; Xiao, ICDE 2022, sec. 4;
 * {@code dpdist.local.frequency.longitudinal}), as the JavaScript client's {@code src/protocols/_longitudinal.js}.
 *
 * <p>Round one, the permanent randomized response (PRR), randomizes a value once with eps_inf and the device memoizes the
 * result per memo key; every report applies a fresh instantaneous randomized response (IRR) to the memoized output,
 * with the IRR budget chosen so that one report is exactly eps_1-LDP.  Any number of reports of the same value is then
 * eps_inf-LDP (post-processing of one PRR), provided the device keeps its memo.  {@code privatize} without a memo draws
 * both rounds afresh (one report per user, the chain's channel), as Python's {@code privatize} does.
 */
public interface Longitudinal {
    /** The memo's keys and the losses a device's privacy ledger charges (Python's epsilon_per_report, ...). */
    final class Losses {
        public final long keys;
        public final boolean userRandomness;
        public final double epsilon1;
        public final double epsilonInf;
        public final double epsilonI;

        public Losses(long keys, boolean userRandomness, double epsilon1, double epsilonInf, double epsilonI) {
            this.keys = keys;
            this.userRandomness = userRandomness;
            this.epsilon1 = epsilon1;
            this.epsilonInf = epsilonInf;
            this.epsilonI = epsilonI;
        }
    }

    /** The memo's keys, whether the device keeps user randomness, and the losses. */
    Losses losses();

    /** The device's user randomness (LOLOHA's hash function, dBitFlipPM's buckets), drawn once; null for none. */
    default Object drawUserRandomness(RandomSource source) {
        return null;
    }

    /** The JSON form of the user randomness (Python's {@code BucketMemoClient.to_dict}). */
    default Object randomnessToJson(Object randomness) {
        return null;
    }

    /** The user randomness of its JSON form, or IncompatibleStateError. */
    default Object checkUserRandomness(Object json) {
        return null;
    }

    /** The memo key of a checked item (the item, or its hash under the device's function). */
    long bucketOf(int item, Object randomness);

    /** Round one: what the device memoizes for {@code key}. */
    Object permanentResponse(long key, RandomSource source, Object randomness);

    /** Round two of a memoized response: one report at {@code offset}. */
    void writeMemoized(Object memoized, RandomSource source, byte[] bytes, int offset, Object randomness);

    /** A memo entry as Python's {@code to_dict} writes it. */
    Object memoToJson(Object memoized);

    /** A memo entry of its JSON form, or IncompatibleStateError. */
    Object memoFromJson(Object value, long key);

    /** Probabilities of the two rounds chained: a report supports the true item w.p. p, another w.p. q. */
    static double[] chain(double p1, double q1, double p2, double q2) {
        return new double[] {p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2};
    }

    /** Refuse epsilon_1 (one report) that is not below epsilon (the longitudinal bound). */
    static void checkBudgets(String display, double epsilon, double epsilon1) {
        if (!(epsilon1 < epsilon)) {
            throw new InvalidParameterError("The 'epsilon_1' parameter of " + display + " (one report) must be below 'epsilon' (the longitudinal bound). "
                + "Got epsilon_1=" + epsilon1 + " and epsilon=" + epsilon + " instead.");
        }
    }

    /**
     * {keep1, keep2} of the two GRR rounds over {@code d} values (Python's {@code _grr_keeps}): round one's ratio
     * 1 + d keep1 / (1 - keep1) is at most e^eps_inf; the chain is GRR with keep1 keep2, at most e^eps_1, i.e.
     * keep1 keep2 &lt;= (E1 - 1) / (E1 - 1 + d).  Both are the largest multiples of 2^-53 that satisfy these exactly.
     */
    static double[] grrKeeps(long d, double epsilon, double epsilon1) {
        double keep1 = Grid.mixtureKeep(epsilon, 1, d);
        if (!(keep1 > 0)) return new double[] {keep1, 0};
        Grid.Rational e = Grid.expLower(epsilon1);
        Grid.Rational k = Grid.fractionOf(keep1);
        java.math.BigInteger gap = e.numerator.subtract(e.denominator);
        double keep2 = Grid.gridFloor(new Grid.Rational(gap.multiply(k.denominator),
            gap.add(java.math.BigInteger.valueOf(d).multiply(e.denominator)).multiply(k.numerator)));
        return new double[] {keep1, Math.min(keep2, 1 - Math.scalb(1.0, -53))}; // below 1: the IRR keeps q2 > 0 (Python's cap)
    }

    /** {p, q} of GRR over {@code d} values with keep probability {@code keep} (Python's {@code _grr_probabilities}). */
    static double[] grrProbabilities(double keep, long d) {
        double q = (1.0 - keep) / d;
        return new double[] {keep + q, q};
    }
}
