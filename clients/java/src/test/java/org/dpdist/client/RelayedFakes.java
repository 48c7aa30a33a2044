package org.dpdist.client;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A collector, a relay and a Privacy Pass issuer in-process (the JavaScript client's relayed-fakes.js, on the JDK's
 * httpserver), for the tests of the device algorithm of a relayed campaign:
 * <ul>
 * <li>collector: GET /api/campaigns/c/config (its relay with the pin, its issuer with the TokenChallenge) and GET
 * /api/campaigns/c/identity (the identity document's bytes, made once);</li>
 * <li>relay: passes both GETs on from the collector, or, as an attacker ({@code swap}), serves an identity with its own
 * Oblivious HTTP key; PUT /relay/v1/campaigns/c/ohttp/{id} takes an RFC 9458 request whose Dpdist-Pin is the identity's pin, with a
 * valid token of the campaign's challenge bound to the report (verified by the JDK's RSASSA-PSS; 401 without, 403
 * token_not_bound for a token made for another report, 403 token_spent for a token
 * spent on another report), keeps the record it opens with the collector's key; {@code down}: drops every report;</li>
 * <li>issuer: GET /issuer/v1/keys/k, POST /issuer/v1/keys/k/token-request (Bearer credential, {@code tokensEach} tokens
 * per credential, a repeated request answered from its store without counting; {@code loseNext}: the next answer is
 * computed, stored and lost with the connection).</li>
 * </ul>
 */
final class RelayedFakes implements AutoCloseable {
    static final String CONFIG = "{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 8}";
    static final String CREDENTIAL = "device-credential";

    final RSAPrivateCrtKey issuerKey;
    final byte[] tokenKey;
    final byte[][] collectorKey;
    byte[] identity;
    String pin;
    final FakeServer collector;
    final FakeServer relay;
    final FakeServer issuer;
    volatile boolean down;
    volatile boolean swap;
    volatile boolean loseNext;
    volatile Object publishedChallenge; // null: the one the pin gives
    volatile Object publishedTokensEach = 100L;
    volatile byte[] publishedTokenKey;
    final Map<String, Integer> issued = Collections.synchronizedMap(new HashMap<>());
    final Map<String, byte[]> answered = Collections.synchronizedMap(new HashMap<>());
    final Map<String, String> spent = Collections.synchronizedMap(new HashMap<>()); // token -> report id
    final List<byte[]> records = Collections.synchronizedList(new java.util.ArrayList<>());

