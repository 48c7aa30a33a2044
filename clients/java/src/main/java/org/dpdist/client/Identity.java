package org.dpdist.client;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

/**
 * Where a device takes a relayed campaign's config and keys from, so that neither the relay nor the collector can give it
 * a campaign of its own (the JavaScript client's {@code src/identity.js}; docs/how-to/anonymous-collection.md, "Anonymous collection").
 * A relayed campaign has one identity document, made once by the collector and served verbatim, and its pin, the
 * lower-case hex SHA-256 of those bytes.  A device always fetches the identity's bytes, hashes them (no
 * canonicalization), and refuses them ({@code pin_mismatch}) unless the hash is the pin it was given (if any) and the pin
 * the server's config names; it takes config, relay and issuer from the identity only; without a pin it refuses the
 * relay's own URL ({@code pin_required}); given an issuer, it refuses a campaign naming none or another
 * ({@code issuer_mismatch}); the TokenChallenge the config publishes is re-derived from the pin ({@code challenge_mismatch}).
 */
public final class Identity {
    /** The path of a campaign's identity document, under {@code /api/campaigns/{c}}. */
    public static final String IDENTITY_PATH = "/identity";
    /** The header that names a report's pin to the relay. */
    public static final String PIN_HEADER = "Dpdist-Pin";
    /** Tokens one credential of an issuer gives, at most (dpdist issuer's MAX_TOKENS_EACH). */
    public static final int MAX_TOKENS_EACH = 10_000;

    /** A relayed campaign's identity, checked: its pin, campaign id, config, relay and issuer (null: none). */
    public static final class Document {
        public final String pin;
        public final String campaign;
        public final Map<String, Object> config;
        public final Map<String, Object> relay;
        public final Map<String, Object> issuer;

        Document(String pin, String campaign, Map<String, Object> config, Map<String, Object> relay, Map<String, Object> issuer) {
            this.pin = pin;
            this.campaign = campaign;
            this.config = config;
            this.relay = relay;
            this.issuer = issuer;
        }
    }

    /** What a device needs of a relayed campaign's issuer, checked. */
    public static final class Issuer {
        public final String url;
        public final String origin;
        public final String name;
        public final String key;
        public final byte[] tokenKey;
        /** The issuer's tokens per credential the identity states, null for an identity made before issuers published it. */
        public final Integer tokensEach;
        public final byte[] challenge;
        /** The challenge in base64url: the campaign's key in the token store. */
        public final String scope;

        Issuer(String url, String origin, String name, String key, byte[] tokenKey, Integer tokensEach, byte[] challenge) {
            this.url = url;
            this.origin = origin;
            this.name = name;
            this.key = key;
            this.tokenKey = tokenKey;
            this.tokensEach = tokensEach;
            this.challenge = challenge;
            this.scope = Bytes.base64Url(challenge);
        }
    }

    private Identity() {
    }

    /** {@code pin} as the device keeps it (64 lower-case hex digits), or InvalidParameterError naming the option. */
    public static String checkPin(String pin) {
        if (pin == null) return null;
        if (!pin.matches("[0-9a-fA-F]{64}")) {
            throw new InvalidParameterError("The 'pin' option of Client must be the campaign's pin: 64 hexadecimal digits (the SHA-256 of its identity document). Got "
                + Json.show(pin) + ".");
        }
        return pin.toLowerCase(Locale.ROOT);
    }

    /** The origin (scheme://host[:port], default ports dropped) of an absolute http(s) URL, or InvalidParameterError naming {@code what}. */
    public static String originOf(Object url, String what) {
        URI parsed = null;
        if (url instanceof String) {
            try {
                parsed = new URI((String) url);
            } catch (URISyntaxException bad) {
                parsed = null;
            }
        }
        String scheme = parsed == null || parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
        if (parsed == null || !(scheme.equals("http") || scheme.equals("https")) || parsed.getHost() == null || parsed.getRawUserInfo() != null) {
            // the value masked (a password, a token=): the message may reach a log or a crash reporter
            String shown = url instanceof String ? Json.show(Shown.shownUrl((String) url)) : Json.show(url);
            throw new InvalidParameterError(what + " must be an absolute http(s) URL with a host, without user:password@ (this client "
                + "authenticates with its token, never a URL's credentials, which the URL would show wherever it is logged). Got " + shown + ".");
        }
        int port = parsed.getPort();
        boolean standard = port == -1 || (scheme.equals("http") && port == 80) || (scheme.equals("https") && port == 443);
        return scheme + "://" + parsed.getHost().toLowerCase(Locale.ROOT) + (standard ? "" : ":" + port);
    }

