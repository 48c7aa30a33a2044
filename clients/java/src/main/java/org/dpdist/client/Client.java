package org.dpdist.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;

import org.dpdist.client.protocols.Longitudinal;
import org.dpdist.client.protocols.Memo;
import org.dpdist.client.protocols.Protocol;

/**
 * A device-side client of one campaign of {@code dpdist serve} (the JavaScript client's {@code src/client.js}): fetch
 * the campaign's config, randomize on the device, submit batches of reports with a batch id, retrying until the server
 * acknowledges.
 *
 * <p>Only reports leave the device: a value is randomized as soon as it is given ({@link #submit}, {@link #add}) and
 * only the randomized report is kept, sent and retried.  A retry sends the same bytes under the same batch id (the server
 * counts a batch exactly once); a report is never drawn again for the same value.  Reports leave in a uniformly random
 * order (CSPRNG), never in the order the values were given.  Every report is charged to the device's {@link Ledger}
 * (kept in the {@link Storage} the options name) before it is drawn, and refused past its budget.
 *
 * <pre>
 *   GET  {server}/api/campaigns/{campaign}/config              -&gt; {"config", "state", ...}
 *   PUT  {server}/api/campaigns/{campaign}/batches/{batch_id}  binary records -&gt; ack
 *   GET  {server}/api/campaigns/{campaign}/identity            a relayed campaign's identity: its SHA-256 is the pin
 *   GET  {issuer}/issuer/v1/keys/{key}                         the issuer's token key, checked against the campaign's
 *   POST {issuer}/issuer/v1/keys/{key}/token-request           Bearer credential, TokenRequest -&gt; TokenResponse
 *   PUT  {relay}/relay/v1/campaigns/{campaign}/ohttp/{id}      Dpdist-Pin, PrivateToken token, one RFC 9458 request -&gt; ack
 * </pre>
 *
 * A client is for one device; its methods may be called from any thread, one at a time (they synchronize).
 */
public final class Client {
    /** The storage key of the device's privacy ledger. */
    public static final String LEDGER_KEY = "dpdist-ledger";
    /** The longest wait a server's Retry-After may ask of this client (seconds), as in Python. */
    public static final int MAX_RETRY_AFTER = 60;
    private static final Set<Integer> RETRYABLE_STATUS = new HashSet<>(Arrays.asList(408, 425, 429, 500, 502, 503, 504));
    /** 409 refusals worth retrying: the campaign is between states, or was deleted and created again meanwhile. */
    private static final Set<String> RETRYABLE_CONFLICTS = new HashSet<>(Arrays.asList("campaign_not_open", "campaign_changed"));
    private static final SecureRandom TOKEN_RANDOM = new SecureRandom();

    /** The client's options: what it sends with, where the device's ledger and tokens are kept, how it retries. */
    public static final class Options {
        String token;
        int batchSize = 1000;
        int retries = 5;
        long retryDelayMs = 500;
        Storage storage;
        boolean storageChosen;
        HttpTransport transport;
        RandomSource source;
        String pin;
        String issuerCredential;
        String issuerUrl;
        Double budget;
        Double window;
        boolean windowChosen;
        String accounting;

        /**
         * The owner's total epsilon for this device (Python's {@code PrivacyLedger.restore(budget=...)}): it replaces the
         * budget stored in the ledger each time the ledger is read, so the code, not the file, is the authority (an edit of
         * the file's budget does not raise it).  Without it a new ledger has {@link Ledger#DEFAULT_BUDGET} and a stored one
         * keeps its own.
         */
        public Options budget(double budget) {
            new Ledger(budget, null, "history", null); // refused here, naming the budget, if not a finite epsilon > 0
            this.budget = budget;
            return this;
        }

        /** The seconds the budget is counted over ({@code null}: all time), replacing the stored ledger's as {@link #budget} does. */
        public Options window(Double seconds) {
            new Ledger(Ledger.DEFAULT_BUDGET, seconds, "history", null);
            this.window = seconds;
            this.windowChosen = true;
            return this;
        }

        /**
         * "history" or "stable" (Python's ledger accountings), replacing the stored ledger's; a ledger holding charges
         * under the other accounting is refused ({@link IncompatibleStateError}) rather than re-read.
         */
        public Options accounting(String accounting) {
            new Ledger(Ledger.DEFAULT_BUDGET, null, accounting, null);
            this.accounting = accounting;
            return this;
        }

        /** The campaign's submit token, if it has one (sent to the collector only, as Authorization: Bearer). */
        public Options token(String token) {
            this.token = token;
            return this;
        }

        /** Reports per batch of {@code submitMany} and {@code add} (1000). */
        public Options batchSize(int batchSize) {
            if (batchSize < 1) throw new InvalidParameterError("The 'batchSize' option of Client must be an int >= 1. Got " + batchSize + ".");
            this.batchSize = batchSize;
            return this;
        }

        /** Attempts after the first for a request (5). */
        public Options retries(int retries) {
            if (retries < 0) throw new InvalidParameterError("The 'retries' option of Client must be an int >= 0. Got " + retries + ".");
            this.retries = retries;
            return this;
        }

        /** The first retry's delay, doubled each time (500 ms), jittered; a server's Retry-After is honoured instead. */
        public Options retryDelayMs(long retryDelayMs) {
            if (retryDelayMs < 0) throw new InvalidParameterError("The 'retryDelayMs' option of Client must be >= 0. Got " + retryDelayMs + ".");
            this.retryDelayMs = retryDelayMs;
            return this;
        }

        /**
         * Where the device's privacy ledger (key {@code dpdist-ledger}: its budget, what each collector spent, the memos of
         * longitudinal campaigns) and its tokens (key {@code dpdist-tokens}) persist, e.g. {@code new FileStorage(dir)}.
         */
        public Options storage(Storage storage) {
            if (storage == null) throw new InvalidParameterError("The 'storage' option of Client must be a Storage; for no ledger at all, use withoutLedger().");
            this.storage = storage;
            this.storageChosen = true;
            return this;
        }

