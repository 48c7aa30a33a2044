package org.dpdist.client;

import java.security.GeneralSecurityException;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** HKDF (RFC 5869) on the JDK's HMAC-SHA256: the KDF of the relay's HPKE suite (RFC 9180's HKDF-SHA256). */
public final class Hkdf {
    /** Bytes of a SHA-256 output (Nh). */
    public static final int HASH_BYTES = 32;

    private Hkdf() {
    }

    private static Mac hmac(byte[] key) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            // an empty key is HMAC's key of HashLen zeros (RFC 5869 section 2.2: salt "not provided")
            mac.init(new SecretKeySpec(key.length == 0 ? new byte[HASH_BYTES] : key, "HmacSHA256"));
            return mac;
        } catch (GeneralSecurityException error) {
            throw new IllegalStateException("the platform has no HMAC-SHA256", error);
        }
    }

    /** HKDF-Extract(salt, IKM) = HMAC-Hash(salt, IKM): the pseudorandom key (32 bytes). */
    public static byte[] extract(byte[] salt, byte[] ikm) {
        return hmac(salt).doFinal(ikm);
    }

    /** HKDF-Expand(PRK, info, L): the first {@code length} bytes of T(1) | T(2) | ..., T(i) = HMAC(PRK, T(i-1) | info | i). */
    public static byte[] expand(byte[] prk, byte[] info, int length) {
        if (length < 0 || length > 255 * HASH_BYTES) throw new IllegalArgumentException("HKDF-Expand gives 0 to 8160 bytes, not " + length);
        Mac mac = hmac(prk);
        byte[] out = new byte[length];
        byte[] previous = new byte[0];
        for (int filled = 0, counter = 1; filled < length; counter++) {
            mac.update(previous);
            mac.update(info);
            mac.update((byte) counter);
            previous = mac.doFinal();
            int take = Math.min(previous.length, length - filled);
            System.arraycopy(previous, 0, out, filled, take);
            filled += take;
        }
        return out;
    }
}
