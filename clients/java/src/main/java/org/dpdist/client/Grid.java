package org.dpdist.client;

import java.math.BigInteger;
import java.util.function.LongToIntFunction;
import java.util.function.IntUnaryOperator;

/**
 * Bernoulli thresholds on the 2^-53 grid, as {@code dpdist.local._bernoulli} computes them, bit for bit (the JavaScript
 * client's {@code src/grid.js}).
 *
 * <p>The Python randomizers draw {@code U < t} with U = k 2^-53 (NumPy's Generator.random()), which has probability
 * ceil(t 2^53) / 2^53: to realize exactly the probability the privacy claim is about, every threshold is a multiple of
 * 2^-53, the largest whose likelihood ratio is at most e^eps in exact rational arithmetic, against the lower bound
 * E = fl(e^eps) (1 - 2^-50) of e^eps.  This client's Bernoulli draw is exact for any double, so drawing with the same
 * grid value gives the same law as the Python sampler.  Rationals are {@link Rational} pairs of BigIntegers.
 */
public final class Grid {
    static final BigInteger GRID = BigInteger.ONE.shiftLeft(53);
    /** 2^53 as a double and a long. */
    public static final double GRID_DOUBLE = 9007199254740992.0;
    public static final long GRID_LONG = 1L << 53;
    private static final int MARGIN_BITS = 50;

    private Grid() {
    }

    /** An exact rational n / d (d &gt; 0). */
    public static final class Rational {
        public final BigInteger numerator;
        public final BigInteger denominator;

        public Rational(BigInteger numerator, BigInteger denominator) {
            if (denominator.signum() < 0) {
                numerator = numerator.negate();
                denominator = denominator.negate();
            }
            this.numerator = numerator;
            this.denominator = denominator;
        }

        public static Rational of(long value) {
            return new Rational(BigInteger.valueOf(value), BigInteger.ONE);
        }

        public static Rational of(long numerator, long denominator) {
            return new Rational(BigInteger.valueOf(numerator), BigInteger.valueOf(denominator));
        }

        public Rational plus(Rational other) {
            return new Rational(numerator.multiply(other.denominator).add(other.numerator.multiply(denominator)), denominator.multiply(other.denominator));
        }

        public Rational minus(Rational other) {
            return new Rational(numerator.multiply(other.denominator).subtract(other.numerator.multiply(denominator)), denominator.multiply(other.denominator));
        }

        public Rational times(Rational other) {
            return new Rational(numerator.multiply(other.numerator), denominator.multiply(other.denominator));
        }

        public Rational dividedBy(Rational other) {
            return new Rational(numerator.multiply(other.denominator), denominator.multiply(other.numerator));
        }

        /** Whether this &gt;= other. */
        public boolean atLeast(Rational other) {
            return numerator.multiply(other.denominator).compareTo(other.numerator.multiply(denominator)) >= 0;
        }
    }

    /** The exact value of a finite double as a rational (its denominator a power of two). */
    public static Rational fractionOf(double x) {
        if (!Double.isFinite(x)) throw new IllegalArgumentException("fractionOf needs a finite number, got " + x);
        long bits = Double.doubleToRawLongBits(x);
        boolean negative = bits < 0;
        int exponent = (int) ((bits >>> 52) & 0x7ff);
        long mantissa = bits & ((1L << 52) - 1);
        if (exponent != 0) mantissa |= 1L << 52;
        int shift = (exponent == 0 ? 1 : exponent) - 1075; // x = mantissa 2^shift
        BigInteger numerator = BigInteger.valueOf(negative ? -mantissa : mantissa);
        if (shift >= 0) return new Rational(numerator.shiftLeft(shift), BigInteger.ONE);
        return new Rational(numerator, BigInteger.ONE.shiftLeft(-shift));
    }

    /** A rational lower bound of e^x: exp(x) (1 - 2^-50) ({@code _bernoulli.exp_lower}). */
    public static Rational expLower(double x) {
        Rational e = fractionOf(Libm.exp(x));
        return new Rational(e.numerator.multiply(BigInteger.ONE.shiftLeft(MARGIN_BITS).subtract(BigInteger.ONE)), e.denominator.shiftLeft(MARGIN_BITS));
    }

