package org.dpdist.client.protocols;

import java.util.Arrays;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * The wave mechanisms, the base of square wave "sw" and general wave "gw" (paper 003, Li et al. SIGMOD 2020, sec. 5;
 * {@code dpdist.local.numerical.square_wave, general_wave, _wave_shape, _wave_grid, _wave_discrete}).
 *
 * <p>R-B ("randomize before bucketize", the default): a value u in [0, 1] becomes the index of the public output bucket
 * of [-b, 1 + b] ({@code output_bins} equal buckets) holding u + Z.  The wave W = q + lambda g is sampled as a mixture:
 * with probability 1 - lambda (exact Bernoulli) a uniform bucket (exact uniform integer), otherwise the bucket of u + Z
 * with Z from the bump g (one uniform for the square wave, a sum of two for trapezoids), using NumPy's 53-bit uniform
 * grid and the same float operations as the Python sampler, so the bump part's law is exactly Python's privatize law.
 * The exact law of this sampler is enumerable: the bucket is a non-decreasing function of the 53-bit integer k, so each
 * bucket is a range of k found by bisection ({@link #channelRow}).
 *
 * <p>B-R ({@code discrete: true}): the value's bucket i = min(floor(u bins), bins - 1); with probability lambda a uniform
 * index of the window [i, i + 2m], else a uniform index of all bins + 2m.  Exact.
 */
public abstract class WaveProtocol extends NumericalProtocol {
    public static final int MAX_BINS = 4096;

    /** The bump's half-widths (a1, a2): a1 + a2 = b; a2 = 0 for the square wave. */
    protected double[] halfWidths;
    protected double weight;
    protected double b;
    protected boolean discrete;
    protected int buckets;
    protected double width;
    /** B-R only: the window's half-width m and its size 2m + 1. */
    protected int halfWidth;
    protected int window;

    protected WaveProtocol(String name, Map<String, Object> config, Object[] extra, Object[] extraDefaults) {
        super(name, config, waveRules(extra), waveDefaults(extraDefaults));
    }

    private static Map<String, Params.Rule> waveRules(Object[] extra) {
        Map<String, Params.Rule> rules = Params.rules("epsilon", Params.EPSILON, "bounds", Params.bounds(), "bins", Params.integer(2, MAX_BINS),
            "output_bins", Params.optional(Params.integer(2, MAX_BINS)), "b", Params.optional(Params.interval(0, Double.POSITIVE_INFINITY)));
        rules.putAll(Params.rules(extra));
        return rules;
    }

    private static Map<String, Object> waveDefaults(Object[] extra) {
        Map<String, Object> defaults = Params.defaults("bounds", Arrays.asList(0.0, 1.0), "bins", 1024L, "output_bins", null, "b", null);
        defaults.putAll(Params.defaults(extra));
        return defaults;
    }

    /** {@code mutual_information_b} of _wave_shape.py (paper 003, sec. 5.3), operation for operation. */
    public static double mutualInformationB(double epsilon) {
        if (epsilon < 1.0) {
            double numerator = 0.0;
            double denominator = 0.0;
            double term = 1.0;
            for (int k = 1; k < 40; k++) {
                term *= epsilon / k;
                if (k >= 2) {
                    numerator += (k - 1) * term;
                    denominator += term;
                }
            }
            return numerator / (2.0 * Libm.exp(epsilon) * denominator);
        }
        if (epsilon > 700.0) return 0.0;
        return (epsilon - 1.0 + Libm.exp(-epsilon)) / (2.0 * (Libm.expm1(epsilon) - epsilon));
    }

    /** The bins of the input (B-R) and of the likelihood. */
    protected int bins() {
        return ((Number) params.get("bins")).intValue();
    }

    /** Set up the R-B grid for a trapezoid of half-width b and top/bottom ratio r (1: square). */
    protected void setupGrid(double b, double ratio) {
        this.halfWidths = new double[] {(b * (1.0 + ratio)) / 2.0, (b * (1.0 - ratio)) / 2.0};
        // lambda on the 2^-53 grid: density ratio 1 + lambda (1 + 2b) / (2 a1 (1 - lambda)) <= e^eps, with 2 a1 shrunk by
        // 1 - 2^-30 for the float64 bump sampling (Python's WaveShape)
        Grid.Rational kept = Grid.times(2 * halfWidths[0], (1L << 30) - 1, 1L << 30);
        Grid.Rational twiceB = Grid.fractionOf(2).times(Grid.fractionOf(b));
        Grid.Rational outputs = new Grid.Rational(twiceB.denominator.add(twiceB.numerator), twiceB.denominator); // 1 + 2b
        this.weight = Grid.mixtureKeep(epsilon(), kept, outputs);
        this.b = b;
        this.discrete = false;
        Object outputBins = params.get("output_bins");
        this.buckets = outputBins != null ? ((Number) outputBins).intValue() : bins();
        this.width = (1.0 + 2.0 * b) / buckets;
        this.format = ReportFormat.itemReports(buckets);
    }

    /** Set up the B-R window of half-width m (buckets bins + 2m). */
    protected void setupWindow(int halfWidth) {
        this.discrete = true;
        this.halfWidth = halfWidth;
        this.window = 2 * halfWidth + 1;
        this.buckets = bins() + 2 * halfWidth;
        this.weight = Grid.mixtureKeep(epsilon(), window, buckets); // on the 2^-53 grid
        this.format = ReportFormat.itemReports(buckets);
    }

    @Override
    public Map<String, Object> design() {
        if (discrete) return mapOf("buckets", (long) buckets, "weight", weight, "halfWidth", (long) halfWidth);
        return mapOf("buckets", (long) buckets, "weight", weight, "b", b, "width", width, "halfWidths", listOf(halfWidths[0], halfWidths[1]));
    }

    /** The bump bucket of u for the 53-bit uniforms u1, u2 (Python's sample, op for op). */
    protected int bumpBucket(double u, double u1, double u2) {
        double a1 = halfWidths[0];
        double a2 = halfWidths[1];
        double offset = a1 * (2.0 * u1 - 1.0);
        if (a2 > 0.0) offset += a2 * (2.0 * u2 - 1.0);
        double position = u + offset;
        double bucket = Math.floor((position + b) / width);
        return (int) Math.min(Math.max(bucket, 0), buckets - 1);
    }

    protected int inputBucket(double u) {
        return (int) Math.min((double) (long) (u * bins()), bins() - 1);
    }

    @Override
    public void writeReport(double u, RandomSource source, byte[] bytes, int offset) {
        // both branches' draws and arithmetic happen either way: the work must not tell whether the wave kept u
        boolean kept = source.bernoulli(weight);
        long near;
        if (discrete) {
            near = inputBucket(u) + source.uniformInt(window);
        } else {
            double u1 = source.uniform53();
            double u2 = halfWidths[1] > 0 ? source.uniform53() : 0;
            near = bumpBucket(u, u1, u2);
        }
        long other = source.uniformInt(buckets);
        format.write(bytes, offset, 0, kept ? near : other);
    }

    /** Exact law of the report for the unit-interval input u, over the buckets (R-B: the square wave only). */
    @Override
    public double[] channelRow(double u) {
        double[] row = new double[buckets];
        Arrays.fill(row, (1 - weight) / buckets);
        if (discrete) {
            int start = inputBucket(u);
            for (int j = start; j < start + window; j++) row[j] += weight / window;
            return row;
        }
        if (halfWidths[1] > 0) throw new InvalidParameterError(display() + ".channelRow is only enumerable for the square wave.");
        // bucket(k) is non-decreasing in k: each bucket is a range of k
        return Grid.addGridLaw(row, weight, k -> bumpBucket(u, k / Grid.GRID_DOUBLE, 0), j -> j);
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
