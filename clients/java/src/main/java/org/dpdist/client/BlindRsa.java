package org.dpdist.client;

import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The client side of RSA blind signatures (RFC 9474) on {@link BigInteger}: RSABSSA-SHA384-PSS (salt of 48 bytes) and
 * RSABSSA-SHA384-PSSZERO (no salt), each Randomized (a 32-byte random prefix) or Deterministic.  Privacy Pass token type 2
 * (RFC 9578) uses RSABSSA-SHA384-PSS-Deterministic.  Blind encodes the message with EMSA-PSS (RFC 8017 section 9.1.1,
 * SHA-384 and MGF1-SHA-384), multiplies it by r^e for a uniform r, and keeps r^-1; Finalize unblinds the signer's answer
 * and verifies it as an RSASSA-PSS signature (RFC 8017 section 9.1.2), refusing one that is not.  The tests check every
 * value of RFC 9474's Appendix A.
 */
public final class BlindRsa {
    private static final int HASH_BYTES = 48; // SHA-384

    /** An RSA public key (n, e). */
    public static final class PublicKey {
        public final BigInteger n;
        public final BigInteger e;

        public PublicKey(BigInteger n, BigInteger e) {
            this.n = n;
            this.e = e;
        }

        /** Bytes of the modulus (k). */
        public int modulusBytes() {
            return (n.bitLength() + 7) / 8;
        }
    }

    /** A blinded message and the inverse of its blind, to finalize the signature with. */
    public static final class Blinded {
        public final byte[] blindedMessage;
        public final BigInteger inverse;

        Blinded(byte[] blindedMessage, BigInteger inverse) {
            this.blindedMessage = blindedMessage;
            this.inverse = inverse;
        }
    }

    private final int saltBytes;
    private final boolean randomized;

    /** A variant: {@code saltBytes} 48 (PSS) or 0 (PSSZERO); {@code randomized} prepends 32 random bytes to the message. */
    public BlindRsa(int saltBytes, boolean randomized) {
        this.saltBytes = saltBytes;
        this.randomized = randomized;
    }

    /** RSABSSA-SHA384-PSS-Deterministic: Privacy Pass token type 2's variant. */
    public static BlindRsa pssDeterministic() {
        return new BlindRsa(HASH_BYTES, false);
    }

    private static MessageDigest sha384() {
        try {
            return MessageDigest.getInstance("SHA-384");
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("the platform has no SHA-384", impossible);
        }
    }

    /** I2OSP: {@code value} as {@code length} big-endian bytes. */
    public static byte[] toBytes(BigInteger value, int length) {
        byte[] raw = value.toByteArray();
        if (raw.length == length) return raw;
        byte[] out = new byte[length];
        if (raw.length > length) System.arraycopy(raw, raw.length - length, out, 0, length); // a leading sign byte
        else System.arraycopy(raw, 0, out, length - raw.length, raw.length);
        return out;
    }

    /** Prepare (section 4.1): the message, after 32 random bytes for a randomized variant. */
    public byte[] prepare(byte[] message, SecureRandom random) {
        if (!randomized) return message.clone();
        byte[] prefix = new byte[32];
        random.nextBytes(prefix);
        return Bytes.concat(prefix, message);
    }

    private static byte[] mgf1(byte[] seed, int length) {
        MessageDigest digest = sha384();
        byte[] out = new byte[length];
        for (int counter = 0, filled = 0; filled < length; counter++) {
            digest.update(seed);
            digest.update(Bytes.u32BigEndian(counter));
            byte[] block = digest.digest();
            int take = Math.min(block.length, length - filled);
            System.arraycopy(block, 0, out, filled, take);
            filled += take;
        }
        return out;
    }

    /** EMSA-PSS-ENCODE(M, emBits) with SHA-384, MGF1-SHA-384 and this variant's salt. */
    byte[] pssEncode(byte[] message, int emBits, byte[] salt) {
        int emLen = (emBits + 7) / 8;
        byte[] mHash = sha384().digest(message);
        if (emLen < HASH_BYTES + saltBytes + 2) throw new InvalidParameterError("The RSA key is too short for EMSA-PSS with SHA-384.");
        byte[] h = sha384().digest(Bytes.concat(new byte[8], mHash, salt));
        byte[] db = new byte[emLen - HASH_BYTES - 1];
        db[db.length - saltBytes - 1] = 0x01;
        System.arraycopy(salt, 0, db, db.length - saltBytes, saltBytes);
        byte[] mask = mgf1(h, db.length);
        for (int i = 0; i < db.length; i++) db[i] ^= mask[i];
        db[0] &= (byte) (0xff >>> (8 * emLen - emBits));
        return Bytes.concat(db, h, new byte[] {(byte) 0xbc});
    }