    /** The largest multiple of 2^-53 at most {@code value}, within [0, 1], as a double ({@code grid_floor}). */
    public static double gridFloor(Rational value) {
        BigInteger scaled = value.numerator.multiply(GRID);
        BigInteger[] qr = scaled.divideAndRemainder(value.denominator); // truncates toward zero
        BigInteger k = qr[0];
        if (scaled.signum() < 0 && qr[1].signum() != 0) k = k.subtract(BigInteger.ONE);
        return clampToGrid(k);
    }

    /** The smallest multiple of 2^-53 at least {@code value}, within [0, 1] ({@code grid_ceil}). */
    public static double gridCeil(Rational value) {
        BigInteger scaled = value.numerator.multiply(GRID);
        BigInteger[] qr = scaled.divideAndRemainder(value.denominator);
        BigInteger k = qr[0];
        if (scaled.signum() > 0 && qr[1].signum() != 0) k = k.add(BigInteger.ONE);
        return clampToGrid(k);
    }

    private static double clampToGrid(BigInteger k) {
        if (k.signum() < 0) k = BigInteger.ZERO;
        if (k.compareTo(GRID) > 0) k = GRID;
        return k.longValue() / GRID_DOUBLE;
    }

    /** The largest grid probability p with p / (1 - p) &lt;= odds ({@code odds_probability}). */
    public static double oddsProbability(Rational odds) {
        return gridFloor(new Rational(odds.numerator, odds.numerator.add(odds.denominator)));
    }

    /**
     * Keep probability of "keep (uniform over {@code kept} outputs), else uniform over all {@code outputs}" whose ratio
     * 1 + lambda m / (s (1 - lambda)) is at most e^eps ({@code mixture_keep}).
     */
    public static double mixtureKeep(double epsilon, Rational kept, Rational outputs) {
        Rational e = expLower(epsilon);
        BigInteger n = e.numerator.subtract(e.denominator).multiply(kept.numerator).multiply(outputs.denominator);
        BigInteger d = e.denominator.multiply(kept.denominator).multiply(outputs.numerator);
        return oddsProbability(new Rational(n, d));
    }

    /** {@link #mixtureKeep(double, Rational, Rational)} with integer counts. */
    public static double mixtureKeep(double epsilon, long kept, long outputs) {
        return mixtureKeep(epsilon, Rational.of(kept), Rational.of(outputs));
    }

    /** The product of a double and the fraction n / d, exactly. */
    public static Rational times(double x, long numerator, long denominator) {
        return fractionOf(x).times(Rational.of(numerator, denominator));
    }

    /**
     * Add to {@code row} the law over buckets of a draw that keeps "the bucket of k", k uniform on the 2^53 grid, with
     * probability {@code weight}: {@code keyOf(k)} must be non-decreasing in k; {@code bucketOf(key)} maps a key to its
     * bucket.  Each key's range of k is found by bisection (53 steps), so the law is exact, not sampled.
     */
    public static double[] addGridLaw(double[] row, double weight, LongToIntFunction keyOf, IntUnaryOperator bucketOf) {
        int lowest = keyOf.applyAsInt(0);
        int highest = keyOf.applyAsInt(GRID_LONG - 1);
        long start = 0;
        for (int j = lowest; j <= highest; j++) {
            long stop = j == highest ? GRID_LONG : firstAtLeast(keyOf, j + 1);
            row[bucketOf.applyAsInt(j)] += (weight * (double) (stop - start)) / GRID_DOUBLE;
            start = stop;
        }
        return row;
    }

    private static long firstAtLeast(LongToIntFunction keyOf, int j) {
        long low = 0;
        long high = GRID_LONG; // keyOf(high) treated as +infinity
        while (low < high) {
            long middle = low + (high - low) / 2;
            if (keyOf.applyAsInt(middle) >= j) high = middle;
            else low = middle + 1;
        }
        return low;
    }
}
