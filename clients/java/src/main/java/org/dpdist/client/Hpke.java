package org.dpdist.client;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;

import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * HPKE (RFC 9180) in base mode, single-shot sealing, for the one suite dpdist's relay uses: DHKEM(X25519, HKDF-SHA256),
 * HKDF-SHA256, AES-128-GCM (ids 0x0020, 0x0001, 0x0001), on the JDK's X25519 key agreement, HMAC-SHA256 ({@link Hkdf})
 * and AES-GCM.  The steps and labels are the RFC's (sections 4 and 5.1, 7.1.3 for DeriveKeyPair); the tests check every
 * intermediate value of its Appendix A.1.1, and a sealed report is opened by the collector's pyhpke.
 */
public final class Hpke {
    public static final int KEM_ID = 0x0020;
    public static final int KDF_ID = 0x0001;
    public static final int AEAD_ID = 0x0001;
    /** Bytes of an X25519 key and of the KEM's shared secret; of the AEAD key and nonce. */
    public static final int KEY_BYTES = 32;
    static final int AEAD_KEY_BYTES = 16;
    static final int NONCE_BYTES = 12;
    private static final byte[] VERSION_LABEL = Bytes.utf8("HPKE-v1");
    private static final byte[] KEM_SUITE = Bytes.concat(Bytes.utf8("KEM"), u16(KEM_ID));
    private static final byte[] HPKE_SUITE = Bytes.concat(Bytes.utf8("HPKE"), u16(KEM_ID), u16(KDF_ID), u16(AEAD_ID));
    private static final BigInteger P = BigInteger.ONE.shiftLeft(255).subtract(BigInteger.valueOf(19));

    private Hpke() {
    }

    private static byte[] u16(int value) {
        return new byte[] {(byte) (value >>> 8), (byte) value};
    }

    static byte[] labeledExtract(byte[] suite, byte[] salt, String label, byte[] ikm) {
        return Hkdf.extract(salt, Bytes.concat(VERSION_LABEL, suite, Bytes.utf8(label), ikm));
    }

    static byte[] labeledExpand(byte[] suite, byte[] prk, String label, byte[] info, int length) {
        return Hkdf.expand(prk, Bytes.concat(u16(length), VERSION_LABEL, suite, Bytes.utf8(label), info), length);
    }

    /** Whether this platform has X25519 key agreement and its key specs (the JDK since 11; an Android provider may not). */
    public static boolean available() {
        try {
            KeyAgreement.getInstance("X25519");
            KeyFactory.getInstance("XDH");
            return NamedParameterSpec.X25519 != null;
        } catch (GeneralSecurityException | LinkageError missing) {
            return false;
        }
    }

    /** The little-endian u-coordinate of 32 bytes, its top bit masked (RFC 7748 section 5). */
    private static BigInteger decodeU(byte[] bytes) {
        byte[] big = new byte[KEY_BYTES];
        for (int i = 0; i < KEY_BYTES; i++) big[i] = bytes[KEY_BYTES - 1 - i];
        big[0] &= 0x7f;
        return new BigInteger(1, big).mod(P);
    }

    private static byte[] encodeU(BigInteger u) {
        byte[] big = u.toByteArray();
        byte[] out = new byte[KEY_BYTES];
        for (int i = 0; i < KEY_BYTES && i < big.length; i++) out[i] = big[big.length - 1 - i];
        return out;
    }

