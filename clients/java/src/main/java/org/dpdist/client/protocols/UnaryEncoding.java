package org.dpdist.client.protocols;

import java.util.Map;
import java.util.function.BiFunction;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Unary encoding with bit-packed reports, the base of "oue", "sue", "rue" and "l-osue", as
 * {@code dpdist.local.frequency._unary}.  Bit v of the one-hot vector is 1 with probability p, every other bit with
 * probability q, all independent.  As in Python, each bit compares a uniform 32-bit word with an integer threshold:
 * T_p = floor(p 2^32), T_q = ceil(q 2^32), so the realized probabilities are T/2^32 exactly (p rounded down, q up: the
 * privacy ratio can only fall), the same grid the aggregator assumes.  Reports are numpy.packbits rows: ceil(d/8)
 * bytes, item j at bit 7 - (j mod 8) of byte j &gt;&gt; 3.
 */
public abstract class UnaryEncoding extends FrequencyProtocol {
    static final double SCALE = 4294967296.0; // 2^32
    private static final int CHUNK = 8192;
    /** Largest d for which channelRow enumerates the 2^d outputs. */
    private static final int MAX_CHANNEL_DOMAIN = 16;

    public final long pThreshold;
    public final long qThreshold;
    /** The realized probabilities of the item's bit and of every other bit in one report (l-osue: both rounds chained). */
    protected double p;
    protected double q;
    /** Each thread's words of a chunk (a protocol is immutable and may draw on several threads at once). */
    static final ThreadLocal<int[]> WORDS = ThreadLocal.withInitial(() -> new int[CHUNK]);

    /**
     * @param targetProbabilities (epsilon, d) -&gt; {p, q}
     * @param extra               further (name, rule) pairs after the frequency rules
     */
    protected UnaryEncoding(String name, Map<String, Object> config, BiFunction<Double, Integer, double[]> targetProbabilities, Object... extra) {
        super(name, config, Params.frequencyRules(extra), Params.defaults("labels", null));
        double[] target = targetProbabilities.apply(epsilon(), domainSize());
        this.pThreshold = (long) Math.floor(target[0] * SCALE);
        this.qThreshold = (long) Math.ceil(target[1] * SCALE);
        this.p = pThreshold / SCALE;
        this.q = qThreshold / SCALE;
        this.format = ReportFormat.packedBitReports(domainSize());
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("pThreshold", pThreshold, "qThreshold", qThreshold);
    }

    /** The bits of {@code item} at {@code offset}: every bit at q, the item's own word against p (item -1: none). */
    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        int d = domainSize();
        long tq = qThreshold;
        int[] words = WORDS.get();
        for (int chunk = 0; chunk < d; chunk += CHUNK) {
            int size = Math.min(CHUNK, d - chunk); // a multiple of 8 except at the end
            source.words(size, words);
            for (int start = 0; start < size; start += 8) {
                int value = 0;
                int stop = Math.min(start + 8, size);
                for (int j = start; j < stop; j++) value |= ((words[j] & 0xffffffffL) < tq ? 1 : 0) << (7 - (j - start));
                bytes[offset + ((chunk + start) >> 3)] = (byte) value;
            }
            if (item >= chunk && item < chunk + size) {
                // the true item's bit uses its own word against the p threshold
                int mask = 0x80 >> (item & 7);
                int position = offset + (item >> 3);
                boolean on = (words[item - chunk] & 0xffffffffL) < pThreshold;
                bytes[position] = (byte) (on ? bytes[position] | mask : bytes[position] & ~mask);
            }
        }
    }

    /** The realized probability of the item's bit being 1 (p) in one report. */
    public double p() {
        return p;
    }

    /** The realized probability of every other bit being 1 (q) in one report. */
    public double q() {
        return q;
    }

    /** Exact law over the 2^d outputs, output y having bit j = item j (Python's report_index); item -1: the zero vector. */
    @Override
    public double[] channelRow(int item) {
        int d = domainSize();
        if (d > MAX_CHANNEL_DOMAIN) throw new InvalidParameterError(display() + ".channelRow enumerates 2^d outputs; only for d <= " + MAX_CHANNEL_DOMAIN + ".");
        double[] row = new double[1 << d];
        for (int y = 0; y < row.length; y++) {
            double probability = 1;
            for (int j = 0; j < d; j++) {
                double on = j == item ? p : q;
                probability *= ((y >> j) & 1) != 0 ? on : 1 - on;
            }
            row[y] = probability;
        }
        return row;
    }

    /** Bit {@code item} of one report's bytes. */
    public static int bit(byte[] row, int item) {
        return (row[item >> 3] >> (7 - (item & 7))) & 1;
    }

    @Override
    public long reportIndex(byte[] row) {
        long index = 0;
        for (int j = 0; j < domainSize(); j++) index += (long) bit(row, j) << j;
        return index;
    }
}
