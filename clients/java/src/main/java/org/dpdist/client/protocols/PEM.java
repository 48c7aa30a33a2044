package org.dpdist.client.protocols;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.InvalidValueTypeError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.OutOfDomainError;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * The prefix extending method, "pem" (Wang et al., IEEE TDSC 2021, sec. V; {@code dpdist.local.frequency.pem}): heavy
 * hitters of words (or of items of up to 62 bits) without a list of them.  A device picks its group i uniformly among G
 * (independently of its word) and reports (i, j, y): the FLH report of the first s_i bits of its item.  The s_i are
 * ceil(log2 k) + i * step (the last one: all bits); the prefix is mapped to [0, P), P = 2^31 - 1, by a public SplitMix64;
 * j is uniform among the S public Carter-Wegman functions of the family ({@link HashFamily}); y keeps h_j(x) with
 * probability lambda (on the 2^-53 grid), else it is uniform over g.  Words are encoded as in dpdist.local.words: symbol
 * (1 + index in the alphabet), ceil(log2(|A|+1)) bits each, 0 after the end, cut to max_chars.  Reports are rows of 3
 * unsigned integers (group, function, value) in the narrowest dtype.
 */
public final class PEM extends Protocol {
    public static final String PROTOCOL = "pem";
    private static final int MAX_BITS = 62;
    private static final int MAX_FIRST_BITS = 20;
    private static final long MAX_STATISTIC = 1 << 24;
    private static final long MAX_HASH_RANGE = 1 << 20;
    private static final long MAX_CHANNEL_OUTPUTS = 1 << 20;

    /** The item's bits (every word's encoding, or the config's bits). */
    public final int bits;
    public final int step;
    /** s_i: the prefix length of each group. */
    public final int[] lengths;
    public final int hashCount;
    public final long g;
    public final double keep;
    private final int[] symbols; // the alphabet's code points (null: integer items)
    private final Map<Integer, Integer> symbolOf = new HashMap<>();
    private final int bitsPerChar;
    private final long[][] coefficients;

    public PEM(Map<String, Object> config) {
        super(PROTOCOL, config, Params.rules("epsilon", Params.EPSILON, "bits", Params.optional(Params.integer(1, MAX_BITS)),
            "alphabet", Params.optional(alphabetRule()), "max_chars", Params.integer(1, MAX_BITS), "k", Params.integer(1, 4096),
            "step", Params.optional(Params.integer(1, 16)), "hash_count", Params.integer(1, 1 << 20), "family_seed", Params.integer(0, 9007199254740991L)),
            Params.defaults("bits", null, "alphabet", null, "max_chars", 12L, "k", 10L, "step", null, "hash_count", 4096L, "family_seed", 0L));
        if ((params.get("bits") == null) == (params.get("alphabet") == null)) {
            throw new InvalidParameterError("PEM needs exactly one of 'bits' (integer items of that many bits) and 'alphabet' (words over it). Got bits="
                + params.get("bits") + ", alphabet=" + Json.show(params.get("alphabet")) + ".");
        }
        int maxChars = intParam("max_chars");
        if (params.get("alphabet") != null) {
            this.symbols = ((String) params.get("alphabet")).codePoints().toArray();
            int perChar = 0;
            while ((1L << perChar) < symbols.length + 1) perChar += 1;
            this.bitsPerChar = perChar;
            this.bits = perChar * maxChars;
            if (bits > MAX_BITS) {
                throw new InvalidParameterError("PEM encodes words in max_chars x " + perChar + " bits, at most " + MAX_BITS + ". Got max_chars=" + maxChars
                    + " (" + bits + " bits); lower 'max_chars'.");
            }
            for (int index = 0; index < symbols.length; index++) symbolOf.put(symbols[index], index + 1);
        } else {
            this.symbols = null;
            this.bitsPerChar = 0;
            this.bits = intParam("bits");
        }
        int k = intParam("k");
        this.step = params.get("step") != null ? intParam("step")
            : Math.max(1, Math.min(8, k < 4096 ? (int) Math.floor(Libm.log2(4096.0 / k)) : 1));
        this.lengths = prefixLengths(Math.min(bits, Math.max(1, Libm.ceilLog2(k))), step, bits);
        if (lengths[0] > MAX_FIRST_BITS) {
            throw new InvalidParameterError("PEM's first round would enumerate 2**" + lengths[0] + " prefixes; lower 'step' or raise 'k'.");
        }
        this.hashCount = intParam("hash_count");
        long tables = (long) lengths.length * hashCount;
        if (2 * tables > MAX_STATISTIC) {
            throw new InvalidParameterError("PEM keeps " + lengths.length + " groups x hash_count x hash_range (at least 2) counts; the product must be <= "
                + MAX_STATISTIC + ". Lower 'hash_count'.");
        }
        // OLH's g, capped so that the groups' tables fit at any epsilon (flh.default_hash_range)
        double rounded = Libm.roundHalfEven(Libm.exp(epsilon()) + 1.0);
        this.g = (long) Math.max(2, Math.min(Math.min(rounded, MAX_HASH_RANGE), Math.floor((double) MAX_STATISTIC / tables)));
        this.keep = Grid.mixtureKeep(epsilon(), 1, g); // on the 2^-53 grid, as Python's
        this.coefficients = HashFamily.coefficients(((Number) params.get("family_seed")).longValue(), hashCount, HashFamily.P);
        // (group, function, value), each below its limit
        this.format = ReportFormat.integerRowReports(3, ReportFormat.smallestUnsigned(Math.max(Math.max(lengths.length, hashCount), g)));
    }

