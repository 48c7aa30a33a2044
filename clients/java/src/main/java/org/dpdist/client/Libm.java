package org.dpdist.client;

/**
 * Elementary functions that agree with CPython's math module (glibc libm) where the platform's may not, as the
 * JavaScript client's {@code src/libm.js}.
 *
 * <p>The Python aggregator derives a protocol's integer design parameters from {@code math.exp(epsilon)} (SS's subset
 * size k = ceil(d / (e^eps + 1)) of a config without subset_size, OLH's g = round(e^eps + 1), HR's block sizes, OUE/SUE's 32-bit thresholds).  The
 * JDK's {@code Math.exp} may be an intrinsic and {@code StrictMath.exp} is fdlibm's (within an ulp): both differ from
 * glibc's nearly correctly rounded exp in the last bit for some inputs (exp(ln 3)), which would change SS's k for
 * epsilon = ln 3.  So exp is computed in double-double arithmetic (~2^-96 relative error) and rounded once: the
 * correctly rounded result, which is what glibc returns except in rare hard cases.  The other functions are
 * {@code StrictMath}'s (fdlibm, the same algorithms as the JavaScript engines' and reproducible on every JVM).
 */
public final class Libm {
    private static final double SPLIT = 134217729.0; // 2^27 + 1 (Dekker's splitter)
    private static final double LN2_HI = 0.6931471805599453; // ln 2 as a double-double
    private static final double LN2_LO = 2.3190468138462996e-17;
    private static final double LOG2E = 1.4426950408889634;
    private static final double EXP_OVERFLOW = 709.782712893384; // largest x with a finite exp(x)
    private static final double EXP_SUBNORMAL = -708.3964185322641; // below: subnormal results

    private Libm() {
    }

    // double-double helpers: the pair (hi, lo) in a two-element array
    private static double[] twoSum(double a, double b) {
        double s = a + b;
        double bb = s - a;
        return new double[] {s, a - (s - bb) + (b - bb)};
    }

    private static double[] quickTwoSum(double a, double b) {
        double s = a + b;
        return new double[] {s, b - (s - a)};
    }

    private static double[] twoProd(double a, double b) {
        double p = a * b;
        double t = SPLIT * a;
        double ah = t - (t - a);
        double al = a - ah;
        t = SPLIT * b;
        double bh = t - (t - b);
        double bl = b - bh;
        return new double[] {p, ah * bh - p + ah * bl + al * bh + al * bl};
    }

    private static double[] ddAdd(double ah, double al, double bh, double bl) {
        double[] s = twoSum(ah, bh);
        double[] t = twoSum(al, bl);
        double[] u = quickTwoSum(s[0], s[1] + t[0]);
        return quickTwoSum(u[0], u[1] + t[1]);
    }

    private static double[] ddMul(double ah, double al, double bh, double bl) {
        double[] p = twoProd(ah, bh);
        return quickTwoSum(p[0], p[1] + (ah * bl + al * bh));
    }

    /** e^x rounded correctly to the nearest double (up to hard cases of probability ~2^-43). */
    public static double exp(double x) {
        if (Double.isNaN(x)) return Double.NaN;
        if (x > EXP_OVERFLOW) return Double.POSITIVE_INFINITY;
        if (x < EXP_SUBNORMAL) return StrictMath.exp(x);
        if (x == 0) return 1.0;
        double k = jsRound(x * LOG2E);
        // r = x - k ln 2 in double-double: k * LN2_HI and k * LN2_LO with their exact errors
        double[] p = twoProd(k, LN2_HI);
        double[] q = twoProd(k, LN2_LO);
        double[] r = ddAdd(x, 0, -p[0], -p[1]);
        r = ddAdd(r[0], r[1], -q[0], -q[1]);
        // Taylor series of e^r, |r| <= 0.35: 30 terms reach far below 2^-104
        double[] s = {1, 0};
        double[] t = {1, 0};
        for (int n = 1; n <= 30; n++) {
            t = ddMul(t[0], t[1], r[0], r[1]);
            double qh = t[0] / n;
            double[] ph = twoProd(qh, n); // t / n in double-double: qh + (t - qh n + tl) / n
            t = quickTwoSum(qh, (t[0] - ph[0] - ph[1] + t[1]) / n);
            s = ddAdd(s[0], s[1], t[0], t[1]);
            if (Math.abs(t[0]) < 1e-40) break;
        }
        // scale by 2^k exactly (two steps so that 2^k itself never overflows)
        int whole = (int) k;
        int half = whole / 2; // truncates toward zero, as Math.trunc
        double scale1 = Math.scalb(1.0, half);
        double scale2 = Math.scalb(1.0, whole - half);
        return ((s[0] * scale1) * scale2) + ((s[1] * scale1) * scale2);
    }

    /** JavaScript's Math.round: to the nearest integer, ties towards +infinity. */
    public static double jsRound(double x) {
        double floor = Math.floor(x);
        return x - floor >= 0.5 ? floor + 1 : floor;
    }

    /**
     * Python's {@code math.ceil(math.log2(x))} for a finite x &gt;= 1, with log2 correctly rounded: for x = 2^k m, 1 &lt;= m &lt; 2,
     * the answer is k when m = 1; otherwise k + 1, unless the correctly rounded log2(x) = k + log2(m) rounds down to the
     * integer k, which happens when log2(m) is below half an ulp of k (m within a few ulps above 1, k &gt;= 4).
     */
    public static int ceilLog2(double x) {
        if (!(x >= 1) || Double.isInfinite(x)) throw new IllegalArgumentException("ceilLog2 needs a finite x >= 1, got " + x);
        int k = Math.getExponent(x);
        double m = Math.scalb(x, -k); // exact
        if (m == 1) return k;
        if (k == 0) return 1;
        double halfUlp = Math.scalb(1.0, Math.getExponent((double) k) - 53);
        double log2m = StrictMath.log1p(m - 1) / StrictMath.log(2.0); // accurate to an ulp of a tiny number
        return log2m < halfUlp ? k : k + 1;
    }

    /** log2(x) for x &gt; 0: the exponent plus the fraction's logarithm (exact at powers of two). */
    public static double log2(double x) {
        if (!(x > 0) || Double.isInfinite(x)) return x == 0 ? Double.NEGATIVE_INFINITY : StrictMath.log(x) / StrictMath.log(2.0);
        int k = Math.getExponent(x);
        if (k < Double.MIN_EXPONENT) return StrictMath.log(x) / StrictMath.log(2.0); // subnormal
        double m = Math.scalb(x, -k);
        return k + StrictMath.log(m) / StrictMath.log(2.0);
    }

    /** Python's built-in {@code round(x)} for a float: to the nearest integer, ties to even. */
    public static double roundHalfEven(double x) {
        return Math.rint(x);
    }

    /** {@code math.expm1}: fdlibm's, as glibc's (also fdlibm-derived) on the inputs tested. */
    public static double expm1(double x) {
        return StrictMath.expm1(x);
    }

    /** {@code math.log}: fdlibm's. */
    public static double log(double x) {
        return StrictMath.log(x);
    }

    /** {@code x ** y}: fdlibm's pow, as the JavaScript engines compute it. */
    public static double pow(double x, double y) {
        return StrictMath.pow(x, y);
    }
}