    /** EMSA-PSS-VERIFY(M, EM, emBits). */
    boolean pssVerify(byte[] message, byte[] em, int emBits) {
        int emLen = (emBits + 7) / 8;
        if (em.length != emLen || emLen < HASH_BYTES + saltBytes + 2 || (em[emLen - 1] & 0xff) != 0xbc) return false;
        byte[] maskedDb = Arrays.copyOfRange(em, 0, emLen - HASH_BYTES - 1);
        byte[] h = Arrays.copyOfRange(em, emLen - HASH_BYTES - 1, emLen - 1);
        int topBits = 8 * emLen - emBits;
        if (topBits > 0 && (maskedDb[0] & 0xff) >>> (8 - topBits) != 0) return false;
        byte[] mask = mgf1(h, maskedDb.length);
        byte[] db = new byte[maskedDb.length];
        for (int i = 0; i < db.length; i++) db[i] = (byte) (maskedDb[i] ^ mask[i]);
        db[0] &= (byte) (0xff >>> topBits);
        int padding = emLen - HASH_BYTES - saltBytes - 2;
        for (int i = 0; i < padding; i++) if (db[i] != 0) return false;
        if (db[padding] != 0x01) return false;
        byte[] salt = Arrays.copyOfRange(db, db.length - saltBytes, db.length);
        byte[] expected = sha384().digest(Bytes.concat(new byte[8], sha384().digest(message), salt));
        return MessageDigest.isEqual(expected, h);
    }

    /** A uniform integer in [1, n) by rejection on {@code k}-byte draws. */
    private static BigInteger uniformBelow(BigInteger n, SecureRandom random) {
        byte[] bytes = new byte[(n.bitLength() + 7) / 8];
        while (true) {
            random.nextBytes(bytes);
            BigInteger r = new BigInteger(1, bytes);
            if (r.signum() > 0 && r.compareTo(n) < 0) return r;
        }
    }

    /**
     * Blind (section 4.2): the salt, then r, from {@code random}; the blinded message z = m r^e mod n (k bytes) and r^-1
     * mod n.  A message representative or a blind that shares a factor with n is refused.
     */
    public Blinded blind(PublicKey key, byte[] prepared, SecureRandom random) {
        byte[] salt = new byte[saltBytes];
        if (saltBytes > 0) random.nextBytes(salt);
        byte[] encoded = pssEncode(prepared, key.n.bitLength() - 1, salt);
        BigInteger m = new BigInteger(1, encoded);
        if (!m.gcd(key.n).equals(BigInteger.ONE)) throw new InvalidParameterError("The message representative shares a factor with the RSA modulus.");
        BigInteger r = uniformBelow(key.n, random);
        BigInteger inverse;
        try {
            inverse = r.modInverse(key.n);
        } catch (ArithmeticException noInverse) {
            throw new InvalidParameterError("The blind shares a factor with the RSA modulus: the key is not an RSA key.");
        }
        BigInteger z = m.multiply(r.modPow(key.e, key.n)).mod(key.n);
        return new Blinded(toBytes(z, key.modulusBytes()), inverse);
    }

    /**
     * Finalize (section 4.4): s = z r^-1 mod n of the signer's blind signature, checked as an RSASSA-PSS signature of the
     * prepared message under the key; IllegalArgumentException ("invalid signature") otherwise.
     */
    public byte[] finalize(PublicKey key, byte[] prepared, byte[] blindSignature, BigInteger inverse) {
        int k = key.modulusBytes();
        if (blindSignature.length != k) throw new IllegalArgumentException("invalid signature: a blind signature has " + k + " bytes, not " + blindSignature.length);
        BigInteger z = new BigInteger(1, blindSignature);
        if (z.compareTo(key.n) >= 0) throw new IllegalArgumentException("invalid signature: the blind signature is not below the modulus");
        byte[] signature = toBytes(z.multiply(inverse).mod(key.n), k);
        if (!verify(key, prepared, signature)) throw new IllegalArgumentException("invalid signature");
        return signature;
    }

    /** RSASSA-PSS-VERIFY (RFC 8017 section 8.1.2) of {@code signature} on {@code message}. */
    public boolean verify(PublicKey key, byte[] message, byte[] signature) {
        int k = key.modulusBytes();
        if (signature.length != k) return false;
        BigInteger s = new BigInteger(1, signature);
        if (s.compareTo(key.n) >= 0) return false;
        int emBits = key.n.bitLength() - 1;
        byte[] em = toBytes(s.modPow(key.e, key.n), (emBits + 7) / 8);
        return pssVerify(message, em, emBits);
    }
}
