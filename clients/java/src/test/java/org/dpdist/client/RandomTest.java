package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * The draws are exact (the JavaScript client's random.test.js): uniform integers by rejection (no modulo bias),
 * Bernoulli(p) with probability exactly p for a double p, NumPy's 53-bit grid; the CSPRNG is the default, and the seeded
 * test source is word for word the JavaScript client's.
 */
class RandomTest {
    /** A source that gives the listed words, in order, then fails. */
    static final class Scripted extends RandomSource {
        private final long[] words;
        private int next;

        Scripted(long... words) {
            super(true);
            this.words = words;
        }

        @Override
        public long word() {
            if (next >= words.length) throw new IllegalStateException("scripted source exhausted");
            return words[next++];
        }
    }

    @Test
    void uniformIntRejectsTheWordsAboveTheLargestMultipleOfN() {
        long limit = (1L << 32) - (1L << 32) % 3; // 4294967295: the word 4294967295 is redrawn
        assertEquals(limit, 4294967295L);
        assertEquals(1, new Scripted(4294967295L, 4L).uniformInt(3)); // rejected, then 4 mod 3
        assertEquals(2, new Scripted(4294967294L).uniformInt(3)); // the last accepted word
        assertEquals(4294967295L, new Scripted(4294967295L).uniformInt(1L << 32));
        // above 2^32: 53-bit integers of two words (21 + 32 bits), rejected at or above the largest multiple of n
        long n = (1L << 33) + 1;
        // 2^53 mod n = n - 2^20: the top word pair (2^21 - 1, 7) is at or above the limit, redrawn; then (0, 5) gives 5
        assertEquals(5, new Scripted((1L << 32) - 1, 7L, 0L, 5L).uniformInt(n));
        assertEquals((((1L << 21) - 2) * (1L << 32) + 7) % n, new Scripted((1L << 32) - (1L << 12), 7L).uniformInt(n));
        assertThrows(IllegalArgumentException.class, () -> new Scripted().uniformInt((1L << 53) + 1));
    }

    @Test
    void bernoulliComparesTheWordsWithTheExpansionOfP() {
        assertTrue(new Scripted(0x7fffffffL).bernoulli(0.5));
        assertFalse(new Scripted(0x80000000L).bernoulli(0.5));
        // p = 2^-32 + 2^-64: the first word equal to p's first digit (1) is decided by the second
        double p = Math.scalb(1.0, -32) + Math.scalb(1.0, -64);
        assertTrue(new Scripted(0L).bernoulli(p));
        assertTrue(new Scripted(1L, 0L).bernoulli(p));
        assertFalse(new Scripted(1L, 1L).bernoulli(p));
        assertFalse(new Scripted(2L).bernoulli(p));
        assertTrue(new Scripted(4294967295L).bernoulli(1.0));
        assertFalse(new Scripted().bernoulli(0.0)); // draws nothing
        assertThrows(IllegalArgumentException.class, () -> new Scripted().bernoulli(1.5));
        assertThrows(IllegalArgumentException.class, () -> new Scripted().bernoulli(Double.NaN));
    }

    @Test
    void uniform53IsNumpysGrid() {
        assertEquals(0.0, new Scripted(0L, 0L).uniform53());
        assertEquals(1.0 - Math.scalb(1.0, -53), new Scripted(4294967295L, 4294967295L).uniform53());
        assertEquals(Math.scalb(1.0, -27), new Scripted(32L, 0L).uniform53()); // the high word's top 27 bits, then 26 bits
    }

    @Test
    void theSeededSourceIsTheJavaScriptClients() {
        // deterministicSource(7) of clients/js/test/helpers.js: its first words
        SeededSource source = new SeededSource(7);
        List<Long> words = new ArrayList<>();
        for (int i = 0; i < 4; i++) words.add(source.word());
        assertEquals(List.of(1004282400L, 2200021487L, 1928073449L, 741806228L), words);
    }

    @Test
    void theDefaultStreamIsAes256CtrWithFastKeyErasure() throws Exception {
        byte[] key = new byte[32];
        for (int i = 0; i < 32; i++) key[i] = (byte) i;
        java.security.SecureRandom seed = new PrivacyPassTest.Scripted(key);
        KeyErasureStream stream = new KeyErasureStream(seed);
        javax.crypto.Cipher aes = javax.crypto.Cipher.getInstance("AES/CTR/NoPadding");
        aes.init(javax.crypto.Cipher.ENCRYPT_MODE, new javax.crypto.spec.SecretKeySpec(key, "AES"), new javax.crypto.spec.IvParameterSpec(new byte[16]));
        byte[] keystream = aes.doFinal(new byte[32 + 64]);
        byte[] first = new byte[64];
        stream.nextBytes(first);
        // the first 32 bytes of the keystream are the next key, never output; the output is the rest
        org.junit.jupiter.api.Assertions.assertArrayEquals(java.util.Arrays.copyOfRange(keystream, 32, 96), first);
        aes.init(javax.crypto.Cipher.ENCRYPT_MODE, new javax.crypto.spec.SecretKeySpec(java.util.Arrays.copyOf(keystream, 32), "AES"),
            new javax.crypto.spec.IvParameterSpec(new byte[16]));
        byte[] next = aes.doFinal(new byte[32 + 64]);
        byte[] second = new byte[64];
        stream.nextBytes(second);
        org.junit.jupiter.api.Assertions.assertArrayEquals(java.util.Arrays.copyOfRange(next, 32, 96), second);
    }

    @Test
    void theDefaultSourcesWordsAreUniform() {
        RandomSource source = new RandomSource();
        long[] counts = new long[256];
        for (int i = 0; i < 256_000; i++) counts[(int) (source.word() >>> 24)] += 1;
        double[] uniform = new double[256];
        java.util.Arrays.fill(uniform, 1.0 / 256);
        assertTrue(Stats.chiSquarePValue(counts, uniform) > Stats.ALPHA);
    }

    @Test
    void theDefaultSourceIsTheCsprng() {
        RandomSource source = RandomSource.secureSource();
        assertTrue(source.secure());
        assertTrue(source == RandomSource.secureSource()); // one per thread
        RandomSource[] other = new RandomSource[1];
        Thread thread = new Thread(() -> other[0] = RandomSource.secureSource());
        thread.start();
        try {
            thread.join();
        } catch (InterruptedException interrupted) {
            throw new IllegalStateException(interrupted);
        }
        assertTrue(other[0] != source && other[0].secure());
        assertFalse(new SeededSource(1).secure());
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) seen.add(source.word());
        assertTrue(seen.size() > 990);
    }
}
