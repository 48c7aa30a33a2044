package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * HKDF against RFC 5869's test vectors (Appendix A, cases 1 to 3: SHA-256) and HPKE against RFC 9180's (Appendix A.1.1:
 * DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, base mode), typed in from the RFCs: every intermediate value the
 * RFC prints, so that a wrong label or order cannot pass by agreeing with itself.
 */
class HpkeTest {
    private static byte[] hex(String text) {
        return Bytes.fromHex(text);
    }

    @Test
    void hkdfMatchesRfc5869() {
        // A.1: basic test case with SHA-256
        byte[] ikm = hex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
        byte[] prk = Hkdf.extract(hex("000102030405060708090a0b0c"), ikm);
        assertEquals("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5", Bytes.hex(prk));
        assertEquals("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
            Bytes.hex(Hkdf.expand(prk, hex("f0f1f2f3f4f5f6f7f8f9"), 42)));
        // A.2: longer inputs and outputs
        StringBuilder longIkm = new StringBuilder();
        StringBuilder longSalt = new StringBuilder();
        StringBuilder longInfo = new StringBuilder();
        for (int i = 0; i < 80; i++) {
            longIkm.append(String.format("%02x", i));
            longSalt.append(String.format("%02x", 0x60 + i));
            longInfo.append(String.format("%02x", 0xb0 + i));
        }
        byte[] prk2 = Hkdf.extract(hex(longSalt.toString()), hex(longIkm.toString()));
        assertEquals("06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244", Bytes.hex(prk2));
        assertEquals("b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
            + "cc30c58179ec3e87c14c01d5c1f3434f1d87", Bytes.hex(Hkdf.expand(prk2, hex(longInfo.toString()), 82)));
        // A.3: zero-length salt and info
        byte[] prk3 = Hkdf.extract(new byte[0], ikm);
        assertEquals("19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04", Bytes.hex(prk3));
        assertEquals("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8", Bytes.hex(Hkdf.expand(prk3, new byte[0], 42)));
    }

    // RFC 9180, Appendix A.1.1 (mode 0, kem_id 32, kdf_id 1, aead_id 1)
    private static final String INFO = "4f6465206f6e2061204772656369616e2055726e";
    private static final String IKM_E = "7268600d403fce431561aef583ee1613527cff655c1343f29812e66706df3234";
    private static final String PK_EM = "37fda3567bdbd628e88668c3c8d7e97d1d1253b6d4ea6d44c150f741f1bf4431";
    private static final String SK_EM = "52c4a758a802cd8b936eceea314432798d5baf2d7e9235dc084ab1b9cfa2f736";
    private static final String IKM_R = "6db9df30aa07dd42ee5e8181afdb977e538f5e1fec8a06223f33f7013e525037";
    private static final String PK_RM = "3948cfe0ad1ddb695d780e59077195da6c56506b027329794ab02bca80815c4d";
    private static final String SK_RM = "4612c550263fc8ad58375df3f557aac531d26850903e55a9f23f21d8534e8ac8";
    private static final String SHARED_SECRET = "fe0e18c9f024ce43799ae393c7e8fe8fce9d218875e8227b0187c04e7d2ea1fc";
    private static final String KEY_SCHEDULE_CONTEXT = "00725611c9d98c07c03f60095cd32d400d8347d45ed67097bbad50fc56da742d07"
        + "cb6cffde367bb0565ba28bb02c90744a20f5ef37f30523526106f637abb05449";
    private static final String KEY = "4531685d41d65f03dc48f6b8302c05b0";
    private static final String BASE_NONCE = "56d890e5accaaf011cff4b7d";
    private static final String EXPORTER_SECRET = "45ff1c2e220db587171952c0592d5f5ebe103f1561a2614e38f2ffd47e99e3f8";
    private static final String PLAINTEXT = "4265617574792069732074727574682c20747275746820626561757479";
    /** sequence number 0: aad "Count-0", the nonce is the base nonce */
    private static final String AAD_0 = "436f756e742d30";
    private static final String CT_0 = "f938558b5d72f1a23810b4be2ab4f84331acc02fc97babc53a52ae8218a355a96d8770ac83d07bea87e13c512a";
    /** sequence number 1 (nonce 56d890e5accaaf011cff4b7c) and 255 (nonce 56d890e5accaaf011cff4b82), for the AEAD alone */
    private static final String CT_1 = "af2d7e9ac9ae7e270f46ba1f975be53c09f8d875bdc8535458c2494e8a6eab251c03d0c22a56b8ca42c2063b84";
    private static final String CT_255 = "7175db9717964058640a3a11fb9007941a5d1757fda1a6935c805c21af32505bf106deefec4a49ac38d71c9e0a";