    /**
     * The identity of relayed campaign {@code campaignId} in the {@code bytes} the server returned, if their SHA-256 is
     * the pin the device was given ({@code pin}, null if none) and the one the server's config names
     * ({@code configPin}, its {@code relay.pin}); else ServiceError {@code pin_mismatch}.
     */
    public static Document identityOf(byte[] bytes, String campaignId, String pin, Object configPin) {
        String digest = Bytes.hex(Bytes.sha256(bytes));
        if (pin != null && !digest.equals(pin)) {
            throw ServiceError.refusal("The identity of campaign '" + campaignId + "' this server returned has SHA-256 " + digest + ", not the campaign's pin "
                + pin + ": its config or keys are not the ones the collector published (a relay that swapped them?). Nothing was drawn or sent.", "pin_mismatch");
        }
        Object named = configPin instanceof String ? ((String) configPin).toLowerCase(Locale.ROOT) : configPin;
        if (!digest.equals(named)) {
            throw ServiceError.refusal("The config of campaign '" + campaignId + "' this server returned names the pin " + Json.show(named) + ", and the identity "
                + "it returned has SHA-256 " + digest + ": the device takes a relayed campaign from one identity only. Nothing was drawn or sent.", "pin_mismatch");
        }
        String heavy = Json.tooManyValues(bytes, HttpTransport.MAX_ANSWER_BYTES); // not parsed: a server's pin covers any bytes
        if (heavy != null) {
            throw ServiceError.refusal("The identity of campaign '" + campaignId + "' this server returned is " + heavy + ", not parsed (an identity holds a "
                + "few hundred).", "bad_answer");
        }
        Map<String, Object> identity;
        try {
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
            identity = Json.asObject(Json.parse(text));
        } catch (CharacterCodingException | IllegalArgumentException error) {
            throw ServiceError.refusal("The identity matching the pin is not JSON (" + error.getMessage() + ").", "pin_mismatch");
        }
        boolean ok = identity != null && campaignId.equals(identity.get("campaign")) && Json.isObject(identity.get("config"))
            && Json.isObject(identity.get("relay")) && (identity.get("issuer") == null || Json.isObject(identity.get("issuer")))
            && identity.containsKey("issuer");
        if (!ok) {
            throw ServiceError.refusal("The identity matching the pin is not that of relayed campaign '" + campaignId + "' (it names "
                + Json.show(identity == null ? null : identity.get("campaign")) + ").", "pin_mismatch");
        }
        return new Document(digest, campaignId, Json.asObject(identity.get("config")), Json.asObject(identity.get("relay")), Json.asObject(identity.get("issuer")));
    }

    /** Refuse to take a relayed campaign from its own relay without a pin ({@code pin_required}). */
    public static void checkNotTheRelay(Map<String, Object> relay, String serverOrigin, String campaignId) {
        String relayOrigin = originOf(relay.get("url"), "The relay URL of campaign '" + campaignId + "' (relay.url of its identity)");
        if (relayOrigin.equals(serverOrigin)) {
            throw ServiceError.refusal(serverOrigin + " is the relay of campaign '" + campaignId + "': this is the campaign's relay; give the collector's URL or "
                + "the campaign's pin (the pin option), so that the relay cannot choose the key the reports are sealed to. Nothing was drawn or sent.", "pin_required");
        }
    }

