package org.dpdist.client;

import java.util.ArrayList;
import java.util.List;

/** The statistics of the seeded tests: Pearson's chi-square p-value and the privacy loss of an exact channel. */
public final class Stats {
    /** Per-test false-alarm level of the seeded statistical tests (as the Python conformance suite). */
    public static final double ALPHA = 1e-6;
    /** Relative slack on epsilon for floating-point rounding of channel entries (as in Python). */
    public static final double CHANNEL_SLACK = 1e-9;
    private static final double[] LANCZOS = {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
        12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};

    private Stats() {
    }

    private static double logGamma(double x) {
        if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
        double z = x - 1;
        double a = LANCZOS[0];
        double t = z + 7.5;
        for (int i = 1; i < 9; i++) a += LANCZOS[i] / (z + i);
        return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
    }

    /** Regularized upper incomplete gamma Q(a, x) (series / continued fraction, Numerical Recipes 6.2). */
    private static double gammaQ(double a, double x) {
        if (x <= 0) return 1;
        double front = Math.exp(-x + a * Math.log(x) - logGamma(a));
        if (x < a + 1) {
            double sum = 1 / a;
            double term = sum;
            for (int n = 1; n < 10000 && Math.abs(term) > Math.abs(sum) * 1e-16; n++) {
                term *= x / (a + n);
                sum += term;
            }
            return Math.max(0, 1 - sum * front);
        }
        double b = x + 1 - a;
        double c = 1e300;
        double d = 1 / b;
        double h = d;
        for (int i = 1; i < 10000; i++) {
            double an = -i * (i - a);
            b += 2;
            d = an * d + b;
            if (Math.abs(d) < 1e-300) d = 1e-300;
            c = b + an / c;
            if (Math.abs(c) < 1e-300) c = 1e-300;
            d = 1 / d;
            double delta = d * c;
            h *= delta;
            if (Math.abs(delta - 1) < 1e-16) break;
        }
        return front * h;
    }

    /**
     * Pearson chi-square p-value of {@code observed} counts against {@code probabilities}, pooling cells with expected
     * count &lt; 5 into one (as tests/conformance/_checks.py does).
     */
    public static double chiSquarePValue(long[] observed, double[] probabilities) {
        long total = 0;
        for (long count : observed) total += count;
        List<double[]> cells = new ArrayList<>();
        double pooledObserved = 0;
        double pooledExpected = 0;
        for (int i = 0; i < observed.length; i++) {
            double expected = probabilities[i] * total;
            if (expected < 5) {
                pooledObserved += observed[i];
                pooledExpected += expected;
            } else {
                cells.add(new double[] {observed[i], expected});
            }
        }
        if (pooledExpected > 0) cells.add(new double[] {pooledObserved, pooledExpected});
        else if (pooledObserved > 0) return 0;
        if (cells.size() < 2) return 1;
        double statistic = 0;
        for (double[] cell : cells) statistic += (cell[0] - cell[1]) * (cell[0] - cell[1]) / cell[1];
        return gammaQ((cells.size() - 1) / 2.0, statistic / 2);
    }

    /** max over outputs of log(max_i P[i, y] / min_i P[i, y]) (infinite if a column mixes 0 and &gt; 0). */
    public static double maxPrivacyLoss(List<double[]> rows) {
        double loss = 0;
        for (int y = 0; y < rows.get(0).length; y++) {
            double high = Double.NEGATIVE_INFINITY;
            double low = Double.POSITIVE_INFINITY;
            for (double[] row : rows) {
                high = Math.max(high, row[y]);
                low = Math.min(low, row[y]);
            }
            if (high > 0) loss = Math.max(loss, low <= 0 ? Double.POSITIVE_INFINITY : Math.log(high) - Math.log(low));
        }
        return loss;
    }
}
