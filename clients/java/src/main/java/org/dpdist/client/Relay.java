package org.dpdist.client;

import java.net.URLEncoder;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Sending reports through a dpdist relay: each report sealed to the collector's key with HPKE (RFC 9180, {@link Hpke}),
 * byte for byte as {@code dpdist._wire._envelope} seals it in Python, so that the relay holds ciphertexts only (the
 * JavaScript client's {@code src/relay.js}).  Sealed message: version (1) | key id (8) | enc (32) | ciphertext, with
 * info = "dpdist relay v1\0" + campaign id and aad = version | key id; the plaintext is kind (1: dpdist binary records,
 * 2: JSON) | body length (4, big-endian) | body | zeros to a multiple of 256 bytes.
 *
 * <p>A report and its Privacy Pass token are one ({@code dpdist._wire._binding}): each token comes with a 32-byte seed,
 * the report is sealed once with the HPKE ephemeral key DeriveKeyPair(seed), whose public key is the report's enc, and
 * the token's nonce is SHA-256("dpdist report binding v1" || 0x00 || SHA-256(TokenChallenge) || enc): the relay and the
 * collector refuse the token on any other report ({@code token_not_bound}).
 */
public final class Relay {
    public static final String RELAY_CONTENT_TYPE = "application/vnd.dpdist.sealed-report";
    private static final int VERSION = 1;
    private static final int PADDING = 256;
    private static final List<Object> SUITE_IDS = Arrays.asList(0x0020L, 0x0001L, 0x0001L);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] BINDING_LABEL = Bytes.utf8("dpdist report binding v1\0");

    private Relay() {
    }

    /** The nonce of the token whose report is sealed with the key of {@code seed} under the TokenChallenge {@code challenge}. */
    public static byte[] bindingNonce(byte[] challenge, byte[] seed) {
        return Bytes.sha256(Bytes.concat(BINDING_LABEL, Bytes.sha256(challenge), Hpke.deriveKeyPair(seed)[1]));
    }

    /**
     * Seal a submission body for the relay of a campaign whose identity carries {@code relay} ({@code {public_key, key_id,
     * ids}}), with the ephemeral key of {@code seed} (its token's: sealed once, the bytes kept for resends) or, null, a
     * fresh one; the sealed bytes.  {@code kind} 1: dpdist binary records, 2: JSON.
     */
    public static byte[] seal(Map<String, Object> relay, String campaignId, byte[] body, int kind, byte[] seed) {
        if (relay == null || !Json.same(relay.get("ids"), SUITE_IDS)) {
            throw new InvalidParameterError("The campaign's relay uses HPKE suite " + Json.show(relay == null ? null : relay.get("ids")) + "; this client seals with "
                + Json.show(SUITE_IDS) + ".");
        }
        if (kind != 1 && kind != 2) throw new InvalidParameterError("A sealed body is dpdist binary records (1) or JSON (2). Got " + kind + ".");
        byte[] publicKey = Bytes.fromBase64Url(relay.get("public_key"), "The campaign's relay public key");
        byte[] keyId;
        try {
            keyId = relay.get("key_id") instanceof String && ((String) relay.get("key_id")).matches("([0-9a-f]{2})+") ? Bytes.fromHex((String) relay.get("key_id")) : null;
        } catch (IllegalArgumentException bad) {
            keyId = null;
        }
        if (keyId == null) throw new InvalidParameterError("A relay key id is hexadecimal. Got " + Json.show(relay.get("key_id")) + ".");
        byte[] digest = Bytes.sha256(publicKey);
        if (publicKey.length != Hpke.KEY_BYTES || keyId.length > digest.length || !Arrays.equals(keyId, Arrays.copyOf(digest, keyId.length)) || keyId.length != 8) {
            throw new InvalidParameterError("The campaign's relay key id does not match its public key.");
        }
        int unpadded = 5 + body.length;
        byte[] plain = Bytes.concat(new byte[] {(byte) kind}, Bytes.u32BigEndian(body.length), body, new byte[(PADDING - unpadded % PADDING) % PADDING]);
        byte[] header = Bytes.concat(new byte[] {VERSION}, keyId);
        byte[] info = Bytes.concat(Bytes.utf8("dpdist relay v1\0"), Bytes.utf8(campaignId));
        Hpke.Sealed sealed = seed == null ? Hpke.seal(publicKey, info, header, plain, RANDOM) : Hpke.seal(publicKey, info, header, plain, seed);
        return Bytes.concat(header, sealed.enc, sealed.ciphertext);
    }

    /** The relay's path for one report of a campaign under the report id the device chose. */
    public static String reportPath(String campaignId, String reportId) {
        return "/relay/v1/campaigns/" + encode(campaignId) + "/reports/" + encode(reportId);
    }

    /** A path segment percent-encoded as JavaScript's encodeURIComponent encodes it. */
    static String encode(String segment) {
        String encoded;
        try {
            encoded = URLEncoder.encode(segment, "UTF-8");
        } catch (java.io.UnsupportedEncodingException impossible) {
            throw new IllegalStateException(impossible);
        }
        return encoded.replace("+", "%20").replace("%7E", "~").replace("%21", "!")
            .replace("%27", "'").replace("%28", "(").replace("%29", ")").replace("%2A", "*");
    }
}