    @Test
    void deriveKeyPairGivesTheRfcsKeys() {
        byte[][] ephemeral = Hpke.deriveKeyPair(hex(IKM_E));
        assertEquals(SK_EM, Bytes.hex(ephemeral[0]));
        assertEquals(PK_EM, Bytes.hex(ephemeral[1]));
        byte[][] recipient = Hpke.deriveKeyPair(hex(IKM_R));
        assertEquals(SK_RM, Bytes.hex(recipient[0]));
        assertEquals(PK_RM, Bytes.hex(recipient[1]));
    }

    @Test
    void encapAndTheKeyScheduleGiveTheRfcsSecrets() {
        byte[][] encapsulated = Hpke.encap(hex(PK_RM), hex(IKM_E));
        assertEquals(SHARED_SECRET, Bytes.hex(encapsulated[0]));
        assertEquals(PK_EM, Bytes.hex(encapsulated[1]));
        // Decap: the recipient's DH with enc is the sender's
        assertArrayEquals(Hpke.x25519(hex(SK_RM), hex(PK_EM)), Hpke.x25519(hex(SK_EM), hex(PK_RM)));
        byte[][] schedule = Hpke.keySchedule(hex(SHARED_SECRET), hex(INFO));
        assertEquals(KEY, Bytes.hex(schedule[0]));
        assertEquals(BASE_NONCE, Bytes.hex(schedule[1]));
        assertEquals(EXPORTER_SECRET, Bytes.hex(schedule[2]));
        assertEquals(KEY_SCHEDULE_CONTEXT, Bytes.hex(schedule[3]));
    }

    @Test
    void sealGivesTheRfcsCiphertexts() {
        Hpke.Sealed sealed = Hpke.seal(hex(PK_RM), hex(INFO), hex(AAD_0), hex(PLAINTEXT), hex(IKM_E));
        assertEquals(PK_EM, Bytes.hex(sealed.enc));
        assertEquals(CT_0, Bytes.hex(sealed.ciphertext));
        assertEquals(CT_1, Bytes.hex(Hpke.aeadSeal(hex(KEY), hex("56d890e5accaaf011cff4b7c"), hex("436f756e742d31"), hex(PLAINTEXT))));
        assertEquals(CT_255, Bytes.hex(Hpke.aeadSeal(hex(KEY), hex("56d890e5accaaf011cff4b82"), hex("436f756e742d323535"), hex(PLAINTEXT))));
        // another recipient, another info: other ciphertexts (the campaign id is in the info)
        Hpke.Sealed other = Hpke.seal(hex(PK_RM), Bytes.utf8("dpdist relay v1\0other"), hex(AAD_0), hex(PLAINTEXT), hex(IKM_E));
        assertEquals(false, Bytes.hex(other.ciphertext).equals(CT_0));
        assertThrows(InvalidParameterError.class, () -> Hpke.seal(new byte[31], hex(INFO), hex(AAD_0), hex(PLAINTEXT), hex(IKM_E)));
        assertThrows(InvalidParameterError.class, () -> Hpke.seal(new byte[32], hex(INFO), hex(AAD_0), hex(PLAINTEXT), hex(IKM_E))); // u = 0: small order
    }
}
