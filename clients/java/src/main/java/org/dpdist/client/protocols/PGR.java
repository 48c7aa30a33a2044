package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Projective geometry response, "pgr" (Feldman, Nelson, Nguyen &amp; Talwar, ICML 2022; {@code dpdist.local.frequency.pgr}).
 * For a prime q and the least t &gt;= 2 with K = (q^t - 1)/(q - 1) &gt;= d, item x is the x-th point of the projective space
 * over F_q: the x-th canonical vector in increasing value (base-q digits, least significant first, the top nonzero digit
 * 1).  A report is a point v, drawn in x's hyperplane &lt;x, v&gt; = 0 (s = (q^(t-1) - 1)/(q - 1) points) with probability
 * p_in (Python's: the largest 2^-53 grid value with p_in/(1 - p_in) (K - s)/s &lt;= e^eps), else among the other
 * K - s = q^(t-1) points, uniformly (the paper's eq. 1).  q is the config's field_size (Python records it); a config
 * without it (an attribute of a multi-attribute config) means Python's {@code projective_design}.
 *
 * <p>Sampling, exact, in integers below 2^23, as the JavaScript client draws ({@code pgr.js}): with j the top coordinate
 * of x, a vector's digits other than w_j are t - 1 free digits and w_j = r - &lt;x, w without w_j&gt; mod q.  The device
 * draws the inclusion, a nonzero free vector uniform on [1, q^(t-1)) (r = 0: a uniform nonzero vector of the hyperplane)
 * and a free vector uniform on [0, q^(t-1)) (r = 1: the one vector of product 1 of a uniform point outside it), the same
 * draws whatever the coins and the value.  Scaled by the inverse of its top digit, w is the point's canonical vector;
 * the report is its index (q^m - 1)/(q - 1) + value - q^m, m the top digit.  Reports are point indices below K.
 */
public final class PGR extends FrequencyProtocol {
    public static final String PROTOCOL = "pgr";
    /** Python's {@code pgr.MAX_TRANSFORM_CELLS}: the largest q^t, the cells of the decoding transform. */
    public static final long MAX_TRANSFORM_CELLS = 1L << 23;
    private static final int LARGEST_FIELD = 2896; // isqrt(MAX_TRANSFORM_CELLS): q^2 cells at the least dimension
    private static final long MAX_CHANNEL_OUTPUTS = 1 << 16;

    public final int fieldSize;
    public final int dimension;
    public final int outputSize;
    public final int planeSize;
    public final double pIn;
    private final int freeVectors;
    private final int[] offsets;
    private final int[] inverse;

    public PGR(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules("field_size", Params.optional(Params.integer(2, 1 << 20))),
            Params.defaults("labels", null, "field_size", null));
        int d = domainSize();
        Object given = params.get("field_size");
        int q;
        if (given == null) { // recorded, as Python records it
            q = projectiveDesign(epsilon(), d);
            params.put("field_size", (long) q);
            this.config.put("field_size", (long) q);
        } else {
            q = (int) (long) (Long) given;
            if (!LocalHashing.isPrime(q)) throw new InvalidParameterError("The 'field_size' parameter of PGR must be a prime. Got " + q + " instead.");
        }
        long[] design = projectivePoints(q, d);
        if (design[1] > MAX_TRANSFORM_CELLS) {
            throw new InvalidParameterError("The 'field_size' parameter of PGR must give a transform of at most " + MAX_TRANSFORM_CELLS
                + " cells (q^t with t = " + design[0] + " for domain_size=" + d + "). Got " + q + " instead.");
        }
        this.fieldSize = q;
        this.dimension = (int) design[0];
        this.outputSize = (int) design[2];
        this.planeSize = (int) design[3];
        this.freeVectors = (int) (design[1] / q);
        // the largest 2^-53 grid probability with p_in / (1 - p_in) (K - s) / s <= e^eps
        this.pIn = Grid.oddsProbability(Grid.expLower(epsilon()).times(Grid.Rational.of(planeSize, outputSize - planeSize)));
        this.offsets = new int[dimension + 1];
        for (int m = 1, power = 1; m <= dimension; m++, power *= q) offsets[m] = offsets[m - 1] + power; // (q^m - 1)/(q - 1)
        this.inverse = new int[q];
        for (int a = 1; a < q; a++) inverse[a] = (int) powMod(a, q - 2, q);
        this.format = ReportFormat.itemReports(outputSize);
    }

    /** {t, q^t, K, s}: the least t &gt;= 2 whose K = (q^t - 1)/(q - 1) points hold d items ({@code projective_points}). */
    public static long[] projectivePoints(long q, long d) {
        long t = 2;
        long cells = q * q; // K >= d needs no more than q d cells, below 2^63
        while ((cells - 1) / (q - 1) < d) {
            t += 1;
            cells *= q;
        }
        return new long[] {t, cells, (cells - 1) / (q - 1), (cells / q - 1) / (q - 1)};
    }

    /** Python's {@code ss.subset_variance}: the variance (times n) of an item of frequency 1/d, a report of k of m positions. */
    public static double subsetVariance(double epsilon, long positions, long domainSize, long k) {
        double e = Libm.exp(epsilon);
        double pStar = (k * e) / (k * e + positions - k);
        double qStar = (pStar * (k - 1)) / (positions - 1) + ((1 - pStar) * k) / (positions - 1);
        double gap = pStar - qStar;
        return (qStar * (1 - qStar)) / (gap * gap) + (1 - pStar - qStar) / (domainSize * gap);
    }

    /** Python's {@code projective_design}: the prime q of least variance whose transform fits (the smaller on a tie). */
    public static int projectiveDesign(double epsilon, int d) {
        int small = (int) Math.min(LARGEST_FIELD, (long) (4 * (Libm.exp(Math.min(epsilon, 30.0)) + 1)) + 8);
        List<Integer> candidates = new ArrayList<>();
        for (int q = 2; q <= small; q++) if (LocalHashing.isPrime(q)) candidates.add(q);
        for (long q = Math.max(2, d - 1L); q <= Math.min(LARGEST_FIELD, 2L * d + 3); q++) {
            if (!LocalHashing.isPrime(q)) continue;
            if (q > small) candidates.add((int) q); // the least prime >= d - 1: randomized response over a line's q + 1 points
            break;
        }
        int best = -1;
        double least = Double.POSITIVE_INFINITY;
        for (int q : candidates) {
            long[] design = projectivePoints(q, d);
            if (design[1] > MAX_TRANSFORM_CELLS) continue;
            double variance = subsetVariance(epsilon, design[2], d, design[3]);
            if (variance < least) {
                best = q;
                least = variance;
            }
        }
        if (best < 0) {
            throw new InvalidParameterError("The 'domain_size' of PGR must fit a projective space whose transform has at most "
                + MAX_TRANSFORM_CELLS + " cells. Got " + d + " at epsilon=" + epsilon + ".");
        }
        return best;
    }

    private static long powMod(long a, long n, long m) {
        long result = 1 % m;
        for (long base = a % m, e = n; e > 0; e >>= 1, base = base * base % m) if ((e & 1) == 1) result = result * base % m;
        return result;
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("fieldSize", (long) fieldSize, "dimension", (long) dimension, "outputSize", (long) outputSize, "pIn", pIn);
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        boolean include = source.bernoulli(pIn);
        long inside = 1 + source.uniformInt(freeVectors - 1); // a nonzero vector of the hyperplane: residue 0
        long outside = source.uniformInt(freeVectors); // drawn either way: the vector of product 1 outside it
        format.write(bytes, offset, 0, pointWith(item, (int) (include ? inside : outside), include ? 0 : 1));
    }

    /** The base-q digits of point {@code point}'s canonical vector, least significant first. */
    private int[] pointDigits(int point) {
        int top = 0;
        while (top + 1 < dimension && offsets[top + 1] <= point) top++;
        int[] digits = new int[dimension];
        for (int i = 0, rest = point - offsets[top]; i < top; i++, rest /= fieldSize) digits[i] = rest % fieldSize;
        digits[top] = 1;
        return digits;
    }

    private static int top(int[] digits) {
        int top = digits.length - 1;
        while (digits[top] == 0) top--;
        return top;
    }

    /** The point of the vector whose digits other than the item's top one are {@code free}'s and whose product with it is {@code residue}. */
    private int pointWith(int item, int free, int residue) {
        int q = fieldSize;
        int[] x = pointDigits(item);
        int top = top(x);
        int[] w = new int[dimension];
        long product = 0;
        for (int i = 0, rest = free; i < dimension; i++) {
            if (i == top) continue;
            w[i] = rest % q;
            rest /= q;
            product += (long) x[i] * w[i];
        }
        w[top] = (int) (((residue - product) % q + q) % q);
        return canonicalPoint(w);
    }

    /** The point of a nonzero vector: scaled so that its top nonzero digit is 1, (q^m - 1)/(q - 1) + value - q^m. */
    private int canonicalPoint(int[] w) {
        int top = top(w);
        int scale = inverse[w[top]];
        int value = 0;
        for (int i = top - 1; i >= 0; i--) value = value * fieldSize + w[i] * scale % fieldSize;
        return offsets[top] + value;
    }

    private boolean inPlane(int item, int point) {
        int[] x = pointDigits(item);
        int[] v = pointDigits(point);
        long product = 0;
        for (int i = 0; i < dimension; i++) product += (long) x[i] * v[i];
        return product % fieldSize == 0;
    }

    /** Exact law over the K points (Python's channel() columns); small K only. */
    @Override
    public double[] channelRow(int item) {
        if (outputSize > MAX_CHANNEL_OUTPUTS) throw notEnumerable("K points; only up to " + MAX_CHANNEL_OUTPUTS);
        double[] row = new double[outputSize];
        for (int point = 0; point < outputSize; point++) {
            row[point] = inPlane(item, point) ? pIn / planeSize : (1 - pIn) / (outputSize - planeSize);
        }
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }
}
