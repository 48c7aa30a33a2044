package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * The optimal piecewise mechanism of Zheng, Mishra and Hu (arXiv 2505.15483; {@code dpdist.local.numerical.opm},
 * {@code _window_grid}), the base of "opm" (the interval) and "opm-circular" (the circle).  A value u of the unit domain
 * becomes the index of one of {@code bins} equal public buckets of the domain itself.  Mixture sampling: with
 * probability 1 - weight (exact Bernoulli) a uniform bucket (exact uniform integer), otherwise the bucket of c + Z,
 * Z = (w/2)(2 U - 1) with U one 53-bit uniform and c the window's centre: u wrapped around the circle, or
 * clip(u, w/2, 1 - w/2) on the interval.  The float operations are Python's sampler's; the exact law is enumerable: the
 * (unwrapped) bucket is a non-decreasing function of the 53-bit integer k, so each bucket is a range of k.
 */
public abstract class WindowProtocol extends NumericalProtocol {
    private static final int MAX_BINS = 4096;

    public final boolean circular;
    public final double window;
    public final double weight;
    public final int buckets;
    private final double half;

    protected WindowProtocol(String name, Map<String, Object> config, boolean circular) {
        super(name, config, Params.rules("epsilon", Params.EPSILON, "bounds", Params.bounds(), "bins", Params.integer(2, MAX_BINS),
            "window", Params.optional(Params.interval(0, 1))), Params.defaults("bounds", Arrays.asList(0.0, 1.0), "bins", 1024L, "window", null));
        this.circular = circular;
        this.window = params.get("window") == null ? optimalWindow(epsilon()) : ((Number) params.get("window")).doubleValue();
        this.half = window / 2.0;
        this.buckets = ((Number) params.get("bins")).intValue();
        // weight on the 2^-53 grid: density ratio 1 + weight / (w (1 - weight)) <= e^eps, w shrunk by 1 - 2^-30 for the
        // float64 window sampling (Python's _WindowGrid)
        this.weight = Grid.mixtureKeep(epsilon(), Grid.times(window, (1L << 30) - 1, 1L << 30), Grid.Rational.of(1));
        this.format = ReportFormat.itemReports(buckets);
    }

    /** {@code optimal_window} of _window_grid.py: 1 / (e^{eps/2} + 1), as e^{-eps/2} / (1 + e^{-eps/2}). */
    public static double optimalWindow(double epsilon) {
        double root = Libm.exp(-epsilon / 2.0);
        return root / (1.0 + root);
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("buckets", (long) buckets, "weight", weight, "window", window);
    }

    /** Python's {@code floor(position * buckets)} clipped into the buckets. */
    private int bucketOf(double position) {
        return (int) Math.min(Math.max(Math.floor(position * buckets), 0), buckets - 1);
    }

    /** {turns, bucket} of the window draw U = k / 2^53 (turns: whole periods wrapped, circle only). */
    private long[] place(double u, double k) {
        double offset = half * (2.0 * (k / Grid.GRID_DOUBLE) - 1.0);
        if (!circular) return new long[] {0, bucketOf(Math.min(Math.max(u, half), 1.0 - half) + offset)};
        double raw = u + offset;
        double turns = Math.floor(raw);
        return new long[] {(long) turns, bucketOf(raw - turns)};
    }

    @Override
    public void writeReport(double u, RandomSource source, byte[] bytes, int offset) {
        // both branches' draws and arithmetic happen either way: the work must not tell whether u was kept
        boolean kept = source.bernoulli(weight);
        long near = place(u, source.uniform53() * Grid.GRID_DOUBLE)[1];
        long other = source.uniformInt(buckets);
        format.write(bytes, offset, 0, kept ? near : other);
    }

    /** Exact law of the report for the unit-domain input u: bisection over the 2^53 uniform grid. */
    @Override
    public double[] channelRow(double u) {
        double[] row = new double[buckets];
        Arrays.fill(row, (1 - weight) / buckets);
        // turns * buckets + bucket is non-decreasing in k, also across the wrap: each is a range of k
        return Grid.addGridLaw(row, weight, k -> {
            long[] placed = place(u, k);
            return (int) (placed[0] * buckets + placed[1]);
        }, j -> ((j % buckets) + buckets) % buckets);
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }

    @Override
    public long statisticSize() {
        return buckets;
    }
}
