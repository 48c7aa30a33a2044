package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Bytes;
import org.dpdist.client.IncompatibleStateError;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * Permanently memoized d-bit flipping, "dbitflippm" (Ding, Kulkarni &amp; Yekhanin, NeurIPS 2017, sec. 3-4;
 * {@code dpdist.local.frequency.dbitflippm}).  Items are the paper's b buckets.  A device samples d distinct bucket
 * indices j_1 &lt; ... &lt; j_d once (its user randomness, public: sent with every report) and, for its bucket v, draws the
 * bits b_s = 1 w.p. p = e^{eps/2}/(e^{eps/2}+1) if j_s = v, w.p. q = 1/(e^{eps/2}+1) otherwise, once per bucket; every
 * later report of a value in that bucket replays them (no second round).  Bits compare 32-bit words with the thresholds
 * floor(p 2^32), ceil(q 2^32), as in Python.  Reports are uint32 rows of 2d columns: the sorted indices, then their bits.
 */
public final class DBitFlipPM extends FrequencyProtocol implements Longitudinal {
    /** 2 int64 counts per bucket (Python's dBitFlipPM._bytes_per_item). */
    @Override
    protected int bytesPerItem() {
        return 16;
    }

    public static final String PROTOCOL = "dbitflippm";
    private static final double SCALE = 4294967296.0; // 2^32
    private static final long MAX_CHANNEL_OUTPUTS = 1 << 20;

    /** The sampled buckets per device. */
    public final int d;
    public final long pThreshold;
    public final long qThreshold;
    private final double p;
    private final double q;

    public DBitFlipPM(Map<String, Object> config) {
        super(PROTOCOL, config, Params.frequencyRules("sampled_bits", Params.optional(Params.integer(1, Integer.MAX_VALUE))),
            Params.defaults("labels", null, "sampled_bits", null));
        int b = domainSize();
        int sampled = params.get("sampled_bits") == null ? b : ((Number) params.get("sampled_bits")).intValue();
        if (sampled > b) {
            throw new InvalidParameterError("The 'sampled_bits' parameter of dBitFlipPM must be <= domain_size = " + b + " (the number of buckets). Got "
                + sampled + " instead.");
        }
        this.d = sampled;
        double half = Libm.exp(epsilon() / 2);
        this.pThreshold = (long) Math.floor((half / (half + 1)) * SCALE);
        this.qThreshold = (long) Math.ceil((1 / (half + 1)) * SCALE);
        this.p = pThreshold / SCALE;
        this.q = qThreshold / SCALE;
        this.format = ReportFormat.integerRowReports(2 * d, "<u4"); // d increasing buckets, then d bits
    }

    @Override
    protected String displayName(String name) {
        return "dBitFlipPM";
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("d", (long) d, "pThreshold", pThreshold, "qThreshold", qThreshold);
    }

    /** The device keeps its sampled indices and memoizes the bits per bucket (b keys); no second round. */
    @Override
    public Losses losses() {
        double epsilon1 = d > 1 ? epsilon() : epsilon() / 2;
        return new Losses(domainSize(), true, epsilon1, epsilon1, Double.POSITIVE_INFINITY);
    }

    /** d distinct bucket indices, uniform, sorted (a partial Fisher-Yates shuffle by exact uniform draws). */
    @Override
    public Object drawUserRandomness(RandomSource source) {
        int b = domainSize();
        Map<Integer, Integer> picked = new HashMap<>(); // sparse shuffle of 0..b-1
        int[] out = new int[d];
        for (int s = 0; s < d; s++) {
            int r = s + (int) source.uniformInt(b - s);
            out[s] = picked.getOrDefault(r, r);
            picked.put(r, picked.getOrDefault(s, s));
        }
        Arrays.sort(out);
        return out;
    }

    @Override
    public Object randomnessToJson(Object randomness) {
        List<Object> out = new ArrayList<>();
        for (int index : (int[]) randomness) out.add((long) index);
        return out;
    }

    @Override
    public Object checkUserRandomness(Object randomness) {
        List<Object> list = Json.asList(randomness);
        int b = domainSize();
        boolean ok = list != null && list.size() == d;
        int[] out = new int[d];
        for (int s = 0; ok && s < d; s++) {
            Object j = list.get(s);
            ok = Json.isInteger(j) && ((Number) j).doubleValue() >= 0 && ((Number) j).doubleValue() < b && (s == 0 || ((Number) j).intValue() > out[s - 1]);
            if (ok) out[s] = ((Number) j).intValue();
        }
        if (!ok) {
            throw new IncompatibleStateError("A dBitFlipPM client's randomness must be " + d + " increasing bucket indices in [0, " + b + "). Got another "
                + "(not shown: a user's value is private).");
        }
        return out;
    }

