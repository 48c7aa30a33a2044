package org.dpdist.client;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A relayed campaign's route from a {@link Client} to its dpdist relay (the JavaScript client's {@code
 * src/relay-route.js}, Python's {@code dpdist.client._relay_route}): the Privacy Pass tokens of the campaign's issuer,
 * one per report, held before any draw ({@link TokenWallet}), and each report an RFC 9458 request to the key
 * configuration of the campaign's identity ({@link Relay}), sent alone under its one token.
 */
final class RelayRoute {
    private static final SecureRandom TOKEN_RANDOM = new SecureRandom();

    private final String campaignId;
    private final Map<String, Object> relay;
    private final byte[] key;
    private final Identity.Issuer info;
    private final Storage storage;
    private final TokenWallet wallet;
    private final Connection connection;
    private final Supplier<String> credential;
    private boolean issuerKeyChecked;

    /**
     * The route of campaign {@code campaignId} to {@code relay} (as its identity names it, with its pin), its reports
     * encapsulated to {@code key} ({@link Relay#keyConfig}), with tokens of {@code info} (null: a campaign without
     * tokens) kept in {@code storage} (null: in memory), requested with {@code credential} (the device's, now).
     */
    RelayRoute(String campaignId, Map<String, Object> relay, byte[] key, Identity.Issuer info, Storage storage, Connection connection,
               Supplier<String> credential) {
        this.campaignId = campaignId;
        this.relay = relay;
        this.key = key;
        this.info = info;
        this.storage = storage;
        this.wallet = new TokenWallet(storage);
        this.connection = connection;
        this.credential = credential;
    }

    private <T> T withLedgerLock(Supplier<T> action) {
        return storage == null ? action.get() : storage.withLock(action);
    }

    /**
     * A relayed campaign: each report an RFC 9458 request to the identity's key configuration, sent alone to the relay the
     * identity names, under {@code <batchId>.<row>}, with the identity's pin and, when the campaign has an issuer, the token
     * bound to that report id, the report encapsulated once with the token's key and kept, so that a resend carries the same token and bytes; the
     * tokens of a batch stay bound until the relay acknowledged every report of it.
     */
    Map<String, Object> send(ReportBatch batch, String batchId) {
        String base = String.valueOf(relay.get("url")).replaceAll("/+$", "");
        Identity.originOf(base, "The relay URL of campaign '" + campaignId + "' (relay.url of its identity)");
        List<Map<String, Object>> acks = new ArrayList<>();
        for (int index = 0; index < batch.length(); index++) {
            byte[] body = Wire.encodeRecord(batch.withRows(1, batch.row(index)));
            String reportId = batchId + "." + index;
            byte[] sealed;
            String authorization = null;
            if (info == null) {
                sealed = Relay.encapsulate(key, campaignId, body, null);
            } else {
                Map<String, Object> bound = boundReport(reportId);
                if (!bound.containsKey("ohttp")) { // encapsulated once with its token's key, kept before it leaves the device
                    String kept = Bytes.base64Url(Relay.encapsulate(key, campaignId, body, Bytes.fromBase64Url(bound.get("seed"), "A stored seed")));
                    withLedgerLock(() -> {
                        wallet.seal(info.scope, reportId, kept);
                        return null;
                    });
                    bound.put("ohttp", kept);
                }
                sealed = Bytes.fromBase64Url(bound.get("ohttp"), "A stored report request");
                authorization = PrivacyPass.authorizationHeader(Bytes.fromBase64Url(bound.get("token"), "A stored token"));
            }
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("Content-Type", Relay.REQUEST_CONTENT_TYPE);
            headers.put(Identity.PIN_HEADER, String.valueOf(relay.get("pin")));
            try {
                acks.add(Connection.json(connection.request("PUT", base + Relay.reportPath(campaignId, reportId), sealed, headers, authorization, true,
                    answer -> Connection.ackProblem(answer, "report_id", reportId, campaignId))));
            } catch (ServiceError error) {
                throw refused(reportId, error);
            }
        }
        if (info != null) { // every report of the batch acknowledged: their tokens are spent, and forgotten
            List<String> ids = new ArrayList<>();
            for (int index = 0; index < batch.length(); index++) ids.add(batchId + "." + index);
            withLedgerLock(() -> {
                wallet.release(info.scope, ids);
                return null;
            });
        }
        int duplicates = 0;
        for (Map<String, Object> ack : acks) if (Boolean.TRUE.equals(ack.get("duplicate"))) duplicates += 1;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("batch_id", batchId);
        out.put("relayed", (long) acks.size());
        out.put("duplicates", (long) duplicates);
        return out;
    }