        /**
         * No ledger and no stored tokens: for simulations of many users only (no budget is enforced; a longitudinal
         * campaign, whose device must keep its memo, and a campaign in rounds, whose device answers one round, are refused).
         */
        public Options withoutLedger() {
            this.storage = null;
            this.storageChosen = true;
            return this;
        }

        /** How the client talks HTTP: {@link JdkHttpTransport} where there is java.net.http, else {@link UrlConnectionTransport} (Android). */
        public Options transport(HttpTransport transport) {
            this.transport = transport;
            return this;
        }

        /** The random source privatize draws from: the CSPRNG by default; a seeded one only in tests. */
        public Options source(RandomSource source) {
            this.source = source;
            return this;
        }

        /**
         * A relayed campaign's pin (64 hex digits: the SHA-256 of its identity document, printed by {@code dpdist campaign
         * create}).  With it any server, the relay included, may serve the campaign; without it a relayed campaign must come
         * from its collector (the relay itself is refused: {@code pin_required}).
         */
        public Options pin(String pin) {
            this.pin = Identity.checkPin(pin);
            return this;
        }

        /**
         * For a relayed campaign whose reports need a Privacy Pass token: {@code credential}, what the issuer gave this device
         * (sent to the issuer only), and {@code url}, that issuer's URL, required with a credential: a device given it
         * refuses a relayed campaign that names no issuer or another issuer's origin ({@code issuer_mismatch}).
         */
        public Options issuer(String credential, String url) {
            checkIssuer(credential, url);
            this.issuerCredential = credential;
            this.issuerUrl = url;
            return this;
        }
    }

    /** A batch not yet acknowledged, always sent under its id. */
    private static final class Unsent {
        final ReportBatch batch;
        final String batchId;

        Unsent(ReportBatch batch, String batchId) {
            this.batch = batch;
            this.batchId = batchId;
        }
    }

    public final String serverUrl;
    public final String campaignId;
    private final Options options;
    private final HttpTransport transport;
    private final RandomSource source;
    private final TokenWallet wallet;
    private String issuerCredential;
    private String issuerUrl;
    private Map<String, Object> campaign;
    private Protocol protocol;
    private int bodyRows = 1; // reports per request body, from the config answer (campaign(), ReportBound)
    private Identity.Issuer issuerInfo;
    private byte[] relayKey; // a relayed campaign's Oblivious HTTP key (Relay.keyConfig)
    private boolean issuerKeyChecked;
    private Ledger ledger;
    private final List<ReportBatch> pending = new ArrayList<>();
    private final List<Unsent> unsent = new ArrayList<>();

    /**
     * A client of campaign {@code campaignId} at {@code serverUrl} (e.g. "https://collector.example.org").  The options
     * must choose where the device's ledger is kept ({@link Options#storage}) or that there is none
     * ({@link Options#withoutLedger}).
     */
    public Client(String serverUrl, String campaignId, Options options) {
        if (serverUrl == null) throw new InvalidParameterError("The 'serverUrl' argument of Client must be a URL. Got null.");
        if (campaignId == null || !campaignId.matches("[A-Za-z0-9._-]{1,128}")) {
            throw new InvalidParameterError("The 'campaignId' argument of Client must be 1-128 characters of A-Z, a-z, 0-9, '.', '_' and '-'. Got "
                + Json.show(campaignId) + ".");
        }
        if (options == null || !options.storageChosen) {
            throw new InvalidParameterError("The 'storage' option of Client is required: where the device keeps its privacy ledger (new FileStorage(dir)), "
                + "or withoutLedger() for a simulation of many users.");
        }
        Identity.originOf(serverUrl, "The 'serverUrl' argument of Client");
        if (serverUrl.contains("?") || serverUrl.contains("#")) { // the API's paths are joined to it: every request would go to /?...
            throw new InvalidParameterError("The 'serverUrl' argument of Client must be the service's URL without a query or fragment "
                + "(?...#...: the API's paths are joined to it). Got " + Json.show(Shown.shownUrl(serverUrl)) + ".");
        }
        this.serverUrl = serverUrl.replaceAll("/+$", "");
        this.campaignId = campaignId;
        this.options = options;
        this.transport = options.transport != null ? options.transport : HttpTransport.platformDefault();
        this.source = options.source != null ? options.source : RandomSource.secureSource();
        this.wallet = new TokenWallet(options.storage);
        this.issuerCredential = options.issuerCredential;
        this.issuerUrl = options.issuerUrl;
    }

    /** A fresh set of options (choose the storage). */
    public static Options options() {
        return new Options();
    }

    private static void checkIssuer(String credential, String url) {
        if (credential != null && credential.isEmpty()) {
            throw new InvalidParameterError("The 'issuer.credential' option of Client must be a non-empty string or null. Got an empty string.");
        }
        if (url != null) Identity.originOf(url, "The 'issuer.url' option of Client");
        if (credential != null && url == null) {
            throw new InvalidParameterError("The 'issuer.url' option of Client is required with 'issuer.credential': a credential is tied to its issuer, and "
                + "the device sends it to that issuer only (give the issuer URL received with the credential).");
        }
    }

    /** Set the issuer credential and URL after construction (checked as {@link Options#issuer}). */
    public synchronized void setIssuer(String credential, String url) {
        checkIssuer(credential, url);
        this.issuerCredential = credential;
        this.issuerUrl = url;
    }

    /** The collector this client reports to, as the device's ledger names it. */
    public String collector() {
        return serverUrl;
    }

    private String campaignPath(String path) {
        return serverUrl + "/api/campaigns/" + Relay.encode(campaignId) + path;
    }

    // ---------------------------------------------------------------- the campaign