    @Override
    public long bucketOf(int item, Object randomness) {
        return item;
    }

    /** The bits of bucket {@code key} at the sampled indices (what the device memoizes). */
    @Override
    public Object permanentResponse(long key, RandomSource source, Object randomness) {
        int[] indices = (int[]) randomness;
        int[] words = new int[d];
        source.words(d, words);
        int[] bits = new int[d];
        for (int s = 0; s < d; s++) bits[s] = (words[s] & 0xffffffffL) < (indices[s] == key ? pThreshold : qThreshold) ? 1 : 0;
        return bits;
    }

    /** No second round: the memoized bits are reported as they are, after the indices. */
    @Override
    public void writeMemoized(Object memoized, RandomSource source, byte[] bytes, int offset, Object randomness) {
        int[] indices = (int[]) randomness;
        int[] bits = (int[]) memoized;
        for (int s = 0; s < d; s++) {
            Bytes.putU32(bytes, offset + 4 * s, indices[s]);
            Bytes.putU32(bytes, offset + 4 * (d + s), bits[s]);
        }
    }

    @Override
    public void writeReport(int item, RandomSource source, byte[] bytes, int offset) {
        Object indices = drawUserRandomness(source);
        writeMemoized(permanentResponse(item, source, indices), source, bytes, offset, indices);
    }

    @Override
    public Object memoToJson(Object memoized) {
        List<Object> out = new ArrayList<>();
        for (int bit : (int[]) memoized) out.add((long) bit);
        return out;
    }

    @Override
    public Object memoFromJson(Object value, long key) {
        List<Object> list = Json.asList(value);
        boolean ok = list != null && list.size() == d;
        int[] out = new int[d];
        for (int s = 0; ok && s < d; s++) {
            Object bit = list.get(s);
            ok = Json.isInteger(bit) && (((Number) bit).doubleValue() == 0 || ((Number) bit).doubleValue() == 1);
            if (ok) out[s] = ((Number) bit).intValue();
        }
        if (!ok) {
            throw new IncompatibleStateError("A dBitFlipPM memo maps buckets in [0, " + domainSize() + ") to " + d + " bits. Got an entry that does not "
                + "(not shown: a user's value is private).");
        }
        return out;
    }

    /** Python's column: colex rank of the index set times 2^d, plus sum_s bit_s 2^s. */
    @Override
    public long reportIndex(byte[] row) {
        long rank = 0;
        long bits = 0;
        for (int s = 0; s < d; s++) {
            rank += SS.comb(Bytes.getU32(row, 4 * s), s + 1);
            bits += Bytes.getU32(row, 4 * (d + s)) << s;
        }
        return (rank << d) + bits;
    }

    /** Exact law of one report over Python's columns; small b only. */
    @Override
    public double[] channelRow(int item) {
        int b = domainSize();
        long subsets = SS.comb(b, d);
        if (d > 20 || subsets << d > MAX_CHANNEL_OUTPUTS) throw notEnumerable("C(b, d) 2^d outputs; only up to " + MAX_CHANNEL_OUTPUTS);
        double[] row = new double[(int) (subsets << d)];
        visit(row, item, 0, new int[d], 0, subsets);
        return row;
    }

    private void visit(double[] row, int item, int start, int[] chosen, int size, long subsets) {
        if (size == d) {
            long rank = 0;
            for (int s = 0; s < d; s++) rank += SS.comb(chosen[s], s + 1);
            for (int y = 0; y < 1 << d; y++) {
                double probability = 1.0 / subsets;
                for (int s = 0; s < d; s++) {
                    double on = chosen[s] == item ? p : q;
                    probability *= ((y >> s) & 1) != 0 ? on : 1 - on;
                }
                row[(int) ((rank << d) + y)] = probability;
            }
            return;
        }
        for (int j = start; j < domainSize(); j++) {
            chosen[size] = j;
            visit(row, item, j + 1, chosen, size + 1, subsets);
        }
    }

    @Override
    public long statisticSize() {
        return 2L * domainSize();
    }
}