    /** X25519(scalar, u) of the raw 32-byte scalar and u-coordinate, by the JDK (all-zero results are refused). */
    static byte[] x25519(byte[] scalar, byte[] u) {
        try {
            KeyFactory factory = KeyFactory.getInstance("XDH");
            PrivateKey privateKey = factory.generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, scalar));
            PublicKey publicKey = factory.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, decodeU(u)));
            KeyAgreement agreement = KeyAgreement.getInstance("X25519");
            agreement.init(privateKey);
            agreement.doPhase(publicKey, true);
            return agreement.generateSecret();
        } catch (GeneralSecurityException error) {
            throw new InvalidParameterError("X25519 failed (" + error.getMessage() + "): the key is not a usable X25519 public key.");
        }
    }

    /** The X25519 public key of a raw private key: X25519(sk, 9). */
    public static byte[] publicKeyOf(byte[] privateKey) {
        return x25519(privateKey, encodeU(BigInteger.valueOf(9)));
    }

    /** DeriveKeyPair(ikm) of DHKEM(X25519, HKDF-SHA256) (RFC 9180 section 7.1.3): {sk, pk}. */
    public static byte[][] deriveKeyPair(byte[] ikm) {
        byte[] prk = labeledExtract(KEM_SUITE, new byte[0], "dkp_prk", ikm);
        byte[] sk = labeledExpand(KEM_SUITE, prk, "sk", new byte[0], KEY_BYTES);
        return new byte[][] {sk, publicKeyOf(sk)};
    }

    /** Encap with the ephemeral key of {@code ikmE} (section 4.1): {shared_secret, enc}. */
    static byte[][] encap(byte[] recipientPublicKey, byte[] ikmE) {
        byte[][] ephemeral = deriveKeyPair(ikmE);
        byte[] dh = x25519(ephemeral[0], recipientPublicKey);
        byte[] enc = ephemeral[1];
        byte[] kemContext = Bytes.concat(enc, recipientPublicKey);
        byte[] prk = labeledExtract(KEM_SUITE, new byte[0], "eae_prk", dh);
        return new byte[][] {labeledExpand(KEM_SUITE, prk, "shared_secret", kemContext, KEY_BYTES), enc};
    }

    /** KeySchedule of base mode (section 5.1): {key, base_nonce, exporter_secret}. */
    static byte[][] keySchedule(byte[] sharedSecret, byte[] info) {
        byte[] pskIdHash = labeledExtract(HPKE_SUITE, new byte[0], "psk_id_hash", new byte[0]);
        byte[] infoHash = labeledExtract(HPKE_SUITE, new byte[0], "info_hash", info);
        byte[] context = Bytes.concat(new byte[] {0}, pskIdHash, infoHash);
        byte[] secret = labeledExtract(HPKE_SUITE, sharedSecret, "secret", new byte[0]);
        return new byte[][] {labeledExpand(HPKE_SUITE, secret, "key", context, AEAD_KEY_BYTES), labeledExpand(HPKE_SUITE, secret, "base_nonce", context, NONCE_BYTES),
            labeledExpand(HPKE_SUITE, secret, "exp", context, Hkdf.HASH_BYTES), context};
    }

    /** AES-128-GCM of {@code plaintext} (the 16-byte tag appended). */
    static byte[] aeadSeal(byte[] key, byte[] nonce, byte[] aad, byte[] plaintext) {
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce));
            cipher.updateAAD(aad);
            return cipher.doFinal(plaintext);
        } catch (GeneralSecurityException error) {
            throw new IllegalStateException("the platform's AES-GCM failed", error);
        }
    }

    /** The sealed message of one single-shot base-mode seal: the encapsulated key and the ciphertext. */
    public static final class Sealed {
        public final byte[] enc;
        public final byte[] ciphertext;

        Sealed(byte[] enc, byte[] ciphertext) {
            this.enc = enc;
            this.ciphertext = ciphertext;
        }
    }

    /**
     * OpenBase(enc, skR, info, aad, ct): the recipient's side (the collector's), which a device never runs; the client's
     * tests open what it sealed with it, as the collector's pyhpke does.
     */
    static byte[] open(byte[] enc, byte[] recipientPrivateKey, byte[] info, byte[] aad, byte[] ciphertext) throws GeneralSecurityException {
        byte[] dh = x25519(recipientPrivateKey, enc);
        byte[] kemContext = Bytes.concat(enc, publicKeyOf(recipientPrivateKey));
        byte[] prk = labeledExtract(KEM_SUITE, new byte[0], "eae_prk", dh);
        byte[][] schedule = keySchedule(labeledExpand(KEM_SUITE, prk, "shared_secret", kemContext, KEY_BYTES), info);
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(schedule[0], "AES"), new GCMParameterSpec(128, schedule[1]));
        cipher.updateAAD(aad);
        return cipher.doFinal(ciphertext);
    }

    /** SealBase(pkR, info, aad, pt) with the ephemeral key derived from {@code ikmE} (tests give the RFC's). */
    public static Sealed seal(byte[] recipientPublicKey, byte[] info, byte[] aad, byte[] plaintext, byte[] ikmE) {
        if (recipientPublicKey.length != KEY_BYTES) throw new InvalidParameterError("An X25519 public key has 32 bytes. Got " + recipientPublicKey.length + ".");
        byte[][] encapsulated = encap(recipientPublicKey, ikmE);
        byte[][] schedule = keySchedule(encapsulated[0], info);
        return new Sealed(encapsulated[1], aeadSeal(schedule[0], schedule[1], aad, plaintext)); // sequence 0: the base nonce
    }

    /** SealBase with a fresh ephemeral key from {@code random}. */
    public static Sealed seal(byte[] recipientPublicKey, byte[] info, byte[] aad, byte[] plaintext, SecureRandom random) {
        byte[] ikmE = new byte[KEY_BYTES];
        random.nextBytes(ikmE);
        return seal(recipientPublicKey, info, aad, plaintext, ikmE);
    }
}
