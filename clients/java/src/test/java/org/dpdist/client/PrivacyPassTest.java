package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.PSSParameterSpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Privacy Pass on the device against every test vector of RFC 9474 (Appendix A: the four RSABSSA variants) and RFC 9578
 * (Appendix A.2: token type 2), with the vectors' fixed randomness, read from the repository's fixtures (the RFCs' own
 * values, clients/js/test/fixtures/rfc9474.json and rfc9578.json); each token is also verified by the JDK's own RSASSA-PSS
 * (an implementation this client did not write).  And the redemption context, the TokenChallenge and the token key's
 * encoding, with their refusals.
 */
class PrivacyPassTest {
    /** A SecureRandom that gives the listed byte strings, each to a draw of its length, in order (then fails). */
    static final class Scripted extends java.security.SecureRandom {
        private static final long serialVersionUID = 1L;
        private final Deque<byte[]> queue = new ArrayDeque<>();

        Scripted(byte[]... chunks) {
            for (byte[] chunk : chunks) queue.add(chunk);
        }

        @Override
        public void nextBytes(byte[] bytes) {
            byte[] next = queue.poll();
            if (next == null || next.length != bytes.length) {
                throw new IllegalStateException("a draw of " + bytes.length + " bytes; the vector has " + (next == null ? "none" : next.length));
            }
            System.arraycopy(next, 0, bytes, 0, bytes.length);
        }

        boolean drained() {
            return queue.isEmpty();
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> vectors(String name) {
        return (List<Map<String, Object>>) Json.asObject(Fixtures.read(name)).get("vectors");
    }

    private static byte[] hex(Map<String, Object> vector, String key) {
        return Bytes.fromHex((String) vector.get(key));
    }

    private static BigInteger big(Map<String, Object> vector, String key) {
        return new BigInteger((String) vector.get(key), 16);
    }

    @Test
    void rfc9474AllFourVariantsWithTheVectorsRandomness() {
        List<Map<String, Object>> all = vectors("rfc9474.json");
        assertEquals(4, all.size());
        for (Map<String, Object> vector : all) {
            String name = (String) vector.get("name");
            BlindRsa suite = new BlindRsa(name.contains("PSSZERO") ? 0 : 48, name.endsWith("Randomized"));
            BlindRsa.PublicKey key = new BlindRsa.PublicKey(big(vector, "n"), big(vector, "e"));
            int k = key.modulusBytes();
            byte[] prepared = suite.prepare(hex(vector, "msg"), new Scripted(hex(vector, "msg_prefix")));
            assertEquals(vector.get("prepared_msg"), Bytes.hex(prepared), name);
            // Blind draws the PSS salt (none for PSSZERO), then r: the inverse of the vector's inv
            BigInteger r = big(vector, "inv").modInverse(key.n);
            byte[] salt = hex(vector, "salt");
            Scripted random = salt.length > 0 ? new Scripted(salt, BlindRsa.toBytes(r, k)) : new Scripted(BlindRsa.toBytes(r, k));
            assertEquals(vector.get("encoded_msg"), Bytes.hex(suite.pssEncode(prepared, key.n.bitLength() - 1, salt)), name);
            BlindRsa.Blinded blinded = suite.blind(key, prepared, random);
            assertTrue(random.drained(), name);
            assertEquals(vector.get("blinded_msg"), Bytes.hex(blinded.blindedMessage), name);
            assertEquals(big(vector, "inv"), blinded.inverse, name);
            // the signer (the tests' BigInteger) signs as the RFC does, and Finalize unblinds to the RFC's signature
            byte[] blindSig = BlindRsa.toBytes(new BigInteger(1, blinded.blindedMessage).modPow(big(vector, "d"), key.n), k);
            assertEquals(vector.get("blind_sig"), Bytes.hex(blindSig), name);
            assertEquals(vector.get("sig"), Bytes.hex(suite.finalize(key, prepared, blindSig, blinded.inverse)), name);
            // Finalize checks the signature: another blind signature, or another message, is refused
            byte[] tampered = blindSig.clone();
            tampered[k - 1] ^= 1;
            assertThrows(IllegalArgumentException.class, () -> suite.finalize(key, prepared, tampered, blinded.inverse));
            assertThrows(IllegalArgumentException.class, () -> suite.finalize(key, Bytes.concat(prepared, new byte[1]), blindSig, blinded.inverse));
        }
    }

    /** The RFC 9578 vector's issuer key: the PKCS#8 PEM of its skS. */
    static RSAPrivateCrtKey issuerKey(Map<String, Object> vector) throws Exception {
        String pem = new String(hex(vector, "skS"), StandardCharsets.US_ASCII);
        String body = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return (RSAPrivateCrtKey) KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(body)));
    }

