package org.dpdist.client.protocols;

/**
 * The public hash family of the sketches and of PEM ({@code dpdist.local.frequency.flh.family_seeds},
 * {@code dpdist.local.words.mix_prefixes}): SplitMix64 (Steele, Lea &amp; Flood 2014) on unsigned 64-bit words, which
 * Java's {@code long} arithmetic computes modulo 2^64 as it is.
 */
public final class HashFamily {
    /** 2^31 - 1, the prime of PEM's and the sketches' default family. */
    public static final long P = (1L << 31) - 1;
    static final long GOLDEN = 0x9e3779b97f4a7c15L;

    private HashFamily() {
    }

    /** SplitMix64's output function on a 64-bit state. */
    public static long splitmixOutput(long state) {
        long z = state;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** A prefix's FLH item: SplitMix64(prefix + golden) mod P (P = 2^31 - 1; the prefix an unsigned 64-bit word). */
    public static long mixPrefix(long prefix) {
        return Long.remainderUnsigned(splitmixOutput(prefix + GOLDEN), P);
    }

    /**
     * The family's seeds SplitMix64(family_seed + (j + 1) golden) mod (prime - 1) prime, j &lt; count, as (a, b)
     * coefficients: {@code out[j] = {a, b}} with a = seed / prime + 1, b = seed mod prime.
     */
    public static long[][] coefficients(long familySeed, int count, long prime) {
        long seedCount = (prime - 1) * prime;
        long[][] pairs = new long[count][];
        for (int j = 0; j < count; j++) {
            long seed = Long.remainderUnsigned(splitmixOutput(familySeed + (j + 1) * GOLDEN), seedCount);
            pairs[j] = new long[] {seed / prime + 1, seed % prime};
        }
        return pairs;
    }
}
