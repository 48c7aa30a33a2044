package org.dpdist.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * Random draws for the randomizers: uniform integers without modulo bias and Bernoulli draws whose probability is
 * exactly the given double, all from uniform 32-bit words, with the draw rules of the JavaScript client's
 * {@code src/random.js} (the same words give the same draws, call for call).
 *
 * <p>The words come from a CSPRNG: by default AES-256-CTR with fast key erasure keyed from {@link SecureRandom}
 * ({@link KeyErasureStream}), or a {@code SecureRandom} the caller gives; only tests subclass this with a deterministic
 * {@link #fill}.  Nothing here uses {@code java.util.Random} or {@code Math.random}.  A source is one stream: it is not
 * for several threads at once ({@link #secureSource()} gives each thread its own).
 */
public class RandomSource {
    private static final long WORD = 1L << 32;
    private static final long TWO_53 = 1L << 53;
    /** Words fetched from the generator at once (as the JavaScript client's buffer: its draws skip the same words). */
    public static final int BUFFER_WORDS = 16384;

    private static final ThreadLocal<RandomSource> SHARED = ThreadLocal.withInitial(RandomSource::new);

    private final SecureRandom random;
    private final KeyErasureStream stream;
    private final int[] buffer = new int[BUFFER_WORDS];
    private byte[] bytes = new byte[0];
    private int next = BUFFER_WORDS;

    /** A source drawing from AES-256-CTR with fast key erasure, keyed from a new {@link SecureRandom}. */
    public RandomSource() {
        this.random = new SecureRandom();
        this.stream = new KeyErasureStream(random);
    }

    /** A source drawing from {@code random} itself (a platform CSPRNG the caller chooses, e.g. Android's, which is fast). */
    public RandomSource(SecureRandom random) {
        if (random == null) throw new InvalidParameterError("The 'random' argument of RandomSource must be a SecureRandom. Got null.");
        this.random = random;
        this.stream = null;
    }

    /** For subclasses that override {@link #fill} (tests): no generator of its own. */
    protected RandomSource(boolean deterministic) {
        this.random = null;
        this.stream = null;
    }

    /** This thread's CSPRNG-backed source, used when none is given. */
    public static RandomSource secureSource() {
        return SHARED.get();
    }

    /** Whether this source draws from a CSPRNG (not an injected, reproducible one). */
    public boolean secure() {
        return random != null;
    }

    /** Fill {@code words} with uniform 32-bit words (a subclass's deterministic stream replaces this in tests only). */
    protected void fill(int[] words) {
        if (bytes.length != 4 * words.length) bytes = new byte[4 * words.length];
        if (stream != null) stream.nextBytes(bytes);
        else random.nextBytes(bytes);
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words);
        Arrays.fill(bytes, (byte) 0);
    }

    /** One uniform integer in [0, 2^32). */
    public long word() {
        if (next == BUFFER_WORDS) {
            fill(buffer);
            next = 0;
        }
        return buffer[next++] & 0xffffffffL;
    }

    /**
     * {@code count} uniform words (count &lt;= 16384) copied into {@code out[0 .. count)} (as signed ints: compare them
     * with {@code & 0xffffffffL}).  Words left in the buffer when it is too short are skipped (unused words are
     * independent), as the JavaScript client's {@code words(count)} does.
     */
    public void words(int count, int[] out) {
        if (count > BUFFER_WORDS) throw new IllegalArgumentException("words() gives at most " + BUFFER_WORDS + " words at once, not " + count);
        if (next + count > BUFFER_WORDS) {
            fill(buffer);
            next = 0;
        }
        System.arraycopy(buffer, next, out, 0, count);
        next += count;
    }

    /**
     * A uniform integer in [0, n) for 1 &lt;= n &lt;= 2^53, by rejection: words at or above the largest multiple of n below
     * 2^32 are redrawn, so every residue has exactly the same probability; above 2^32 the same on 53-bit integers made
     * of two words.
     */
    public long uniformInt(long n) {
        if (n == WORD) return word();
        if (n > WORD) {
            if (n > TWO_53) throw new IllegalArgumentException("uniformInt needs an integer n <= 2^53, got " + n);
            long limit = TWO_53 - (TWO_53 % n);
            while (true) {
                long x = (word() >>> 11) * WORD + word(); // 21 + 32 bits: uniform in [0, 2^53)
                if (x < limit) return x % n;
            }
        }
        if (n < 1) throw new IllegalArgumentException("uniformInt needs n >= 1, got " + n);
        long limit = WORD - (WORD % n);
        long w = word();
        while (w >= limit) w = word();
        return w % n;
    }

    /**
     * True with probability exactly p, for any double p in [0, 1]: a double's binary expansion is finite, so a uniform
     * real U = 0.w1 w2 w3 ... (32-bit words, drawn lazily) is compared with p's expansion word by word, U &lt; p decided
     * at the first word that differs; {@code p 2^32 - floor(p 2^32)} is exact in double arithmetic.
     */
    public boolean bernoulli(double p) {
        if (!(p >= 0 && p <= 1)) throw new IllegalArgumentException("bernoulli needs a probability in [0, 1], got " + p);
        double rest = p;
        while (rest > 0) {
            double scaled = rest * WORD;
            double digit = Math.floor(scaled);
            long w = word();
            if (w != digit) return w < digit; // digit == 2^32 only for rest == 1: always true
            rest = scaled - digit;
        }
        return false;
    }

    /** A uniform double k 2^-53, k uniform in [0, 2^53) (NumPy's {@code Generator.random} grid). */
    public double uniform53() {
        long high = word() >>> 5; // 27 bits
        long low = word() >>> 6; // 26 bits
        return (high * 67108864L + low) / 9007199254740992.0;
    }
}