    /** The token bound to report {@code reportId} ({@code {token, seed}}, with {@code ohttp} once encapsulated), a spare one, or one got now. */
    private Map<String, Object> boundReport(String reportId) {
        Map<String, Object> bound = withLedgerLock(() -> wallet.bind(info.scope, reportId));
        if (bound != null) return bound;
        tokens(1); // a batch drawn by randomize() and sent here: its token now
        return withLedgerLock(() -> wallet.bind(info.scope, reportId));
    }

    /**
     * The error to throw for the relay's refusal of report {@code reportId}: a token the relay saw spent on another report
     * is released (a resend takes another, and seals again); one the relay does not admit (401, 403 {@code
     * token_not_bound}) was checked when it was made and bound to the report's key: it stays with its report.
     */
    private ServiceError refused(String reportId, ServiceError error) {
        if (info == null) return error;
        if ("token_spent".equals(error.code())) withLedgerLock(() -> {
            wallet.release(info.scope, Collections.singletonList(reportId));
            return null;
        });
        if (error.status() != 401 && !"token_not_bound".equals(error.code())) return error;
        return new ServiceError(error.getMessage() + " This report's token verifies under the issuer key and the token challenge of the campaign's "
            + "identity, bound to the report: the relay checks tokens otherwise (a relay older than the identity's redemption context, or one that does "
            + "not verify as the campaign states). The token is kept for the report's resend.", error.status(), error.code(), error);
    }

    /**
     * Hold tokens of the campaign's issuer for {@code count} reports (how many the device holds), before they are drawn:
     * a relayed campaign with an issuer takes one token per report, so a refusal (no credential, the issuer's) never
     * follows a draw.  A request whose answer was lost is sent again, the same bytes.  Tokens are kept (the storage, key
     * {@code dpdist-tokens}) until a report spends them.  Other campaigns: 0.
     */
    int tokens(int count) {
        if (info == null) return 0;
        for (int obtained = 0;; obtained++) {
            TokenWallet.Campaign held = withLedgerLock(() -> wallet.view(info.scope));
            if (held.spare.size() >= count) return held.spare.size();
            if (credential.get() == null) {
                throw ServiceError.refusal("Campaign '" + campaignId + "' takes each report with a token of its issuer (" + info.origin + "): give this device's "
                    + "credential from that issuer (Options.issuer(credential, url)). Nothing was drawn or sent.", "credential_required");
            }
            checkIssuerKey();
            Map<String, Object> entry = held.pending.isEmpty() ? null : held.pending.get(0);
            if (entry == null) { // the token's nonce commits to the key its report will be sealed with (Relay)
                byte[] seed = new byte[32];
                TOKEN_RANDOM.nextBytes(seed);
                Map<String, Object> created = PrivacyPass.createTokenRequest(info.tokenKey, info.challenge, Relay.bindingNonce(info.challenge, seed), TOKEN_RANDOM);
                created.put("seed", Bytes.base64Url(seed));
                withLedgerLock(() -> {
                    wallet.addPending(info.scope, created);
                    return null;
                });
                entry = created;
            }
            byte[] response;
            try {
                response = requestToken((String) entry.get("request"));
            } catch (ServiceError error) {
                if (obtained == 0) throw error;
                throw new ServiceError(error.getMessage() + " The " + obtained + " token(s) obtained before this refusal are kept for the next reports of campaign '"
                    + campaignId + "': " + held.spare.size() + " held of the " + count + " needed. Nothing was drawn or sent.", error.status(), error.code(), error);
            }
            byte[] token;
            String request = (String) entry.get("request");
            try {
                token = PrivacyPass.finalizeToken(info.tokenKey, entry, response);
            } catch (ServiceError bad) {
                withLedgerLock(() -> { // the issuer keeps its answer to this request: asking again would give the same bad one
                    wallet.drop(info.scope, request);
                    return null;
                });
                throw bad;
            }
            withLedgerLock(() -> wallet.finish(info.scope, request, Bytes.base64Url(token)));
        }
    }