    /**
     * The campaign's public description {@code {campaign, state, config, ...}} (fetched once).  A relayed campaign's is its
     * identity's: config, relay and issuer from the identity document whose SHA-256 is the pin.
     */
    public synchronized Map<String, Object> campaign() {
        if (campaign == null) {
            Map<String, Object> served = json(request("GET", campaignPath("/config"), null, new LinkedHashMap<>(), null, false, null,
                HttpTransport.MAX_ANSWER_BYTES), HttpTransport.MAX_ANSWER_BYTES);
            Object[] trusted = trusted(served);
            @SuppressWarnings("unchecked")
            Map<String, Object> document = (Map<String, Object>) trusted[0];
            Map<String, Object> relay = Json.asObject(document.get("relay"));
            // a relayed campaign's key configuration, before anything is drawn (no_ohttp_key for one made before it had one)
            byte[] key = relay == null ? null : Relay.keyConfig(relay, campaignId);
            // the published client view, checked against this client's derivation (a server without one: the config)
            // a config it cannot build is the server's answer refused (ReportBound.protocolOfAnswer)
            Protocol built = ReportBound.protocolOfAnswer(
                document.get("client_view") != null ? document.get("client_view") : document.get("config"), campaignId);
            // the reports one body holds, from the answer's max_body_bytes and max_batch_reports: a config whose statistic
            // or one report is too large, or a bad bound, is refused before anything is drawn, sent or charged
            // (ReportBound)
            this.bodyRows = ReportBound.rowsPerBody(built, served, campaignId, Integer.MAX_VALUE);
            Identity.Issuer info = relay != null && relay.get("issuer") != null
                ? Identity.checkedIssuer(Json.asObject(relay.get("issuer")), (String) relay.get("pin"), campaignId, trusted[1]) : null;
            this.protocol = built;
            this.issuerInfo = info;
            this.relayKey = key;
            this.campaign = document;
            try {
                this.ledger = withLedgerLock(() -> loadLedger(built));
            } catch (RuntimeException error) {
                this.campaign = null;
                throw error;
            }
        }
        return campaign;
    }

    /** The campaign's protocol. */
    public synchronized Protocol protocol() {
        campaign();
        return protocol;
    }

    /** The device's privacy ledger (null without storage), loaded with the campaign. */
    public synchronized Ledger ledger() {
        campaign();
        return ledger;
    }

    /** The device's memo of this longitudinal campaign, null before its first report. */
    public synchronized Memo memo() {
        Ledger kept = ledger();
        return kept == null ? null : kept.memoOf(protocol, collector());
    }

    /**
     * The campaign document {@code served} as the device takes it, and the TokenChallenge the server publishes: a relayed
     * campaign (its config has {@code relay}, or a pin was given) from its identity document only.
     */
    private Object[] trusted(Map<String, Object> served) {
        Map<String, Object> servedRelay = Json.asObject(served.get("relay"));
        if (options.pin == null && servedRelay == null) return new Object[] {served, null};
        if (!Hpke.available()) {
            throw ServiceError.refusal("Campaign '" + campaignId + "' is collected through a relay, whose reports are sealed with X25519 (HPKE), and this "
                + "platform has no X25519 key agreement. Nothing was drawn or sent.", "hpke_unavailable");
        }
        HttpTransport.Response response = request("GET", campaignPath(Identity.IDENTITY_PATH), null, new LinkedHashMap<>(), null, false, null,
            HttpTransport.MAX_ANSWER_BYTES);
        Identity.Document identity = Identity.identityOf(response.body, campaignId, options.pin, servedRelay == null ? null : servedRelay.get("pin"));
        if (options.pin == null) Identity.checkNotTheRelay(identity.relay, Identity.originOf(serverUrl, "The 'serverUrl' argument of Client"), campaignId);
        Identity.checkExpectedIssuer(identity.issuer, issuerUrl, campaignId);
        // only what the pin covers, and the campaign's state (public, and only ever a reason to refuse)
        Map<String, Object> relay = new LinkedHashMap<>(identity.relay);
        relay.put("pin", identity.pin);
        relay.put("issuer", identity.issuer);
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("campaign", identity.campaign);
        document.put("state", served.get("state"));
        document.put("config", identity.config);
        document.put("relay", relay);
        Map<String, Object> publishedIssuer = servedRelay == null ? null : Json.asObject(servedRelay.get("issuer"));
        return new Object[] {document, publishedIssuer == null ? null : publishedIssuer.get("challenge")};
    }

    /** A relayed campaign, loaded: refuse it if this device was given an issuer and the campaign names none or another. */
    private void checkExpectedIssuer() {
        Map<String, Object> relay = campaign == null ? null : Json.asObject(campaign.get("relay"));
        if (relay != null) Identity.checkExpectedIssuer(Json.asObject(relay.get("issuer")), issuerUrl, campaignId);
    }

    // ---------------------------------------------------------------- the ledger and the draws

    private <T> T withLedgerLock(Supplier<T> action) {
        return options.storage == null ? action.get() : options.storage.withLock(action);
    }

    private Ledger loadLedger(Protocol built) {
        Storage storage = options.storage;
        if (storage == null) {
            if (campaign != null && answerOnce(campaign) != null) {
                throw new InvalidParameterError("Campaign '" + campaignId + "' runs in rounds: its epsilon per user holds only if a device answers one round, "
                    + "which the device keeps in its ledger. Pass the 'storage' option (a Storage, such as new FileStorage(dir)).");
            }
            if (!(built instanceof Longitudinal)) return null;
            throw new InvalidParameterError("Campaign '" + campaignId + "' uses the longitudinal protocol '" + built.name + "': the device must keep its memo "
                + "of permanent responses, or every report would spend a fresh epsilon. Pass the 'storage' option (a Storage, such as new FileStorage(dir)).");
        }
        java.util.function.Consumer<Ledger> save = kept -> storage.setItem(LEDGER_KEY, Json.write(kept.toJson()));
        String text = storage.getItem(LEDGER_KEY);
        if (text == null) {
            return new Ledger(options.budget == null ? Ledger.DEFAULT_BUDGET : options.budget, options.window,
                options.accounting == null ? "history" : options.accounting, save);
        }
        Object state;
        try {
            state = Json.parse(text);
        } catch (IllegalArgumentException error) { // (not the parser's message: it names a character of a memo)
            throw new IncompatibleStateError("The ledger under '" + LEDGER_KEY + "' is not valid JSON; it was not overwritten.");
        }
        return Ledger.fromJson(state, save).restoredWith(options.budget, options.window, options.windowChosen, options.accounting);
    }

