package org.dpdist.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import org.dpdist.client.protocols.Longitudinal;
import org.dpdist.client.protocols.Memo;
import org.dpdist.client.protocols.Protocol;

/**
 * A device-side client of one campaign of {@code dpdist serve} (the JavaScript client's {@code src/client.js}): fetch
 * the campaign's config, randomize on the device, submit batches of reports with a batch id, retrying until the server
 * acknowledges.  Its requests are {@link Connection}'s, a relayed campaign's tokens and reports {@link RelayRoute}'s.
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
    static final class Unsent {
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
    private final Connection connection;
    private final RandomSource source;
    private String issuerCredential;
    private String issuerUrl;
    private Map<String, Object> campaign;
    private Protocol protocol;
    private int bodyRows = 1; // reports per request body, from the config answer (campaign(), ReportBound)
    private RelayRoute route; // a relayed campaign's: its key configuration, issuer and the device's tokens
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
        this.connection = new Connection(this.serverUrl, options, () -> issuerCredential);
        this.source = options.source != null ? options.source : RandomSource.secureSource();
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
            Map<String, Object> served = Connection.json(connection.request("GET", campaignPath("/config"), null, new LinkedHashMap<>(), null, false, null,
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
            this.route = relay == null ? null : new RelayRoute(campaignId, relay, key, info, options.storage, connection, () -> issuerCredential);
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
        HttpTransport.Response response = connection.request("GET", campaignPath(Identity.IDENTITY_PATH), null, new LinkedHashMap<>(), null, false, null,
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
            if (relay != null) {
                checkExpectedIssuer(); // the issuer may have been set after campaign()
                return route.send(batch, batchId);
            }
            byte[] body = Wire.encodeRecord(batch, batchId);
            // a campaign in rounds counts the current round's reports in that round's campaign
            Object round = document.get("submit_to");
            String url = round != null ? serverUrl + "/api/campaigns/" + Relay.encode(String.valueOf(round)) + "/batches/" + batchId
                : campaignPath("/batches/" + batchId);
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("Content-Type", "application/octet-stream");
            String target = round != null ? String.valueOf(round) : campaignId; // a round's campaign counts its batch
            return Connection.json(connection.request("PUT", url, body, headers, null, false, answer -> Connection.ackProblem(answer, "batch_id", batchId, target, batch.length())));
        } catch (ServiceError error) {
            throw error.withBatch(batch, batchId); // resend with send(batch, batchId)
        }
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
        return route == null ? 0 : route.tokens(count);
    }

    /** {@link #prepareTokens} for {@code reports} new reports and every report drawn but not yet sent without a token bound to it. */
    private void prepareFor(int reports) {
        campaign();
        checkExpectedIssuer();
        if (route != null) route.tokensFor(reports, pending.size(), unsent);
    }

    /** Seconds a {@code Retry-After} header asks for (delta-seconds or an HTTP date), null if absent or unreadable. */
    public static Double retryAfterSeconds(String value) {
        return Connection.retryAfterSeconds(value);
    }

    /**
     * The wait before a retry (ms), jittered so that many clients refused together do not return together: a server's
     * Retry-After is honoured (never earlier, up to 50% later, but never past {@link #MAX_RETRY_AFTER} seconds, jitter
     * included), else the backoff is spread over its upper half.
     */
    public static double retryDelayMs(double backoffMs, Double askedSeconds) {
        return Connection.retryDelayMs(backoffMs, askedSeconds);
    }
}