    /** The token's authenticator verified by the JDK's RSASSA-PSS (SHA-384, MGF1-SHA-384, salt 48): not this client's code. */
    static boolean jdkVerifies(BlindRsa.PublicKey key, byte[] token) throws Exception {
        Signature verifier = Signature.getInstance("RSASSA-PSS");
        verifier.setParameter(new PSSParameterSpec("SHA-384", "MGF1", MGF1ParameterSpec.SHA384, 48, 1));
        verifier.initVerify(KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(key.n, key.e)));
        verifier.update(Arrays.copyOfRange(token, 0, 98));
        return verifier.verify(Arrays.copyOfRange(token, 98, token.length));
    }

    @Test
    void rfc9578TokenType2EveryVector() throws Exception {
        List<Map<String, Object>> all = vectors("rfc9578.json");
        assertEquals(5, all.size());
        for (Map<String, Object> vector : all) {
            RSAPrivateCrtKey issuer = issuerKey(vector);
            byte[] pkS = hex(vector, "pkS");
            BlindRsa.PublicKey key = PrivacyPass.publicKeyOf(PrivacyPass.checkTokenKey(pkS));
            assertEquals(issuer.getModulus(), key.n);
            // the TokenChallenge re-encoded from its fields is the vector's
            byte[] challenge = hex(vector, "token_challenge");
            int nameLength = (challenge[2] & 0xff) << 8 | (challenge[3] & 0xff);
            String name = new String(challenge, 4, nameLength, StandardCharsets.UTF_8);
            int contextLength = challenge[4 + nameLength] & 0xff;
            byte[] context = Arrays.copyOfRange(challenge, 5 + nameLength, 5 + nameLength + contextLength);
            int at = 5 + nameLength + contextLength;
            String origins = new String(challenge, at + 2, (challenge[at] & 0xff) << 8 | (challenge[at + 1] & 0xff), StandardCharsets.UTF_8);
            assertEquals(vector.get("token_challenge"), Bytes.hex(PrivacyPass.tokenChallenge(name, context, origins)));
            // the request from the vector's nonce, salt and blind
            Scripted random = new Scripted(hex(vector, "nonce"), hex(vector, "salt"), hex(vector, "blind"));
            Map<String, Object> state = PrivacyPass.createTokenRequest(pkS, challenge, random);
            assertTrue(random.drained());
            byte[] request = Bytes.fromBase64Url(state.get("request"), "request");
            assertEquals(vector.get("token_request"), Bytes.hex(request));
            byte[] response = BlindRsa.toBytes(new BigInteger(1, Arrays.copyOfRange(request, 3, request.length)).modPow(issuer.getPrivateExponent(), key.n), 256);
            assertEquals(vector.get("token_response"), Bytes.hex(response));
            // the state is JSON-safe: a device may keep it while the issuer's answer is on its way
            Map<String, Object> kept = Json.asObject(Json.parse(Json.write(state)));
            byte[] token = PrivacyPass.finalizeToken(pkS, kept, response);
            assertEquals(PrivacyPass.TOKEN_BYTES, token.length);
            assertEquals(vector.get("token"), Bytes.hex(token));
            assertTrue(jdkVerifies(key, token));
            assertEquals("PrivateToken token=\"" + Bytes.base64Url(token) + "\"", PrivacyPass.authorizationHeader(token));
            byte[] wrong = response.clone();
            wrong[0] ^= 1;
            ServiceError bad = assertThrows(ServiceError.class, () -> PrivacyPass.finalizeToken(pkS, kept, wrong));
            assertEquals("bad_token_response", bad.code());
            assertEquals("bad_token_response", assertThrows(ServiceError.class, () -> PrivacyPass.finalizeToken(pkS, kept, Arrays.copyOf(response, 255))).code());
        }
    }

    @Test
    void aTokenRequestIsFreshEachTime() throws Exception {
        Map<String, Object> vector = vectors("rfc9578.json").get(0);
        byte[] pkS = hex(vector, "pkS");
        byte[] challenge = hex(vector, "token_challenge");
        Map<String, Object> first = PrivacyPass.createTokenRequest(pkS, challenge, new java.security.SecureRandom());
        Map<String, Object> second = PrivacyPass.createTokenRequest(pkS, challenge, new java.security.SecureRandom());
        assertNotEquals(first.get("request"), second.get("request")); // another nonce, salt and blind: the issuer cannot link them
        RSAPrivateCrtKey issuer = issuerKey(vector);
        byte[] request = Bytes.fromBase64Url(second.get("request"), "request");
        byte[] answerToSecond = BlindRsa.toBytes(new BigInteger(1, Arrays.copyOfRange(request, 3, request.length)).modPow(issuer.getPrivateExponent(), issuer.getModulus()), 256);
        assertEquals("bad_token_response", assertThrows(ServiceError.class, () -> PrivacyPass.finalizeToken(pkS, first, answerToSecond)).code());
        assertTrue(jdkVerifies(PrivacyPass.publicKeyOf(pkS), PrivacyPass.finalizeToken(pkS, second, answerToSecond)));
    }

    @Test
    void aTokensNonceIsBoundToTheHpkeKeyItsReportIsSealedWithAsPythonBindsIt() throws Exception {
        byte[] challenge = PrivacyPass.tokenChallenge("issuer.example", PrivacyPass.redemptionContext("00".repeat(32), PrivacyPass.CAMPAIGN_CONTEXT), "");
        byte[] seed = new byte[32];
        for (int i = 0; i < 32; i++) seed[i] = (byte) i;
        byte[] nonce = Relay.bindingNonce(challenge, seed);
        // known answer, from dpdist._wire._binding.seed_nonce (tests/wire/test_binding.py)
        assertEquals("72ad0d2e02e3c4cf0103baa5f877e365d473a116aa4f17d78019d59d84363e1d", Bytes.hex(nonce));
        Map<String, Object> vector = vectors("rfc9578.json").get(0);
        byte[] pkS = hex(vector, "pkS");
        Map<String, Object> state = PrivacyPass.createTokenRequest(pkS, challenge, nonce, new java.security.SecureRandom());
        assertArrayEquals(nonce, Arrays.copyOfRange(Bytes.fromBase64Url(state.get("tokenInput"), "tokenInput"), 2, 34));
        byte[] collector = Relay.keyConfig(RelayedFakes.ohttpRelay(Hpke.deriveKeyPair(new byte[32])[1], "http://relay.test"), "c");
        byte[] request = Relay.encapsulate(collector, "c", new byte[3], seed);
        assertArrayEquals(Hpke.deriveKeyPair(seed)[1], Arrays.copyOfRange(request, 7, 39)); // the enc the nonce commits to
        assertArrayEquals(Arrays.copyOf(request, 39), Arrays.copyOf(Relay.encapsulate(collector, "c", new byte[3], seed), 39));
        assertFalse(Arrays.equals(Arrays.copyOfRange(request, 7, 39), Arrays.copyOfRange(Relay.encapsulate(collector, "c", new byte[3], null), 7, 39)));
        assertThrows(InvalidParameterError.class, () -> PrivacyPass.createTokenRequest(pkS, challenge, new byte[31], new java.security.SecureRandom()));
    }

    @Test
    void theRedemptionContextBindsTheIdentityThroughItsPin() {
        String zeros = "00".repeat(32);
        // known answers, from Python's hashlib (the wire the Python device, relay and collector compute)
        assertEquals("5a0ca63620caf1c9b8c028fc1db5b2e326f2fccf566804d791c2ce9046becd89", Bytes.hex(PrivacyPass.redemptionContext(zeros, PrivacyPass.CAMPAIGN_CONTEXT)));
        assertEquals("6f482df052e2700f53733ef22c82c7c1044cde0b739ea9b2b64d7a39bcefac8e",
            Bytes.hex(PrivacyPass.redemptionContext(zeros, PrivacyPass.EARLIER_CAMPAIGN_CONTEXT)));
        assertEquals("0002000e6973737565722e6578616d706c6520" + "5a0ca63620caf1c9b8c028fc1db5b2e326f2fccf566804d791c2ce9046becd89" + "0000",
            Bytes.hex(PrivacyPass.tokenChallenge("issuer.example", PrivacyPass.redemptionContext(zeros, PrivacyPass.CAMPAIGN_CONTEXT), "")));
        assertFalse(Arrays.equals(PrivacyPass.redemptionContext(zeros, PrivacyPass.CAMPAIGN_CONTEXT),
            PrivacyPass.redemptionContext("00".repeat(31) + "01", PrivacyPass.CAMPAIGN_CONTEXT)));
        assertThrows(InvalidParameterError.class, () -> PrivacyPass.redemptionContext(zeros, "dpdist campaign v1\0"));
        assertThrows(InvalidParameterError.class, () -> PrivacyPass.redemptionContext("0011", PrivacyPass.CAMPAIGN_CONTEXT));
        assertThrows(InvalidParameterError.class, () -> PrivacyPass.redemptionContext("AB".repeat(32), PrivacyPass.CAMPAIGN_CONTEXT));
    }

    @Test
    void aTokenKeyMustBeType2sEncoding() throws Exception {
        byte[] pkS = hex(vectors("rfc9578.json").get(0), "pkS");
        assertArrayEquals(pkS, PrivacyPass.checkTokenKey(Bytes.base64Url(pkS)));
        java.security.KeyPairGenerator generator = java.security.KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        byte[] rsaEncryption = generator.generateKeyPair().getPublic().getEncoded(); // the rsaEncryption OID, not type 2's
        assertTrue(assertThrows(InvalidParameterError.class, () -> PrivacyPass.checkTokenKey(rsaEncryption)).getMessage().contains("id-RSASSA-PSS"));
        assertTrue(assertThrows(InvalidParameterError.class, () -> PrivacyPass.checkTokenKey("not base64!")).getMessage().contains("base64url"));
        byte[] truncated = Arrays.copyOf(pkS, pkS.length - 3);
        assertThrows(InvalidParameterError.class, () -> PrivacyPass.checkTokenKey(truncated));
    }
}