    /**
     * The question a device of this campaign answers once (the ledger's {@code once}): a campaign in rounds, any of its
     * rounds (its id), or the campaign a round's own campaign is of ({@code round_of}); null for any other campaign.
     */
    private static String answerOnce(Map<String, Object> document) {
        if (document.get("round_of") != null) return String.valueOf(document.get("round_of"));
        return document.get("rounds") != null ? String.valueOf(document.get("campaign")) : null;
    }

    /** Refuse, before anything is drawn, an answer to a campaign in rounds whose round is not open now. */
    private static void checkRoundOpen(Map<String, Object> document) {
        Map<String, Object> rounds = Json.asObject(document.get("rounds"));
        Object state = rounds != null && rounds.get("round_state") != null ? rounds.get("round_state") : document.get("state");
        if (!"open".equals(state) || (rounds != null && document.get("submit_to") == null)) {
            throw new ServiceError("Campaign '" + document.get("campaign") + "' runs in rounds and no round is open now (state " + state + "); nothing was drawn, "
                + "and the device keeps its one answer for an open round.", 409, "no_open_round");
        }
    }

    /** Refuse, before anything is drawn, an answer outside the round this device drew (kept in its ledger). */
    private void checkOwnRound(Map<String, Object> document, Ledger kept, String once) {
        if (kept.answered(once, collector())) return; // the ledger refuses the second answer, saying so
        Map<String, Object> rounds = Json.asObject(document.get("rounds"));
        Object sizes = rounds != null && rounds.get("sizes") != null ? rounds.get("sizes") : document.get("round_sizes");
        if (!(sizes instanceof List)) {
            throw new ServiceError("Campaign '" + document.get("campaign") + "' runs in rounds but its config gives no rounds' sizes (a server before dpdist's "
                + "random split of devices into rounds); nothing was drawn.", 409, "no_round_sizes");
        }
        long own = kept.roundFor(once, collector(), (List<?>) sizes, source);
        Map<String, Object> config = Json.asObject(document.get("config"));
        Object asked = config != null && config.get("round") != null ? config.get("round") : rounds == null ? null : rounds.get("round");
        if (asked instanceof Number && ((Number) asked).doubleValue() == own) return;
        if (Json.isInteger(asked) && ((Number) asked).doubleValue() < own) {
            throw new ServiceError("This device answers round " + own + " of campaign '" + once + "' (drawn at random, in proportion to the rounds' sizes); round "
                + asked + " is open now. Nothing was drawn: submit again once round " + own + " is open.", 409, "wait_for_round");
        }
        throw new ServiceError("This device answers round " + own + " of campaign '" + once + "' (drawn at random), which is over (round " + asked + " is open "
            + "now); it answers no other round, so its one answer is not given. Nothing was drawn.", 409, "round_over");
    }

    /**
     * Reports of {@code values} of this device as one ReportBatch (after {@link #campaign()}), not sent: charged to its
     * ledger (through its memo for a longitudinal campaign; PrivacyBudgetError past the budget), else fresh draws.
     */
    public synchronized ReportBatch randomize(List<?> values) {
        if (campaign == null) throw new InvalidParameterError("Client.randomize needs the campaign: call client.campaign() first.");
        checkExpectedIssuer();
        return privatizeLocked(protocol, values);
    }

    private ReportBatch privatize(Protocol built, List<?> values) {
        if (ledger == null) return built.privatize(values, source);
        String once = answerOnce(campaign);
        try {
            if (once != null) checkRoundOpen(campaign);
            this.ledger = loadLedger(built); // read again right before drawing: another client may have drawn or charged since
            if (once != null) checkOwnRound(campaign, ledger, once);
        } catch (ServiceError error) {
            // the round open now is not this device's: the next submit fetches the campaign again
            if ("no_open_round".equals(error.code()) || "wait_for_round".equals(error.code())) campaign = null;
            throw error;
        }
        return ledger.report(built, values, collector(), source, Ledger.now(), once);
    }

    private ReportBatch privatizeLocked(Protocol built, List<?> values) {
        if (ledger == null) return privatize(built, values);
        return withLedgerLock(() -> privatize(built, values));
    }

    // ---------------------------------------------------------------- submitting

    /** Randomize one user's value and submit its report now; the server's ack. */
    public synchronized Map<String, Object> submit(Object value) {
        Protocol built = protocol();
        prepareFor(1); // a relayed campaign's token first: no token, no draw
        String batchId = Wire.newFileId();
        return send(drawKept(built, Collections.singletonList(value), batchId), batchId);
    }

    /**
     * Draw the reports of {@code values} and, with a storage, keep the batch under {@code batchId} in its outbox in the
     * same hold of the storage's lock, so that a batch whose sending fails outlives the process (the next client's
     * {@link #flush()} resends it).
     */
    private ReportBatch drawKept(Protocol built, List<?> values, String batchId) {
        if (options.storage == null) return privatizeLocked(built, values);
        return withLedgerLock(() -> {
            ReportBatch batch = privatize(built, values);
            Outbox.keep(options.storage, serverUrl, campaignId, Json.write(built.config()), batch, batchId);
            return batch;
        });
    }

    private void keep(Protocol built, ReportBatch batch, String batchId) {
        if (options.storage == null) return;
        withLedgerLock(() -> {
            Outbox.keep(options.storage, serverUrl, campaignId, Json.write(built.config()), batch, batchId);
            return null;
        });
    }