    /** {@link #tokens} for {@code reports} new reports, {@code pending} queued ones and the reports of {@code unsent} without a token bound to them. */
    void tokensFor(int reports, int pending, List<Client.Unsent> unsent) {
        if (info == null) return;
        TokenWallet.Campaign held = withLedgerLock(() -> wallet.view(info.scope));
        int owed = pending;
        for (Client.Unsent batch : unsent) {
            for (int index = 0; index < batch.batch.length(); index++) if (!held.bound.containsKey(batch.batchId + "." + index)) owed += 1;
        }
        tokens(owed + reports);
    }

    /** The issuer's token key must be the campaign's, else {@code issuer_key_mismatch}; its tokens_each the identity's (once). */
    private void checkIssuerKey() {
        if (issuerKeyChecked) return;
        Map<String, Object> published = Connection.json(connection.request("GET", info.url + "/issuer/v1/keys/" + Relay.encode(info.key), null, new LinkedHashMap<>(), null, true));
        byte[] key = null;
        try {
            key = Bytes.fromBase64Url(published.get("token_key"), "token_key");
        } catch (InvalidParameterError notBase64) {
            key = null;
        }
        if (key == null || !Arrays.equals(key, info.tokenKey)) {
            throw ServiceError.refusal("The issuer " + info.origin + " signs tokens of key '" + info.key + "' with another key than the one campaign '" + campaignId
                + "' names: its tokens would not be admitted (or the issuer could tell devices apart by key). Nothing was drawn or sent.", "issuer_key_mismatch");
        }
        if (info.tokensEach != null && !Json.same(published.get("tokens_each"), info.tokensEach)) {
            throw ServiceError.refusal("Campaign '" + campaignId + "' states that a credential of the issuer's key '" + info.key + "' gives at most " + info.tokensEach
                + " token(s); the issuer " + info.origin + " publishes " + Json.show(published.get("tokens_each")) + ": the campaign's guarantee would count each "
                + "colluding credential as fewer reports than it gives. Nothing was drawn or sent.", "tokens_each_mismatch");
        }
        issuerKeyChecked = true;
    }

    /** The issuer's TokenResponse to the TokenRequest {@code request} (base64url), retried with the same bytes. */
    private byte[] requestToken(String request) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", PrivacyPass.TOKEN_REQUEST_TYPE);
        headers.put("Accept", PrivacyPass.TOKEN_RESPONSE_TYPE);
        HttpTransport.Response response = connection.request("POST", info.url + "/issuer/v1/keys/" + Relay.encode(info.key) + "/token-request",
            Bytes.fromBase64Url(request, "A token request"), headers, "Bearer " + credential.get(), true);
        String type = response.header("Content-Type") == null ? "" : response.header("Content-Type");
        if (!type.split(";")[0].trim().equalsIgnoreCase(PrivacyPass.TOKEN_RESPONSE_TYPE)) {
            throw ServiceError.refusal("The issuer answered a token request with " + Json.show(type) + ", not " + PrivacyPass.TOKEN_RESPONSE_TYPE + ".", "bad_token_response");
        }
        return response.body;
    }
}