    private int intParam(String key) {
        return ((Number) params.get(key)).intValue();
    }

    private static int[] prefixLengths(int start, int step, int bits) {
        List<Integer> out = new ArrayList<>();
        for (int length = start + step; length < bits; length += step) out.add(length);
        out.add(bits);
        int[] lengths = new int[out.size()];
        for (int i = 0; i < lengths.length; i++) lengths[i] = out.get(i);
        return lengths;
    }

    /** A public alphabet: 1 to 255 distinct characters. */
    private static Params.Rule alphabetRule() {
        return new Params.Rule(false, () -> "a string of 1 to 255 distinct characters", value -> {
            if (!(value instanceof String)) throw new Params.Refused();
            int[] chars = ((String) value).codePoints().toArray();
            HashSet<Integer> distinct = new HashSet<>();
            for (int c : chars) distinct.add(c);
            if (chars.length < 1 || chars.length > 255 || distinct.size() != chars.length) throw new Params.Refused();
            return value;
        });
    }

    @Override
    public String kind() {
        return "heavy_hitters";
    }

    @Override
    public Map<String, Object> design() {
        List<Object> prefixes = new ArrayList<>();
        for (int length : lengths) prefixes.add((long) length);
        return mapOf("g", g, "keep", keep, "lengths", prefixes, "hashCount", (long) hashCount, "bits", (long) bits);
    }

    /** A word's item (dpdist.local.words.StringCodec.encode): cut to max_chars, 0 after the end. */
    public long encodeWord(String word, int index) {
        int[] chars = word.codePoints().toArray();
        int maxChars = intParam("max_chars");
        long item = 0;
        for (int column = 0; column < maxChars; column++) {
            int symbol = 0;
            if (column < chars.length) {
                Integer known = symbolOf.get(chars[column]);
                if (known == null) {
                    throw new OutOfDomainError("The words given to PEM must use the alphabet '" + params.get("alphabet") + "'. The word at position "
                        + index + " has a character outside it (not shown: a user's value is private).");
                }
                symbol = known;
            }
            item = (item << bitsPerChar) | symbol;
        }
        return item;
    }

    /** A word (with an alphabet) or an integer item in [0, 2^bits), as the item (a Long). */
    @Override
    public Object checkValue(Object value, int index) {
        if (value instanceof String) {
            if (symbols == null) {
                throw new InvalidValueTypeError("The 'values' argument of PEM.privatize must hold integers in [0, 2**" + bits
                    + "); words need a campaign with an 'alphabet'. Got a word at position " + index + ".");
            }
            return encodeWord((String) value, index);
        }
        BigInteger item;
        if (value instanceof BigInteger) item = (BigInteger) value;
        else if (Json.isSafeInteger(value) || value instanceof Long || value instanceof Integer) item = BigInteger.valueOf(((Number) value).longValue());
        else {
            throw new InvalidValueTypeError("The 'values' argument of PEM.privatize must hold words or integers in [0, 2**" + bits + "). Got "
                + ValueDomain.typeOf(value) + " at position " + index + " instead.");
        }
        if (item.signum() < 0 || item.bitLength() > bits) {
            throw new OutOfDomainError("The 'values' argument of PEM.privatize must hold integers in [0, 2**" + bits + "). The item at position "
                + index + " is outside it (not shown: a user's value is private).");
        }
        return item.longValue();
    }

    /** The FLH item of group {@code group}'s prefix of {@code item}. */
    private long prefixItem(long item, int group) {
        return HashFamily.mixPrefix(item >>> (bits - lengths[group]));
    }

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        long item = (Long) checked;
        int group = (int) source.uniformInt(lengths.length);
        int j = (int) source.uniformInt(hashCount);
        long hashed = LocalHashing.hashItem(coefficients[j][0], coefficients[j][1], prefixItem(item, group), HashFamily.P, g);
        boolean kept = source.bernoulli(keep);
        long other = source.uniformInt(g); // drawn either way: the draws must not tell whether it is kept
        format.write(bytes, offset, 0, group);
        format.write(bytes, offset, 1, j);
        format.write(bytes, offset, 2, kept ? hashed : other);
    }

    @Override
    public long reportIndex(byte[] row) {
        return (format.read(row, 0, 0) * hashCount + format.read(row, 0, 1)) * g + format.read(row, 0, 2);
    }

    /** Exact law of the report of a checked item, column (i S + j) g + y. */
    @Override
    public double[] channelRowChecked(Object checked) {
        long item = (Long) checked;
        int groups = lengths.length;
        long outputs = groups * (long) hashCount * g;
        if (outputs > MAX_CHANNEL_OUTPUTS) throw notEnumerable(outputs + " outputs; only up to " + MAX_CHANNEL_OUTPUTS);
        double[] row = new double[(int) outputs];
        double other = (1 - keep) / g;
        for (int group = 0; group < groups; group++) {
            long x = prefixItem(item, group);
            for (int j = 0; j < hashCount; j++) {
                long hashed = LocalHashing.hashItem(coefficients[j][0], coefficients[j][1], x, HashFamily.P, g);
                for (int y = 0; y < g; y++) {
                    row[(int) ((group * (long) hashCount + j) * g + y)] = ((y == hashed ? keep : 0) + other) / ((double) groups * hashCount);
                }
            }
        }
        return row;
    }

    @Override
    public long statisticSize() {
        return lengths.length * (long) hashCount * g;
    }
}