    /**
     * Randomize many values and submit them in batches of {@code batchSize} (fewer when one request body, the config
     * answer's {@code max_body_bytes} capped at 16 MiB, holds fewer reports, or when the answer's
     * {@code max_batch_reports}, the most reports the service takes in one batch, is smaller); the acks.  The values are taken in a
     * uniformly random order (CSPRNG), so neither a report's batch nor its place in it depends on where its value was.
     * If a batch cannot be sent, the error is thrown and it and the later batches stay queued (as reports) for
     * {@link #flush()}, under their batch ids.
     */
    public synchronized List<Map<String, Object>> submitMany(List<?> values) {
        Protocol built = protocol();
        int[] order = Shuffle.permutation(values.size(), source);
        int step = Math.min(options.batchSize, bodyRows); // fewer when one body or batch holds fewer
        for (int start = 0; start < values.size(); start += step) {
            int size = Math.min(step, values.size() - start);
            prepareFor(size); // the batch's tokens before its draws
            List<Object> chunk = new ArrayList<>(size);
            for (int i = start; i < start + size; i++) chunk.add(values.get(order[i]));
            String batchId = Wire.newFileId();
            unsent.add(new Unsent(drawKept(built, chunk, batchId), batchId));
        }
        return flush();
    }

    /** Randomize a value now and queue its report; a full queue is flushed (its acks, or none). */
    public synchronized List<Map<String, Object>> add(Object value) {
        Protocol built = protocol();
        prepareFor(1); // this report's token before its draw
        pending.add(privatizeLocked(built, Collections.singletonList(value)));
        return pending.size() >= Math.min(options.batchSize, bodyRows) ? flush() : new ArrayList<>();
    }

    /**
     * Send the queued reports as one batch, in a uniformly random order; the acks of the batches sent (first any batch an
     * earlier flush failed to send, under its original batch id and with the same bytes).
     */
    public synchronized List<Map<String, Object>> flush() {
        if (!pending.isEmpty()) {
            ReportBatch first = pending.get(0);
            int rowBytes = first.rowBytes();
            byte[] bytes = new byte[pending.size() * rowBytes];
            for (int i = 0; i < pending.size(); i++) System.arraycopy(pending.get(i).bytes, 0, bytes, i * rowBytes, rowBytes);
            ReportBatch batch = first.withRows(pending.size(), bytes);
            pending.clear();
            Unsent shuffled = new Unsent(Shuffle.shuffleBatch(batch, source), Wire.newFileId());
            keep(protocol(), shuffled.batch, shuffled.batchId);
            unsent.add(shuffled);
        }
        List<Map<String, Object>> acks = new ArrayList<>();
        Set<String> sent = new HashSet<>();
        while (!unsent.isEmpty()) {
            Unsent next = unsent.get(0);
            acks.add(send(next.batch, next.batchId)); // on failure it stays first in line
            sent.add(next.batchId);
            unsent.remove(0);
        }
        if (options.storage != null && withLedgerLock(() -> Outbox.size(options.storage)) > 0) {
            // batches an earlier client of this device drew and could not send (its process ended): the same ids and bytes
            Protocol built = protocol();
            String config = Json.write(built.config());
            for (Outbox.Kept kept : withLedgerLock(() -> Outbox.of(options.storage, serverUrl, campaignId, config))) {
                if (sent.add(kept.batchId)) acks.add(send(built.batchOf(kept.rows, kept.bytes), kept.batchId));
            }
        }
        return acks;
    }

    /** Reports randomized but not yet acknowledged by the server (queued or in failed batches). */
    public synchronized int unsentReports() {
        int count = pending.size();
        for (Unsent batch : unsent) count += batch.batch.length();
        return count;
    }

    /**
     * Submit a batch of reports under {@code batchId} (32 lower-case hex digits), retrying the same bytes and id on network
     * errors, 408/425/429, 5xx and 409 campaign_not_open or campaign_changed; the server's ack.  The rows are sent in the
     * order given (a resend must carry the same bytes).  A {@link ServiceError} carries the batch and its id.
     */
    public synchronized Map<String, Object> send(ReportBatch batch, String batchId) {
        Map<String, Object> document = campaign();
        Map<String, Object> relay = Json.asObject(document.get("relay"));
        Map<String, Object> ack = sendOnce(document, relay, batch, batchId);
        if (options.storage != null) {
            withLedgerLock(() -> {
                Outbox.forget(options.storage, batchId); // acknowledged: not to be resent
                return null;
            });
        }
        return ack;
    }

    private Map<String, Object> sendOnce(Map<String, Object> document, Map<String, Object> relay, ReportBatch batch, String batchId) {
        try {
            if (relay != null) return sendThroughRelay(relay, batch, batchId);
            byte[] body = Wire.encodeRecord(batch, batchId);
            // a campaign in rounds counts the current round's reports in that round's campaign
            Object round = document.get("submit_to");
            String url = round != null ? serverUrl + "/api/campaigns/" + Relay.encode(String.valueOf(round)) + "/batches/" + batchId
                : campaignPath("/batches/" + batchId);
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("Content-Type", "application/octet-stream");
            String target = round != null ? String.valueOf(round) : campaignId; // a round's campaign counts its batch
            return json(request("PUT", url, body, headers, null, false, answer -> ackProblem(answer, "batch_id", batchId, target, batch.length())));
        } catch (ServiceError error) {
            throw error.withBatch(batch, batchId); // resend with send(batch, batchId)
        }
    }

