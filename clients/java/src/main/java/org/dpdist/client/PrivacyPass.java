package org.dpdist.client;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Privacy Pass on the device (the JavaScript client's {@code src/privacypass.js}): the client side of token type 2
 * (RFC 9578 section 6: publicly verifiable, blind RSA 2048, RSABSSA-SHA384-PSS-Deterministic of RFC 9474, {@link BlindRsa})
 * and the PrivateToken authorization of RFC 9577, in two steps with state that can be stored between them (a lost
 * issuer answer is asked again with the same request):
 *
 * <pre>
 *   nonce = random(32), or the caller's ({@link Relay#bindingNonce}: bound to the report)
 *   challenge_digest = SHA-256(TokenChallenge); token_key_id = SHA-256(token_key)
 *   token_input = 0x0002 | nonce | challenge_digest | token_key_id       (RFC 9578 section 6.1)
 *   blinded_msg, inv = Blind(pkI, token_input)                            (RFC 9474 section 4.2)
 *   TokenRequest = 0x0002 | token_key_id[31] | blinded_msg               -&gt; issuer
 *   authenticator = Finalize(pkI, token_input, blind_sig, inv)            (RFC 9474 section 4.4, checks the signature)
 *   Token = token_input | authenticator (354 bytes)                       (RFC 9577 section 2.2)
 * </pre>
 */
public final class PrivacyPass {
    /** Token type 2: blind RSA (2048-bit), RSABSSA-SHA384-PSS-Deterministic (RFC 9578 section 8.2.2). */
    public static final int TOKEN_TYPE = 0x0002;
    /** Bytes of a token of type 2: token_type (2) | nonce (32) | challenge_digest (32) | token_key_id (32) | authenticator (256). */
    public static final int TOKEN_BYTES = 354;
    /** Media types of the issuance protocol (RFC 9578 section 9). */
    public static final String TOKEN_REQUEST_TYPE = "application/private-token-request";
    public static final String TOKEN_RESPONSE_TYPE = "application/private-token-response";
    private static final int NK = 256; // bytes of the modulus and of a blind signature (2048-bit keys)
    /**
     * The AlgorithmIdentifier of a type-2 token key (RFC 9578 section 6.5): id-RSASSA-PSS with SHA-384, MGF1 with SHA-384
     * and a 48-byte salt, in DER as RFC 9578 Appendix A.2's pkS holds it, after the SubjectPublicKeyInfo's 4-byte header.
     */
    private static final byte[] PSS_ALGORITHM = Bytes.fromHex(
        "303d06092a864886f70d01010a3030a00d300b0609608648016503040202a11a301806092a864886f70d010108300b0609608648016503040202a203020130");
    /**
     * The label of the redemption context: ASCII, then one zero byte.  v3: an identity whose issuer states
     * {@code tokens_each}; v2: an identity made before issuers published it.
     */
    public static final String CAMPAIGN_CONTEXT = "dpdist campaign v3\0";
    public static final String EARLIER_CAMPAIGN_CONTEXT = "dpdist campaign v2\0";

    private PrivacyPass() {
    }

    /**
     * The redemption context of a relayed campaign's TokenChallenge: SHA-256(label || the pin's 32 bytes), where the pin
     * is the SHA-256 of the campaign's identity document, so that a token is bound to the exact identity the device trusted.
     */
    public static byte[] redemptionContext(String pin, String label) {
        if (pin == null || !pin.matches("[0-9a-f]{64}")) {
            throw new InvalidParameterError("A relayed campaign's pin must be 64 lower-case hexadecimal digits. Got " + Json.show(pin) + ".");
        }
        if (!CAMPAIGN_CONTEXT.equals(label) && !EARLIER_CAMPAIGN_CONTEXT.equals(label)) {
            throw new InvalidParameterError("A redemption context's label is " + Json.show(CAMPAIGN_CONTEXT) + " or " + Json.show(EARLIER_CAMPAIGN_CONTEXT) + ". Got "
                + Json.show(label) + ".");
        }
        return Bytes.sha256(Bytes.concat(Bytes.utf8(label), Bytes.fromHex(pin)));
    }

    /**
     * The bytes of a TokenChallenge of type 2 (RFC 9577 section 2.1.1): token_type, issuer_name (UTF-8, 2-byte length),
     * the redemption context (0 or 32 bytes, 1-byte length) and origin_info (2-byte length; empty, as dpdist's campaigns).
     */
    public static byte[] tokenChallenge(String issuerName, byte[] context, String originInfo) {
        if (issuerName == null || issuerName.isEmpty()) {
            throw new InvalidParameterError("A TokenChallenge's issuer name must be a non-empty string. Got " + Json.show(issuerName) + ".");
        }
        if (context.length != 0 && context.length != 32) throw new InvalidParameterError("A redemption context has 0 or 32 bytes. Got " + context.length + ".");
        byte[] name = Bytes.utf8(issuerName);
        byte[] origins = Bytes.utf8(originInfo == null ? "" : originInfo);
        return Bytes.concat(u16(TOKEN_TYPE), u16(name.length), name, new byte[] {(byte) context.length}, context, u16(origins.length), origins);
    }

    private static byte[] u16(int value) {
        return new byte[] {(byte) (value >>> 8), (byte) value};
    }

    /** The token key of type 2 (SPKI bytes, or base64url text) as bytes, refused unless it is one (RFC 9578 section 6.5). */
    public static byte[] checkTokenKey(Object tokenKey) {
        byte[] bytes = tokenKey instanceof String ? Bytes.fromBase64Url(tokenKey, "A token key") : ((byte[]) tokenKey).clone();
        if (bytes.length <= 4 + PSS_ALGORITHM.length || (bytes[0] & 0xff) != 0x30
            || !Arrays.equals(Arrays.copyOfRange(bytes, 4, 4 + PSS_ALGORITHM.length), PSS_ALGORITHM)) {
            throw new InvalidParameterError("A token key of type 2 is the SubjectPublicKeyInfo of a 2048-bit RSA key with the id-RSASSA-PSS OID and the "
                + "parameters SHA-384, MGF1 with SHA-384, salt length 48 (RFC 9578 section 6.5). Got another encoding.");
        }
        publicKeyOf(bytes); // its RSA key, 2048 bits
        return bytes;
    }

    /** The RSA key (n, e) of a type-2 token key: the SPKI's BIT STRING, a SEQUENCE of two INTEGERs (DER). */
    public static BlindRsa.PublicKey publicKeyOf(byte[] tokenKey) {
        int[] at = {4 + PSS_ALGORITHM.length};
        try {
            expect(tokenKey, at, 0x03);
            int length = length(tokenKey, at);
            if (tokenKey[at[0]++] != 0 || at[0] + length - 1 != tokenKey.length) throw new IllegalArgumentException("bit string");
            expect(tokenKey, at, 0x30);
            length(tokenKey, at);
            BigInteger n = integer(tokenKey, at);
            BigInteger e = integer(tokenKey, at);
            if (at[0] != tokenKey.length) throw new IllegalArgumentException("trailing bytes");
            if (n.bitLength() != 8 * NK) {
                throw new InvalidParameterError("A token key of type 2 is a 2048-bit RSA key. Got " + n.bitLength() + " bits.");
            }
            return new BlindRsa.PublicKey(n, e);
        } catch (ArrayIndexOutOfBoundsException | IllegalArgumentException bad) {
            throw new InvalidParameterError("A token key of type 2 holds an RSA public key (RFC 8017's RSAPublicKey in DER). Got another encoding ("
                + bad.getMessage() + ").");
        }
    }

    private static void expect(byte[] der, int[] at, int tag) {
        if ((der[at[0]++] & 0xff) != tag) throw new IllegalArgumentException("tag " + tag);
    }

    private static int length(byte[] der, int[] at) {
        int first = der[at[0]++] & 0xff;
        if (first < 0x80) return first;
        int count = first & 0x7f;
        if (count > 3) throw new IllegalArgumentException("length");
        int length = 0;
        for (int i = 0; i < count; i++) length = (length << 8) | (der[at[0]++] & 0xff);
        return length;
    }

    private static BigInteger integer(byte[] der, int[] at) {
        expect(der, at, 0x02);
        int length = length(der, at);
        BigInteger value = new BigInteger(Arrays.copyOfRange(der, at[0], at[0] + length));
        at[0] += length;
        if (value.signum() <= 0) throw new IllegalArgumentException("integer");
        return value;
    }

    /**
     * A TokenRequest for one token of type 2 under {@code tokenKey} for {@code challenge} (RFC 9578 section 6.1), and the
     * state that finishes it ({@link #finalizeToken}): {@code {request, tokenInput, inv}} in base64url, JSON-safe, so a
     * device keeps it until the issuer's answer arrives and asks again with the same request if the answer was lost.
     * {@code random} gives the nonce (32 bytes), the PSS salt (48 bytes) and the blind.
     */
    public static Map<String, Object> createTokenRequest(byte[] tokenKey, byte[] challenge, SecureRandom random) {
        byte[] nonce = new byte[32];
        random.nextBytes(nonce);
        return createTokenRequest(tokenKey, challenge, nonce, random);
    }

    /**
     * {@link #createTokenRequest(byte[], byte[], SecureRandom)} with the token's {@code nonce} given (32 bytes, from fresh
     * high-entropy input, RFC 9474 section 7.3: the issuer never sees it); {@code random} gives the PSS salt and the blind.
     */
    public static Map<String, Object> createTokenRequest(byte[] tokenKey, byte[] challenge, byte[] nonce, SecureRandom random) {
        if (nonce.length != 32) throw new InvalidParameterError("A token's nonce is 32 bytes. Got " + nonce.length + ".");
        byte[] key = checkTokenKey(tokenKey);
        byte[] keyId = Bytes.sha256(key);
        byte[] tokenInput = Bytes.concat(u16(TOKEN_TYPE), nonce, Bytes.sha256(challenge), keyId);
        BlindRsa.Blinded blinded = BlindRsa.pssDeterministic().blind(publicKeyOf(key), tokenInput, random);
        byte[] request = Bytes.concat(u16(TOKEN_TYPE), new byte[] {keyId[keyId.length - 1]}, blinded.blindedMessage);
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("request", Bytes.base64Url(request));
        state.put("tokenInput", Bytes.base64Url(tokenInput));
        state.put("inv", Bytes.base64Url(BlindRsa.toBytes(blinded.inverse, NK)));
        return state;
    }

    /**
     * The token the issuer's TokenResponse {@code response} (the 256-byte blind signature) gives for the request
     * {@code state} came from (RFC 9578 section 6.3): unblinded and checked as an RSA-PSS signature of the token input
     * under {@code tokenKey}, else ServiceError {@code bad_token_response}.
     */
    public static byte[] finalizeToken(byte[] tokenKey, Map<String, Object> state, byte[] response) {
        byte[] key = checkTokenKey(tokenKey);
        if (response.length != NK) {
            throw ServiceError.refusal("The issuer's TokenResponse has " + response.length + " bytes; a token of type 2 takes " + NK + ".", "bad_token_response");
        }
        byte[] tokenInput = Bytes.fromBase64Url(state.get("tokenInput"), "A token request state");
        BigInteger inverse = new BigInteger(1, Bytes.fromBase64Url(state.get("inv"), "A token request state"));
        byte[] authenticator;
        try {
            authenticator = BlindRsa.pssDeterministic().finalize(publicKeyOf(key), tokenInput, response, inverse);
        } catch (IllegalArgumentException invalid) {
            throw ServiceError.refusal("The issuer's TokenResponse does not unblind to a signature under the campaign's token key (" + invalid.getMessage()
                + "): no token.", "bad_token_response");
        }
        byte[] token = Bytes.concat(tokenInput, authenticator);
        if (token.length != TOKEN_BYTES) throw ServiceError.refusal("A token of type 2 has " + TOKEN_BYTES + " bytes. Got " + token.length + ".", "bad_token_response");
        return token;
    }

    /** The Authorization header value that redeems {@code token} (RFC 9577 section 2.2): {@code PrivateToken token="<base64url>"}. */
    public static String authorizationHeader(byte[] token) {
        if (token.length != TOKEN_BYTES || ((token[0] & 0xff) << 8 | (token[1] & 0xff)) != TOKEN_TYPE) {
            throw new InvalidParameterError("A token of type 2 has " + TOKEN_BYTES + " bytes and starts with its type. Got " + token.length + " bytes.");
        }
        return "PrivateToken token=\"" + Bytes.base64Url(token) + "\"";
    }
}
