package org.dpdist.client;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Map;

/**
 * Sending reports through a dpdist relay: each report an RFC 9458 request ({@code message/ohttp-req}), as {@code
 * dpdist._wire._ohttp_report} writes it and the JavaScript client's {@code src/relay.js}, encapsulated with HPKE ({@link
 * Hpke}) to the Oblivious HTTP key configuration of the campaign's identity ({@code relay.ohttp}: key id 0), holding the
 * Binary HTTP request {@code PUT https:///api/campaigns/{campaign}/batches/{32 random hex digits}} (RFC 9292, known
 * length) with only {@code content-type} and the one report, zero-padded to {@link #paddedLength}: the same length as
 * the Python and JavaScript clients', so that the relay and the collector cannot tell the clients apart by it.
 *
 * <p>A report and its Privacy Pass token are one ({@code dpdist._wire._binding}): each token comes with a 32-byte seed,
 * the report is encapsulated once with the HPKE ephemeral key DeriveKeyPair(seed), whose public key is the request's
 * enc, and the token's nonce is SHA-256("dpdist report binding v1" || 0x00 || SHA-256(TokenChallenge) || enc): the relay
 * and the collector refuse the token on any other report ({@code token_not_bound}).
 */
public final class Relay {
    /** The content type of an RFC 9458 request. */
    public static final String REQUEST_CONTENT_TYPE = "message/ohttp-req";
    /** The smallest padded Binary HTTP request, as the Python and JavaScript clients pad (their MIN_PADDED_BYTES). */
    static final int MIN_PADDED_BYTES = 1024;
    private static final int KEY_ID = 0;
    /** key id | KEM | KDF | AEAD: the header of every request (RFC 9458 section 4.3). */
    private static final byte[] HEADER = {KEY_ID, 0, (byte) Hpke.KEM_ID, 0, (byte) Hpke.KDF_ID, 0, (byte) Hpke.AEAD_ID};
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] BINDING_LABEL = Bytes.utf8("dpdist report binding v1\0");

    private Relay() {
    }

    /** The nonce of the token whose report is encapsulated with the key of {@code seed} under the TokenChallenge {@code challenge}. */
    public static byte[] bindingNonce(byte[] challenge, byte[] seed) {
        return Bytes.sha256(Bytes.concat(BINDING_LABEL, Bytes.sha256(challenge), Hpke.deriveKeyPair(seed)[1]));
    }

    /**
     * The X25519 public key of the Oblivious HTTP key configuration the campaign's identity names ({@code relay.ohttp},
     * base64url of application/ohttp-keys), checked before anything is drawn: ServiceError {@code no_ohttp_key} for a
     * campaign made before it had one (it takes dpdist's retired envelope only: its operator creates it again), {@code
     * ohttp_key_mismatch} for one that is not a single configuration of key id 0 in this client's suite.
     */
    public static byte[] keyConfig(Map<String, Object> relay, String campaignId) {
        Object ohttp = relay == null ? null : relay.get("ohttp");
        if (ohttp == null) {
            throw ServiceError.refusal("Campaign '" + campaignId + "''s identity names no Oblivious HTTP key configuration (it was made before relayed "
                + "campaigns had one, and dpdist's own envelope, the only one it takes, is retired on devices): its collector must create it again. "
                + "Nothing was drawn or sent.", "no_ohttp_key");
        }
        byte[] keys;
        try {
            keys = Bytes.fromBase64Url(ohttp, "relay.ohttp");
        } catch (InvalidParameterError notBase64) {
            keys = new byte[0];
        }
        if (!oneUsableConfig(keys)) {
            throw ServiceError.refusal("Campaign '" + campaignId + "''s identity names an unusable Oblivious HTTP key configuration (relay.ohttp must be "
                + "one key configuration, key id 0, X25519 with HKDF-SHA256 and AES-128-GCM). Nothing was drawn or sent.", "ohttp_key_mismatch");
        }
        return Arrays.copyOfRange(keys, 5, 5 + Hpke.KEY_BYTES);
    }

    /** Whether {@code keys} (application/ohttp-keys, RFC 9458 section 3.2) is one configuration of key id 0 this client uses. */
    private static boolean oneUsableConfig(byte[] keys) {
        int symmetric = 2 + 1 + 2 + Hpke.KEY_BYTES; // where its (KDF, AEAD) pairs' length is
        if (keys.length < symmetric + 2 || u16(keys, 0) != keys.length - 2 || keys[2] != KEY_ID || u16(keys, 3) != Hpke.KEM_ID) return false;
        int pairs = u16(keys, symmetric);
        if (pairs == 0 || pairs % 4 != 0 || symmetric + 2 + pairs != keys.length) return false;
        for (int at = symmetric + 2; at < keys.length; at += 4) {
            if (u16(keys, at) == Hpke.KDF_ID && u16(keys, at + 2) == Hpke.AEAD_ID) return true;
        }
        return false;
    }

    private static int u16(byte[] bytes, int at) {
        return ((bytes[at] & 0xff) << 8) | (bytes[at + 1] & 0xff);
    }

    /**
     * One report ({@code body}, a dpdist binary record) as the RFC 9458 request a device sends dpdist's relay, encapsulated
     * to the X25519 key {@code publicKey} ({@link #keyConfig}) with the ephemeral key of {@code seed} (its token's: once,
     * the bytes kept for resends) or, null, a fresh one.
     */
    public static byte[] encapsulate(byte[] publicKey, String campaignId, byte[] body, byte[] seed) {
        byte[] message = binaryRequest("PUT", "/api/campaigns/" + campaignId + "/batches/" + Wire.newFileId(), "application/octet-stream", body);
        byte[] padded = Arrays.copyOf(message, paddedLength(message, body));
        byte[] info = Bytes.concat(Bytes.utf8("message/bhttp request\0"), HEADER);
        Hpke.Sealed sealed = seed == null ? Hpke.seal(publicKey, info, new byte[0], padded, RANDOM) : Hpke.seal(publicKey, info, new byte[0], padded, seed);
        return Bytes.concat(HEADER, sealed.enc, sealed.ciphertext);
    }

    /** The Binary HTTP request (RFC 9292 section 3, known-length framing) {@code method https:// path}, one field and a body. */
    static byte[] binaryRequest(String method, String path, String contentType, byte[] body) {
        byte[] fields = Bytes.concat(prefixed(Bytes.utf8("content-type")), prefixed(Bytes.utf8(contentType)));
        return Bytes.concat(new byte[] {0}, prefixed(Bytes.utf8(method)), prefixed(Bytes.utf8("https")), prefixed(new byte[0]),
            prefixed(Bytes.utf8(path)), prefixed(fields), prefixed(body), new byte[] {0});
    }

    /** {@code bytes} after its RFC 9000 variable-length length (below 2^30: every length a device sends). */
    private static byte[] prefixed(byte[] bytes) {
        int n = bytes.length;
        byte[] length = n < 64 ? new byte[] {(byte) n} : n < 16384 ? new byte[] {(byte) (0x40 | (n >> 8)), (byte) n}
            : new byte[] {(byte) (0x80 | (n >>> 24)), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n};
        return Bytes.concat(length, bytes);
    }

    /**
     * The length a Binary HTTP {@code message} carrying {@code body} is zero-padded to (RFC 9292 section 3.8): the next
     * power of two, at least {@link #MIN_PADDED_BYTES}, of its length with every record's CRC-32 counted at 10 digits.
     */
    static int paddedLength(byte[] message, byte[] body) {
        int target = MIN_PADDED_BYTES;
        while (target < message.length + crcSlack(body)) target *= 2;
        return target;
    }

    /** The digits the CRC-32s of the dpdist binary records in {@code body} lack to 10 (their header states each). */
    private static int crcSlack(byte[] body) {
        int slack = 0;
        int offset = 0;
        while (offset + 14 <= body.length && Arrays.equals(Arrays.copyOfRange(body, offset, offset + 8), Wire.RECORD_MAGIC)) {
            int headerBytes = (int) Bytes.getU32(body, offset + 10);
            Map<String, Object> header = Json.asObject(Json.parse(new String(Arrays.copyOfRange(body, offset + 14, offset + 14 + headerBytes), StandardCharsets.UTF_8)));
            Object crc = header.get("crc32");
            if (Json.isInteger(crc) && ((Number) crc).longValue() >= 0) slack += 10 - String.valueOf(((Number) crc).longValue()).length();
            if (!Json.isInteger(header.get("payload_bytes"))) return slack;
            offset += 14 + headerBytes + ((Number) header.get("payload_bytes")).intValue();
        }
        return slack;
    }

    /** The relay's path for one RFC 9458 report of a campaign under the report id the device chose. */
    public static String reportPath(String campaignId, String reportId) {
        return "/relay/v1/campaigns/" + encode(campaignId) + "/ohttp/" + encode(reportId);
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