    /**
     * A device given an issuer ({@code expectedUrl}, null if none) refuses a relayed campaign whose identity names no issuer
     * (anyone, the collector included, may fill its batches) or another issuer's origin ({@code issuer_mismatch}).
     */
    public static void checkExpectedIssuer(Map<String, Object> issuer, String expectedUrl, String campaignId) {
        if (expectedUrl == null) return;
        String expected = originOf(expectedUrl, "The 'issuer.url' option of Client");
        if (issuer == null) {
            throw ServiceError.refusal("Campaign '" + campaignId + "' names no issuer: this campaign admits anyone (its relay takes reports without a token, so "
                + "the collector could fill a batch with reports of its own), and this device was given the issuer " + expected + ". Nothing was drawn or sent.",
                "issuer_mismatch");
        }
        String origin = originOf(issuer.get("url"), "The issuer URL of campaign '" + campaignId + "' (issuer.url)");
        if (!expected.equals(origin)) {
            throw ServiceError.refusal("Campaign '" + campaignId + "' names the issuer " + origin + "; this device was given " + expected
                + ". Nothing was drawn or sent.", "issuer_mismatch");
        }
    }

    /**
     * What a device needs of a relayed campaign's issuer, checked: the token type, the issuer's URL, the token key's
     * encoding, its {@code tokens_each} (an int in 1..10000, or absent from an identity made before issuers published it),
     * and the TokenChallenge, derived from the issuer's name and the campaign's pin (redemption context v3, v2 without
     * {@code tokens_each}), which must be the one the server's config publishes ({@code published}: base64url; null if
     * none), else {@code challenge_mismatch}.
     */
    public static Issuer checkedIssuer(Map<String, Object> issuer, String pin, String campaignId, Object published) {
        if (!Json.same(issuer.get("token_type"), PrivacyPass.TOKEN_TYPE)) {
            throw ServiceError.refusal("Campaign '" + campaignId + "' takes tokens of type " + Json.show(issuer.get("token_type")) + "; this client makes type "
                + PrivacyPass.TOKEN_TYPE + " (blind RSA, RFC 9578).", "unsupported_token_type");
        }
        String origin = originOf(issuer.get("url"), "The issuer URL of campaign '" + campaignId + "' (issuer.url)");
        for (String field : new String[] {"name", "key", "token_key"}) {
            if (!(issuer.get(field) instanceof String) || ((String) issuer.get(field)).isEmpty()) {
                throw new InvalidParameterError("The issuer of campaign '" + campaignId + "' must have a non-empty string '" + field + "'. Got "
                    + Json.show(issuer.get(field)) + ".");
            }
        }
        boolean stated = issuer.containsKey("tokens_each");
        Object each = issuer.get("tokens_each");
        if (stated && !(Json.isInteger(each) && ((Number) each).doubleValue() >= 1 && ((Number) each).doubleValue() <= MAX_TOKENS_EACH)) {
            throw new InvalidParameterError("The issuer of campaign '" + campaignId + "' must state 'tokens_each' as an int in 1.." + MAX_TOKENS_EACH + ". Got "
                + Json.show(each) + ".");
        }
        byte[] tokenKey = PrivacyPass.checkTokenKey(issuer.get("token_key"));
        String label = stated ? PrivacyPass.CAMPAIGN_CONTEXT : PrivacyPass.EARLIER_CAMPAIGN_CONTEXT;
        byte[] challenge = PrivacyPass.tokenChallenge((String) issuer.get("name"), PrivacyPass.redemptionContext(pin, label), "");
        if (published != null) {
            byte[] given = null;
            try {
                given = Bytes.fromBase64Url(published, "The TokenChallenge of campaign '" + campaignId + "' (relay.issuer.challenge)");
            } catch (InvalidParameterError notBase64) {
                given = null;
            }
            if (given == null || !java.util.Arrays.equals(given, challenge)) {
                throw ServiceError.refusal("The TokenChallenge campaign '" + campaignId + "' publishes is not the one its issuer's name and its pin give (RFC 9577 "
                    + "section 2.1.1, the redemption context of the dpdist design): tokens for it would not be this campaign's. Nothing was drawn or sent.",
                    "challenge_mismatch");
            }
        }
        String url = ((String) issuer.get("url")).replaceAll("/+$", "");
        return new Issuer(url, origin, (String) issuer.get("name"), (String) issuer.get("key"), tokenKey, stated ? ((Number) each).intValue() : null, challenge);
    }
}