    /**
     * A relayed campaign: each report an RFC 9458 request to the identity's key configuration, sent alone to the relay the
     * identity names, under {@code <batchId>.<row>}, with the identity's pin and, when the campaign has an issuer, the token
     * bound to that report id, the report encapsulated once with the token's key and kept, so that a resend carries the same token and bytes; the
     * tokens of a batch stay bound until the relay acknowledged every report of it.
     */
    private Map<String, Object> sendThroughRelay(Map<String, Object> relay, ReportBatch batch, String batchId) {
        String base = String.valueOf(relay.get("url")).replaceAll("/+$", "");
        Identity.originOf(base, "The relay URL of campaign '" + campaignId + "' (relay.url of its identity)");
        checkExpectedIssuer(); // the issuer may have been set after campaign()
        Identity.Issuer info = issuerInfo;
        List<Map<String, Object>> acks = new ArrayList<>();
        for (int index = 0; index < batch.length(); index++) {
            byte[] body = Wire.encodeRecord(batch.withRows(1, batch.row(index)));
            String reportId = batchId + "." + index;
            byte[] sealed;
            String authorization = null;
            if (info == null) {
                sealed = Relay.encapsulate(relayKey, campaignId, body, null);
            } else {
                Map<String, Object> bound = boundReport(info, reportId);
                if (!bound.containsKey("ohttp")) { // encapsulated once with its token's key, kept before it leaves the device
                    String kept = Bytes.base64Url(Relay.encapsulate(relayKey, campaignId, body, Bytes.fromBase64Url(bound.get("seed"), "A stored seed")));
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
                acks.add(json(request("PUT", base + Relay.reportPath(campaignId, reportId), sealed, headers, authorization, true,
                    answer -> ackProblem(answer, "report_id", reportId, campaignId))));
            } catch (ServiceError error) {
                throw relayRefused(info, reportId, error);
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
    private Map<String, Object> boundReport(Identity.Issuer info, String reportId) {
        Map<String, Object> bound = withLedgerLock(() -> wallet.bind(info.scope, reportId));
        if (bound != null) return bound;
        prepareTokens(1); // a batch drawn by randomize() and sent here: its token now
        return withLedgerLock(() -> wallet.bind(info.scope, reportId));
    }

    /**
     * The error to throw for the relay's refusal of report {@code reportId}: a token the relay saw spent on another report
     * is released (a resend takes another, and seals again); one the relay does not admit (401, 403 {@code
     * token_not_bound}) was checked when it was made and bound to the report's key: it stays with its report.
     */
    private ServiceError relayRefused(Identity.Issuer info, String reportId, ServiceError error) {
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

    // ---------------------------------------------------------------- tokens

    /**
     * Hold tokens of the campaign's issuer for {@code count} reports (how many the device holds), before they are drawn:
     * a relayed campaign with an issuer takes one token per report, so a refusal (no credential, the issuer's) never
     * follows a draw.  A request whose answer was lost is sent again, the same bytes.  Tokens are kept (the storage, key
     * {@code dpdist-tokens}) until a report spends them.  Other campaigns: 0.
     */
    public synchronized int prepareTokens(int count) {
        if (count < 0) throw new InvalidParameterError("The 'count' argument of prepareTokens must be an int >= 0. Got " + count + ".");
        campaign();
        checkExpectedIssuer();
        Identity.Issuer info = issuerInfo;
        if (info == null) return 0;
        for (int obtained = 0;; obtained++) {
            TokenWallet.Campaign held = withLedgerLock(() -> wallet.view(info.scope));
            if (held.spare.size() >= count) return held.spare.size();
            if (issuerCredential == null) {
                throw ServiceError.refusal("Campaign '" + campaignId + "' takes each report with a token of its issuer (" + info.origin + "): give this device's "
                    + "credential from that issuer (Options.issuer(credential, url)). Nothing was drawn or sent.", "credential_required");
            }
            checkIssuerKey(info);
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
                response = requestToken(info, (String) entry.get("request"));
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

    /** {@link #prepareTokens} for {@code reports} new reports and every report drawn but not yet sent without a token bound to it. */
    private void prepareFor(int reports) {
        campaign();
        checkExpectedIssuer();
        Identity.Issuer info = issuerInfo;
        if (info == null) return;
        TokenWallet.Campaign held = withLedgerLock(() -> wallet.view(info.scope));
        int owed = pending.size();
        for (Unsent batch : unsent) {
            for (int index = 0; index < batch.batch.length(); index++) if (!held.bound.containsKey(batch.batchId + "." + index)) owed += 1;
        }
        prepareTokens(owed + reports);
    }

    /** The issuer's token key must be the campaign's, else {@code issuer_key_mismatch}; its tokens_each the identity's (once). */
    private void checkIssuerKey(Identity.Issuer info) {
        if (issuerKeyChecked) return;
        Map<String, Object> published = json(request("GET", info.url + "/issuer/v1/keys/" + Relay.encode(info.key), null, new LinkedHashMap<>(), null, true));
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
    private byte[] requestToken(Identity.Issuer info, String request) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", PrivacyPass.TOKEN_REQUEST_TYPE);
        headers.put("Accept", PrivacyPass.TOKEN_RESPONSE_TYPE);
        HttpTransport.Response response = request("POST", info.url + "/issuer/v1/keys/" + Relay.encode(info.key) + "/token-request",
            Bytes.fromBase64Url(request, "A token request"), headers, "Bearer " + issuerCredential, true);
        String type = response.header("Content-Type") == null ? "" : response.header("Content-Type");
        if (!type.split(";")[0].trim().equalsIgnoreCase(PrivacyPass.TOKEN_RESPONSE_TYPE)) {
            throw ServiceError.refusal("The issuer answered a token request with " + Json.show(type) + ", not " + PrivacyPass.TOKEN_RESPONSE_TYPE + ".", "bad_token_response");
        }
        return response.body;
    }

    // ---------------------------------------------------------------- HTTP

    /** Seconds a {@code Retry-After} header asks for (delta-seconds or an HTTP date), null if absent or unreadable. */
    public static Double retryAfterSeconds(String value) {
        if (value == null) return null;
        String text = value.trim();
        if (text.matches("[0-9]+")) return Math.min(text.length() > 9 ? MAX_RETRY_AFTER : Double.parseDouble(text), MAX_RETRY_AFTER);
        try {
            long moment = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
            return Math.min(Math.max(0, (moment - System.currentTimeMillis()) / 1000.0), MAX_RETRY_AFTER);
        } catch (DateTimeParseException unreadable) {
            return null;
        }
    }

    /**
     * The wait before a retry (ms), jittered so that many clients refused together do not return together: a server's
     * Retry-After is honoured (never earlier, up to 50% later, but never past {@link #MAX_RETRY_AFTER} seconds, jitter
     * included), else the backoff is spread over its upper half.
     */
    public static double retryDelayMs(double backoffMs, Double askedSeconds) {
        double jitter = ThreadLocalRandom.current().nextDouble(); // timing only: nothing private depends on it
        if (askedSeconds != null) {
            double asked = Math.min(askedSeconds, MAX_RETRY_AFTER) * 1000;
            return Math.max(asked, Math.min(asked * (1 + 0.5 * jitter), MAX_RETRY_AFTER * 1000.0));
        }
        return backoffMs * (0.5 + 0.5 * jitter);
    }

    /**
     * Null if {@code response} acknowledges what was sent, else what it is (as Python's {@code dpdist._http._acks}
     * and JavaScript's {@code acks.js}): a JSON object whose {@code idKey} is {@code id} and whose campaign is
     * {@code campaign}, with {@code accepted} (an integer &gt;= 0), {@code rejected} (an object) and {@code duplicate} (a
     * boolean) for a batch, {@code duplicate} for a relay's report.  Another batch's acknowledgement (a server's bug, a
     * proxy's cache), a captive portal's page or a body cut short is retried like a failure, then {@code wrong_ack}.
     */
    static String ackProblem(HttpTransport.Response response, String idKey, String id, String campaign) {
        return ackProblem(response, idKey, id, campaign, -1);
    }

    /**
     * As above, for a batch of {@code sent} reports (-1: not known): {@code accepted} at most {@code n_read} (if
     * present) and both at most {@code sent} (a duplicate's counts are the first time's, of the same bytes).
     */
    static String ackProblem(HttpTransport.Response response, String idKey, String id, String campaign, long sent) {
        String named = idKey.equals("batch_id") ? "batch id" : "report id";
        String what = "no acknowledgement of " + named + " '" + id + "' of campaign '" + campaign + "': HTTP " + response.status;
        Map<String, Object> ack;
        try {
            ack = Json.asObject(Json.parseAnswer(response.body, HttpTransport.ACK_ANSWER_BYTES)); // a hostile answer of many small values is not parsed
        } catch (IllegalArgumentException notJson) {
            String heavy = Json.tooManyValues(response.body, HttpTransport.ACK_ANSWER_BYTES);
            return what + (heavy != null ? " with " + heavy + " (not parsed)" : " with a body that is not JSON (" + response.body.length + " bytes)");
        }
        if (ack == null) return what + " with JSON that is not an object";
        if (!id.equals(ack.get(idKey)) || !campaign.equals(ack.get("campaign"))) {
            return what + " naming " + named + " " + Json.show(ack.get(idKey)) + " of campaign " + Json.show(ack.get("campaign"));
        }
        List<String> wrong = new ArrayList<>();
        if (idKey.equals("batch_id")) {
            Object accepted = ack.get("accepted");
            Object nRead = ack.get("n_read");
            boolean count = Json.isInteger(accepted) && ((Number) accepted).doubleValue() >= 0;
            if (!count) wrong.add("'accepted' (an integer >= 0)");
            else if (nRead != null && (!Json.isInteger(nRead) || ((Number) nRead).doubleValue() < ((Number) accepted).doubleValue())) {
                wrong.add("'n_read' (an integer >= 'accepted', " + Json.show(accepted) + ")");
            }
            if (sent >= 0 && count && ((Number) accepted).doubleValue() > sent) {
                wrong.add("'accepted' (at most the " + sent + " report(s) sent: " + Json.show(accepted) + ")");
            }
            if (sent >= 0 && Json.isInteger(nRead) && ((Number) nRead).doubleValue() > sent) {
                wrong.add("'n_read' (at most the " + sent + " report(s) sent: " + Json.show(nRead) + ")");
            }
            if (!Json.isObject(ack.get("rejected"))) wrong.add("'rejected' (an object of counts)");
        }
        if (!(ack.get("duplicate") instanceof Boolean)) wrong.add("'duplicate' (true or false)");
        return wrong.isEmpty() ? null : what + " without " + String.join(", ", wrong);
    }

    private static Map<String, Object> json(HttpTransport.Response response) {
        return json(response, HttpTransport.ACK_ANSWER_BYTES);
    }

    /**
     * The JSON object of a successful answer read within {@code limit} bytes, else {@code bad_answer}: JSON that may hold
     * more values than {@link Json#mostValuesWithin} {@code limit} is not parsed.
     */
    private static Map<String, Object> json(HttpTransport.Response response, int limit) {
        String heavy = Json.tooManyValues(response.body, limit);
        if (heavy != null) {
            throw new ServiceError("The server answered HTTP " + response.status + " with " + heavy + " within " + limit + " bytes, not parsed (a dpdist "
                + "service's answers hold far fewer): is that URL the dpdist service?", response.status, "bad_answer");
        }
        try {
            Map<String, Object> out = Json.asObject(Json.parse(new String(response.body, StandardCharsets.UTF_8)));
            if (out != null) return out;
        } catch (IllegalArgumentException notJson) {
            // below
        }
        throw new ServiceError("The server answered HTTP " + response.status + " with something that is not a JSON object.", response.status, "bad_answer");
    }

    /**
     * {@code method} on {@code url} (of this campaign's server unless {@code other}: another server, which gets
     * {@code authorization} and never this client's submit token), retried as {@link #send} describes.
     */
    private HttpTransport.Response request(String method, String url, byte[] body, Map<String, String> headers, String authorization, boolean other) {
        return request(method, url, body, headers, authorization, other, null);
    }

    /**
     * As above; {@code acknowledges} (null: any success) says what a successful answer must be ({@link #ackProblem}): one
     * that is not is retried like a failure, with the same bytes, and the last failure is then {@code wrong_ack}.
     */
    private HttpTransport.Response request(String method, String url, byte[] body, Map<String, String> headers, String authorization, boolean other,
                                           Function<HttpTransport.Response, String> acknowledges) {
        return request(method, url, body, headers, authorization, other, acknowledges, HttpTransport.ACK_ANSWER_BYTES);
    }

    /**
     * As above, a successful answer read up to {@code limit} bytes (a config, an identity: {@link HttpTransport#MAX_ANSWER_BYTES};
     * anything else, and any refusal: {@link HttpTransport#ACK_ANSWER_BYTES}).
     */
    private HttpTransport.Response request(String method, String url, byte[] body, Map<String, String> headers, String authorization, boolean other,
                                           Function<HttpTransport.Response, String> acknowledges, int limit) {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("Accept", "application/json");
        all.putAll(headers);
        // the submit token goes with a batch only: a campaign's config and identity are public, read without it
        if (!other && options.token != null && !"GET".equals(method)) all.put("Authorization", "Bearer " + options.token);
        if (other && authorization != null) all.put("Authorization", authorization);
        String lastProblem = null;
        boolean unacknowledged = false; // the last answer was a success that acknowledged something else
        Double asked = null;
        // whatever an answer says is shown escaped and cut, the secrets this client holds masked (Shown)
        List<String> secrets = new ArrayList<>(Shown.secretsOf(all.get("Authorization")));
        for (String held : new String[] {options.token, issuerCredential}) if (held != null && !held.isEmpty()) secrets.add(held);
        String where = Shown.shown(other ? url : url.substring(Math.min(url.length(), serverUrl.length())), secrets, -1);
        for (int attempt = 0; attempt <= options.retries; attempt++) {
            if (attempt > 0) sleep(retryDelayMs(options.retryDelayMs * Math.pow(2, attempt - 1), asked));
            asked = null;
            HttpTransport.Response response;
            try {
                response = transport.send(method, url, all, body, limit);
            } catch (HttpTransport.InvalidLocation redirect) { // refused by the platform before its status was given
                throw new ServiceError(method + " " + where + ": the server answered a redirect whose Location is not a valid header value ('"
                    + Shown.shown(redirect.location, secrets, 200) + "'), not followed (this client follows no redirect, which would take its "
                    + "token elsewhere)", -1, "redirected");
            } catch (IOException error) {
                lastProblem = "cannot reach the server (" + Shown.shown(String.valueOf(error), secrets, 2000) + ")";
                unacknowledged = false;
                continue;
            }
            if (response.status >= 300 && response.status < 400) throw redirected(method, where, response, secrets);
            String wrong = response.ok() && acknowledges != null ? acknowledges.apply(response) : null;
            if (response.ok() && wrong == null) return response;
            unacknowledged = wrong != null;
            if (unacknowledged) {
                lastProblem = Shown.shown(method + " " + where + ": " + wrong, secrets, -1);
                asked = retryAfterSeconds(response.header("Retry-After"));
                continue;
            }
            ServiceError refusal = refusal(method, where, url, response, secrets);
            asked = retryAfterSeconds(response.header("Retry-After"));
            boolean retryable = RETRYABLE_STATUS.contains(response.status) || (response.status == 409 && RETRYABLE_CONFLICTS.contains(refusal.code()));
            if (!retryable) throw refusal;
            lastProblem = refusal.getMessage();
        }
        if (unacknowledged) {
            throw new ServiceError(lastProblem + "; gave up after " + (options.retries + 1) + " attempts (is " + (other ? url : serverUrl)
                + " the dpdist service, not a proxy, a captive portal or another server answering in its place?): it is not taken as delivered "
                + "and stays to be resent under its id.", 200, "wrong_ack");
        }
        throw new ServiceError(lastProblem + "; gave up after " + (options.retries + 1) + " attempts", -1, null);
    }

    /**
     * A redirect (3xx) is refused at once, {@code redirected}, naming the status and where it pointed (shown): not
     * followed, whatever its body says, as the Python and JavaScript clients.
     */
    private static ServiceError redirected(String method, String where, HttpTransport.Response response, List<String> secrets) {
        String location = response.header("Location");
        String to = location == null ? "a redirect without a Location" : "a redirect to '" + Shown.shown(location, secrets, 200) + "'";
        return new ServiceError(method + " " + where + ": HTTP " + response.status + ": " + to + ", not followed (this client follows no redirect, "
            + "which would take its token elsewhere): give the URL it names instead", response.status, "redirected");
    }

    /**
     * The ServiceError of a refusal (4xx/5xx): a dpdist refusal's code and detail (escaped, masked, cut to 2000 characters),
     * or the status, host and size of any other answer ({@link Shown#refusal}, as Python's and JavaScript's).
     */
    private static ServiceError refusal(String method, String where, String url, HttpTransport.Response response, List<String> secrets) {
        String host;
        try {
            java.net.URI uri = new java.net.URI(url);
            host = uri.getHost() == null ? "the server" : uri.getPort() < 0 ? uri.getHost() : uri.getHost() + ":" + uri.getPort();
        } catch (java.net.URISyntaxException unreadable) {
            host = "the server";
        }
        String[] shown = Shown.refusal(response.status, response.body, host, secrets);
        return new ServiceError(method + " " + where + ": " + (shown[0] != null ? "HTTP " + response.status + " " : "") + shown[1],
            response.status, shown[0]);
    }

    private static void sleep(double milliseconds) {
        try {
            Thread.sleep((long) Math.ceil(milliseconds));
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new ServiceError("Interrupted while waiting to retry; nothing more was sent.", -1, "interrupted");
        }
    }
}
