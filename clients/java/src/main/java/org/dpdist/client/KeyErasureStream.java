package org.dpdist.client;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;

import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The CSPRNG behind {@link RandomSource}: AES-256 in counter mode (the JDK's, on the CPU's AES instructions) keyed from
 * {@link SecureRandom}, with fast key erasure (D. J. Bernstein, "Fast-key-erasure random-number generators", 2017, the
 * design of OpenBSD's arc4random and of Linux's /dev/urandom with ChaCha20): each fill draws the keystream of the current
 * key, whose first 32 bytes become the next key before any output is returned, so that the state at any moment says
 * nothing of the output already given; every 256 fills 32 fresh bytes of {@code SecureRandom} are mixed into the key.
 * It exists for speed: the JDK's {@code NativePRNG} gives ~50 MB/s, a unary encoding draws 4 KiB per report, and the
 * JavaScript client's {@code crypto.getRandomValues} (OpenSSL's AES-CTR DRBG) gives ~1.3 GB/s on the same machine.
 */
final class KeyErasureStream {
    private static final int KEY_BYTES = 32;
    private static final int RESEED_EVERY = 256;
    private static final byte[] COUNTER_ZERO = new byte[16];

    private final SecureRandom seed;
    private final byte[] key = new byte[KEY_BYTES];
    private byte[] zeros = new byte[0];
    private int fills;

    KeyErasureStream(SecureRandom seed) {
        this.seed = seed;
        seed.nextBytes(key);
    }

    /** Fill {@code out} with keystream, after the next key has been taken from it. */
    void nextBytes(byte[] out) {
        if (++fills % RESEED_EVERY == 0) {
            byte[] fresh = new byte[KEY_BYTES];
            seed.nextBytes(fresh);
            for (int i = 0; i < KEY_BYTES; i++) key[i] ^= fresh[i];
            Arrays.fill(fresh, (byte) 0);
        }
        if (zeros.length < KEY_BYTES + out.length) zeros = new byte[KEY_BYTES + out.length];
        byte[] stream;
        try {
            Cipher cipher = Cipher.getInstance("AES/CTR/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(COUNTER_ZERO));
            stream = cipher.doFinal(zeros, 0, KEY_BYTES + out.length);
        } catch (GeneralSecurityException error) {
            throw new IllegalStateException("the platform's AES-CTR failed", error);
        }
        System.arraycopy(stream, 0, key, 0, KEY_BYTES); // the old key is gone before any output leaves
        System.arraycopy(stream, KEY_BYTES, out, 0, out.length);
        Arrays.fill(stream, (byte) 0);
    }
}
