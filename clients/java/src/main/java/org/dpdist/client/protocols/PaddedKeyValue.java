package org.dpdist.client.protocols;

import java.math.BigInteger;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.Grid.Rational;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;

/**
 * What PCKV-UE and PCKV-GRR share, as {@code dpdist.local.keyvalue._padded}: the padding length l (default 1), the
 * extended domain d' = d + l of real and dummy keys, Padding-and-Sampling (Gu et al. 2020, Algorithm 1) with draws that
 * do not depend on the set, its law, and the design constants (Python's exact rational arithmetic).
 */
public abstract class PaddedKeyValue extends KeyValueProtocol {
    private static final Rational ONE = Rational.of(1);
    private static final Rational TWO = Rational.of(2);

    protected PaddedKeyValue(String name, Map<String, Object> config) {
        super(name, config, new Object[] {"padding_length", Params.integer(1, 1 << 20)}, Params.defaults("padding_length", 1L));
    }

    public int paddingLength() {
        return ((Number) params.get("padding_length")).intValue();
    }

    /** d' = d + l: the real and the dummy keys. */
    public int extendedSize() {
        return domainSize() + paddingLength();
    }

    /** PCKV-UE's {a, b, p}: a = 1/2, p the grid probability of odds e^eps, b the smallest grid b with 2p(1-b)/b &lt;= e^eps. */
    public static double[] ueConstants(double epsilon) {
        Rational bound = Grid.expLower(epsilon);
        double pDouble = Grid.oddsProbability(bound);
        Rational p = Grid.fractionOf(pDouble);
        double b = Grid.gridCeil(TWO.times(p).dividedBy(bound.plus(TWO.times(p))));
        return new double[] {0.5, b, pDouble};
    }

    /** PCKV-GRR's {a, p}: p of odds l(e^eps - 1) + 1, a the largest grid value whose Theorem 3 epsilon is at most eps. */
    public static double[] grrConstants(double epsilon, int ell, int width) {
        Rational bound = Grid.expLower(epsilon);
        Rational l = Rational.of(ell);
        double pDouble = Grid.oddsProbability(l.times(bound.minus(ONE)).plus(ONE));
        Rational p = Grid.fractionOf(pDouble);
        Rational e2 = p.dividedBy(ONE.minus(p));
        Rational c = e2.plus(ONE).dividedBy(TWO);
        Rational lam = l.minus(ONE).times(c);
        Rational above = bound.times(c.plus(lam)).minus(lam).dividedBy(e2);
        Rational x = above.atLeast(c) ? above : lam.times(bound.minus(ONE)).dividedBy(e2.minus(bound));
        double a = Grid.gridFloor(x.dividedBy(x.plus(new Rational(BigInteger.valueOf(width - 1), BigInteger.ONE))));
        return new double[] {a, pDouble};
    }

    /** The sampled key of [0, d') and whether v* = +1. */
    protected static final class Sample {
        final int key;
        final boolean up;

        Sample(int key, boolean up) {
            this.key = key;
            this.up = up;
        }
    }

    /**
     * Padding-and-Sampling: a uniform slot of the padded set (max(|S|, l) slots, the first |S| the real pairs) by
     * reservoir over every slot a set may have, so that the draws are the same for every set; a dummy slot takes a
     * uniform dummy key (drawn either way).
     */
    protected Sample sample(KeyValueSet set, RandomSource source) {
        int ell = paddingLength();
        int size = set.keys.length;
        int width = Math.max(size, ell);
        int most = Math.max(domainSize(), ell);
        int slot = (int) source.uniformInt(ell);
        for (int j = ell + 1; j <= most; j++) {
            boolean replace = source.uniformInt(j) == 0;
            if (replace && j <= width) slot = j - 1;
        }
        int dummy = domainSize() + (int) source.uniformInt(ell);
        boolean real = slot < size;
        boolean up = discretize(real ? set.values[slot] : 0, source);
        return new Sample(real ? set.keys[slot] : dummy, up);
    }

    /** {@code law[2k + s]}: Pr[sampled key k of d' with v* = +1 (s = 0) or -1 (s = 1)] (Python's {@code _sample_law}). */
    protected double[] sampleLaw(KeyValueSet set) {
        int ell = paddingLength();
        int size = set.keys.length;
        int width = Math.max(size, ell);
        double[] law = new double[2 * extendedSize()];
        for (int at = 0; at < size; at++) {
            double up = up(set.values[at]);
            law[2 * set.keys[at]] = up / width;
            law[2 * set.keys[at] + 1] = (1.0 - up) / width;
        }
        double dummy = (1.0 - (double) size / width) / ell / 2.0;
        for (int k = domainSize(); k < extendedSize(); k++) law[2 * k] = law[2 * k + 1] = dummy;
        return law;
    }

    /** A config whose d' is too large for an exact law refuses channelRow (the tests then sample only). */
    protected InvalidParameterError refuseChannel(int width, int most) {
        return new InvalidParameterError(display() + ".channelRow enumerates the outputs over d + padding_length <= " + most + " keys. Got " + width + ".");
    }

    @Override
    public long statisticSize() {
        return 2L * extendedSize();
    }
}