    RelayedFakes() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        issuerKey = (RSAPrivateCrtKey) generator.generateKeyPair().getPrivate();
        tokenKey = tokenKeyOf(issuerKey.getModulus(), issuerKey.getPublicExponent());
        byte[] ikm = new byte[32];
        new SecureRandom().nextBytes(ikm);
        collectorKey = Hpke.deriveKeyPair(ikm);
        issuer = new FakeServer(this::issue);
        relay = new FakeServer(this::relayed);
        collector = new FakeServer(request -> served(request, collectorKey[1], identity, pin));
        identity = Bytes.utf8(Json.write(identityOf(collectorKey[1], true)));
        pin = Bytes.hex(Bytes.sha256(identity));
    }

    /** DER: {@code tag}, the length, the content. */
    static byte[] der(int tag, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int length = content.length;
        if (length < 128) out.write(length);
        else if (length < 256) out.write(new byte[] {(byte) 0x81, (byte) length}, 0, 2);
        else out.write(new byte[] {(byte) 0x82, (byte) (length >> 8), (byte) length}, 0, 3);
        out.write(content, 0, content.length);
        return out.toByteArray();
    }

    /** The SubjectPublicKeyInfo of (n, e) with the id-RSASSA-PSS OID of a type-2 token key (RFC 9578 section 6.5). */
    static byte[] tokenKeyOf(BigInteger n, BigInteger e) {
        byte[] algorithm = Bytes.fromHex("303d06092a864886f70d01010a3030a00d300b0609608648016503040202a11a301806092a864886f70d010108300b0609608648016503040202a203020130");
        byte[] rsa = der(0x30, Bytes.concat(der(0x02, n.toByteArray()), der(0x02, e.toByteArray())));
        return der(0x30, Bytes.concat(algorithm, der(0x03, Bytes.concat(new byte[1], rsa))));
    }

    Map<String, Object> relayOf(byte[] publicKey) {
        return ohttpRelay(publicKey, relay.url());
    }

    /** A relayed campaign's relay at {@code url} as its identity names it: one key configuration of key id 0 (relay.ohttp). */
    static Map<String, Object> ohttpRelay(byte[] publicKey, String url) {
        Map<String, Object> relayed = new LinkedHashMap<>();
        relayed.put("url", url);
        relayed.put("ohttp", Bytes.base64Url(Bytes.concat(new byte[] {0, 41, 0, 0, 0x20}, publicKey, new byte[] {0, 4, 0, 1, 0, 1})));
        return relayed;
    }

    /**
     * The report of campaign c an RFC 9458 request holds ({@code dpdist._wire._ohttp_report}: PUT
     * /api/campaigns/c/batches/&lt;id&gt;, known-length Binary HTTP), opened with {@code privateKey}; else an exception.
     */
    static byte[] openReport(byte[] privateKey, byte[] request) throws java.security.GeneralSecurityException {
        byte[] info = Bytes.concat(Bytes.utf8("message/bhttp request\0"), Arrays.copyOf(request, 7));
        byte[] message = Hpke.open(Arrays.copyOfRange(request, 7, 39), privateKey, info, new byte[0], Arrays.copyOfRange(request, 39, request.length));
        byte[][] parts = new byte[6][]; // method, scheme, authority, path, fields, content
        int at = 1; // the framing indicator: 0, a known-length request
        for (int index = 0; index < parts.length; index++) {
            int size = 1 << ((message[at] & 0xff) >> 6);
            long length = message[at] & 0x3f;
            for (int k = 1; k < size; k++) length = length * 256 + (message[at + k] & 0xff);
            parts[index] = Arrays.copyOfRange(message, at + size, at + size + (int) length);
            at += size + (int) length;
        }
        String path = new String(parts[3], java.nio.charset.StandardCharsets.UTF_8);
        if (!"PUT".equals(new String(parts[0], java.nio.charset.StandardCharsets.UTF_8)) || !path.startsWith("/api/campaigns/c/batches/")) {
            throw new java.security.GeneralSecurityException("not campaign c's report request: " + path);
        }
        return parts[5];
    }

    Map<String, Object> identityOf(byte[] publicKey, boolean withIssuer) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("campaign", "c");
        document.put("config", Json.parse(CONFIG));
        document.put("relay", relayOf(publicKey));
        if (withIssuer) {
            Map<String, Object> named = new LinkedHashMap<>();
            named.put("url", issuer.url());
            named.put("name", "issuer.test");
            named.put("key", "k");
            named.put("token_key", Bytes.base64Url(tokenKey));
            named.put("token_type", 2L);
            named.put("tokens_each", 100L);
            document.put("issuer", named);
        } else {
            document.put("issuer", null);
        }
        return document;
    }

    /** Use an identity without issuer (a campaign that admits anyone). */
    void withoutIssuer() {
        identity = Bytes.utf8(Json.write(identityOf(collectorKey[1], false)));
        pin = Bytes.hex(Bytes.sha256(identity));
    }

    byte[] challenge(String pinOf) {
        return PrivacyPass.tokenChallenge("issuer.test", PrivacyPass.redemptionContext(pinOf, PrivacyPass.CAMPAIGN_CONTEXT), "");
    }

    private FakeServer.Answer served(FakeServer.Request request, byte[] publicKey, byte[] identityBytes, String pinOf) {
        if (request.path.equals("/api/campaigns/c/identity")) return new FakeServer.Answer(200, "application/json", identityBytes);
        if (!request.path.equals("/api/campaigns/c/config")) return FakeServer.Answer.json(404, Collections.singletonMap("error", "not_found"));
        Map<String, Object> identityDocument = Json.asObject(Json.parse(new String(identityBytes, java.nio.charset.StandardCharsets.UTF_8)));
        Map<String, Object> relayed = new LinkedHashMap<>(Json.asObject(identityDocument.get("relay")));
        relayed.put("pin", pinOf);
        if (identityDocument.get("issuer") != null) {
            Map<String, Object> named = new LinkedHashMap<>(Json.asObject(identityDocument.get("issuer")));
            named.put("challenge", publishedChallenge != null ? publishedChallenge : Bytes.base64Url(challenge(pinOf)));
            relayed.put("issuer", named);
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("campaign", "c");
        document.put("state", "open");
        document.put("config", Json.parse(CONFIG));
        document.put("relay", relayed);
        return FakeServer.Answer.json(200, document);
    }

    private FakeServer.Answer relayed(FakeServer.Request request) {
        if (request.method.equals("GET")) {
            if (!swap) return served(request, collectorKey[1], identity, pin);
            byte[][] own = Hpke.deriveKeyPair(new byte[32]); // the relay's own key, in an identity of its own
            byte[] forged = Bytes.utf8(Json.write(identityOf(own[1], true)));
            return served(request, own[1], forged, Bytes.hex(Bytes.sha256(forged)));
        }
        if (down) return null;
        String prefix = "/relay/v1/campaigns/c/ohttp/";
        if (!request.path.startsWith(prefix)) return FakeServer.Answer.json(404, Collections.singletonMap("error", "not_found"));
        String reportId = request.path.substring(prefix.length());
        if (!pin.equals(request.header(Identity.PIN_HEADER))) return error(409, "pin_mismatch");
        String authorization = request.header("Authorization");
        byte[] token = authorization == null ? null : Bytes.fromBase64Url(authorization.replaceAll("^PrivateToken token=\"(.*)\"$", "$1"), "token");
        if (token == null || !validToken(token)) return error(401, "invalid_token");
        byte[] body = request.body;
        byte[] enc = body.length < 39 ? new byte[0] : Arrays.copyOfRange(body, 7, 39); // the report's HPKE enc
        byte[] nonce = Bytes.sha256(Bytes.concat(Bytes.utf8("dpdist report binding v1\0"), Arrays.copyOfRange(token, 34, 66), enc));
        if (!Arrays.equals(Arrays.copyOfRange(token, 2, 34), nonce)) return error(403, "token_not_bound");
        String key = Bytes.hex(token);
        String earlier = spent.putIfAbsent(key, reportId);
        if (earlier != null && !earlier.equals(reportId)) return error(403, "token_spent");
        try {
            byte[] report = openReport(collectorKey[0], body);
            if (earlier == null) records.add(report);
        } catch (java.security.GeneralSecurityException unopened) {
            return error(400, "unopened");
        }
        Map<String, Object> ack = new LinkedHashMap<>();
        ack.put("campaign", "c");
        ack.put("report_id", reportId);
        ack.put("duplicate", earlier != null);
        return FakeServer.Answer.json(200, ack);
    }

    private boolean validToken(byte[] token) {
        try {
            if (token.length != PrivacyPass.TOKEN_BYTES) return false;
            if (!Arrays.equals(Arrays.copyOfRange(token, 34, 66), Bytes.sha256(challenge(pin)))) return false;
            if (!Arrays.equals(Arrays.copyOfRange(token, 66, 98), Bytes.sha256(tokenKey))) return false;
            Signature verifier = Signature.getInstance("RSASSA-PSS");
            verifier.setParameter(new PSSParameterSpec("SHA-384", "MGF1", MGF1ParameterSpec.SHA384, 48, 1));
            verifier.initVerify(KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(issuerKey.getModulus(), issuerKey.getPublicExponent())));
            verifier.update(Arrays.copyOfRange(token, 0, 98));
            return verifier.verify(Arrays.copyOfRange(token, 98, token.length));
        } catch (java.security.GeneralSecurityException bad) {
            return false;
        }
    }

    private FakeServer.Answer issue(FakeServer.Request request) {
        if (request.method.equals("GET") && request.path.equals("/issuer/v1/keys/k")) {
            Map<String, Object> key = new LinkedHashMap<>();
            key.put("token_key", Bytes.base64Url(publishedTokenKey != null ? publishedTokenKey : tokenKey));
            key.put("tokens_each", publishedTokensEach);
            return FakeServer.Answer.json(200, key);
        }
        if (!request.method.equals("POST") || !request.path.equals("/issuer/v1/keys/k/token-request")) return error(404, "not_found");
        if (!("Bearer " + CREDENTIAL).equals(request.header("Authorization"))) return error(401, "unauthorized");
        String asked = Bytes.hex(request.body);
        byte[] response = answered.get(asked);
        if (response == null) {
            if (issued.merge(CREDENTIAL, 1, Integer::sum) > 100) return error(403, "exhausted");
            BigInteger blinded = new BigInteger(1, Arrays.copyOfRange(request.body, 3, request.body.length));
            response = BlindRsa.toBytes(blinded.modPow(issuerKey.getPrivateExponent(), issuerKey.getModulus()), 256);
            answered.put(asked, response);
        }
        if (loseNext) {
            loseNext = false;
            return null; // computed and stored, then lost with the connection
        }
        return new FakeServer.Answer(200, PrivacyPass.TOKEN_RESPONSE_TYPE, response);
    }

    static FakeServer.Answer error(int status, String code) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", code);
        body.put("detail", code);
        return FakeServer.Answer.json(status, body);
    }

    /** Requests the relay received for reports. */
    int reportRequests() {
        int count = 0;
        synchronized (relay.requests) {
            for (FakeServer.Request request : relay.requests) if (request.method.equals("PUT")) count += 1;
        }
        return count;
    }

    @Override
    public void close() {
        collector.close();
        relay.close();
        issuer.close();
    }
}
