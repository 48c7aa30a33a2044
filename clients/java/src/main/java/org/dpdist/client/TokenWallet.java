package org.dpdist.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The Privacy Pass tokens a device holds for its relayed campaigns (the JavaScript client's {@code src/tokens.js}): one
 * token per report, obtained from the campaign's issuer before the report is drawn, each with the seed of the HPKE key its
 * report will be sealed with (the token's nonce commits to it: {@link Relay}), then bound to the report's id when it is
 * first sent; the report is sealed once with the seed's key and its sealed bytes kept, so that a resend of the report
 * carries the same token and bytes and no token is spent twice.  Nothing obtained is thrown away: {@code pending} token
 * requests whose answer has not arrived (sent again, the same bytes; each with its seed), {@code spare} {@code {token,
 * seed}} not yet bound to a report, {@code bound} report id -&gt; {@code {token, seed}} with {@code ohttp} (its request's
 * bytes) once encapsulated, until the relay acknowledges every report of its batch (an entry an earlier version kept
 * with {@code dpdist}, the report in dpdist's deprecated envelope, is encapsulated again with its seed).  Kept per campaign under its
 * TokenChallenge (base64url), in the client's {@link Storage} under the key {@code dpdist-tokens} (version 2) when it has
 * one, else in memory; every change reads the storage again first.  A seed, with the sealed bytes, opens the report it
 * seals: the storage is the device's own.
 */
public final class TokenWallet {
    /** The storage key of the device's tokens. */
    public static final String TOKENS_KEY = "dpdist-tokens";
    private static final String FORMAT = "dpdist-tokens";
    private static final long VERSION = 2L; // tokens with their seeds or sealed reports (version 1: bound to no report)

    private final Storage storage;
    private Map<String, Object> memory = emptyState();

    /** The tokens of a device, in {@code storage} (null: in memory). */
    public TokenWallet(Storage storage) {
        this.storage = storage;
    }

    private static Map<String, Object> emptyState() {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("format", FORMAT);
        state.put("version", VERSION);
        state.put("campaigns", new LinkedHashMap<String, Object>());
        return state;
    }

    private Map<String, Object> load() {
        if (storage == null) return memory;
        String text = storage.getItem(TOKENS_KEY);
        if (text == null) return emptyState();
        Map<String, Object> state;
        try {
            state = Json.asObject(Json.parse(text));
        } catch (IllegalArgumentException error) { // (not the parser's message: it names a character of a token)
            throw new IncompatibleStateError("The tokens under '" + TOKENS_KEY + "' are not valid JSON; they were not overwritten.");
        }
        if (state == null || !FORMAT.equals(state.get("format")) || !Json.same(state.get("version"), VERSION) || !Json.isObject(state.get("campaigns"))) {
            throw new IncompatibleStateError("The value under '" + TOKENS_KEY + "' is not a dpdist token store (version " + VERSION + "); it was not overwritten.");
        }
        return state;
    }

    private void save(Map<String, Object> state) {
        if (storage == null) memory = state;
        else storage.setItem(TOKENS_KEY, Json.write(state));
    }

    /** One campaign's entry: its pending requests, spare tokens ({@code {token, seed}}) and bound tokens. */
    public static final class Campaign {
        public final List<Map<String, Object>> pending;
        public final List<Map<String, Object>> spare;
        public final Map<String, Map<String, Object>> bound;

        Campaign(List<Map<String, Object>> pending, List<Map<String, Object>> spare, Map<String, Map<String, Object>> bound) {
            this.pending = pending;
            this.spare = spare;
            this.bound = bound;
        }
    }

    @SuppressWarnings("unchecked")
    private static Campaign campaignOf(Map<String, Object> entry) {
        List<Map<String, Object>> pending = new ArrayList<>();
        for (Object item : Json.asList(entry.get("pending"))) pending.add(new LinkedHashMap<>(Json.asObject(item)));
        List<Map<String, Object>> spare = new ArrayList<>();
        for (Object token : Json.asList(entry.get("spare"))) spare.add(new LinkedHashMap<>(Json.asObject(token)));
        Map<String, Map<String, Object>> bound = new LinkedHashMap<>();
        for (Map.Entry<String, Object> pair : Json.asObject(entry.get("bound")).entrySet()) {
            bound.put(pair.getKey(), new LinkedHashMap<>(Json.asObject(pair.getValue())));
        }
        return new Campaign(pending, spare, bound);
    }

    /** {@code change(campaign)} on the campaign {@code scope}'s entry, saved after. */
    private <T> T update(String scope, Function<Campaign, T> change) {
        Map<String, Object> state = load();
        Map<String, Object> campaigns = Json.asObject(state.get("campaigns"));
        Map<String, Object> entry = Json.asObject(campaigns.get(scope));
        Campaign campaign;
        try {
            campaign = entry == null ? new Campaign(new ArrayList<>(), new ArrayList<>(), new LinkedHashMap<>()) : campaignOf(entry);
        } catch (ClassCastException | NullPointerException damaged) {
            throw new IncompatibleStateError("The tokens of campaign " + scope + " under '" + TOKENS_KEY + "' are damaged; they were not overwritten.");
        }
        T result = change.apply(campaign);
        if (campaign.pending.isEmpty() && campaign.spare.isEmpty() && campaign.bound.isEmpty()) {
            campaigns.remove(scope);
        } else {
            Map<String, Object> saved = new LinkedHashMap<>();
            saved.put("pending", campaign.pending);
            saved.put("spare", campaign.spare);
            saved.put("bound", campaign.bound);
            campaigns.put(scope, saved);
        }
        save(state);
        return result;
    }

    /** The campaign {@code scope}'s pending requests, spare and bound tokens (copies). */
    public Campaign view(String scope) {
        Map<String, Object> entry = Json.asObject(Json.asObject(load().get("campaigns")).get(scope));
        return entry == null ? new Campaign(new ArrayList<>(), new ArrayList<>(), new LinkedHashMap<>()) : campaignOf(entry);
    }

    /** Keep a token request until its answer arrives ({@code {request, tokenInput, inv, seed}}, base64url). */
    public void addPending(String scope, Map<String, Object> pending) {
        update(scope, campaign -> campaign.pending.add(pending));
    }

    /** The request was answered with {@code token}: it becomes spare (false, nothing kept, if it was no longer pending). */
    public boolean finish(String scope, String request, String token) {
        return update(scope, campaign -> {
            for (int i = 0; i < campaign.pending.size(); i++) {
                if (request.equals(campaign.pending.get(i).get("request"))) {
                    Map<String, Object> spare = new LinkedHashMap<>();
                    spare.put("token", token);
                    spare.put("seed", campaign.pending.remove(i).get("seed"));
                    campaign.spare.add(spare);
                    return true;
                }
            }
            return false;
        });
    }

    /** Forget the pending request (its answer was not a token: asking again would get the same answer). */
    public void drop(String scope, String request) {
        update(scope, campaign -> campaign.pending.removeIf(entry -> request.equals(entry.get("request"))));
    }

    /**
     * The token of report {@code reportId}, {@code {token, seed}} with its sealed bytes by envelope once sealed: the one
     * bound to it, else a spare one bound to it now; null if none is left.
     */
    public Map<String, Object> bind(String scope, String reportId) {
        return update(scope, campaign -> {
            if (!campaign.bound.containsKey(reportId)) {
                if (campaign.spare.isEmpty()) return null;
                campaign.bound.put(reportId, campaign.spare.remove(0));
            }
            return new LinkedHashMap<>(campaign.bound.get(reportId));
        });
    }

    /** Report {@code reportId} was encapsulated with its token's seed: its request's bytes {@code sealed} (base64url) are kept. */
    public void seal(String scope, String reportId, String sealed) {
        update(scope, campaign -> campaign.bound.get(reportId).put("ohttp", sealed));
    }

    /** Reports {@code reportIds} were acknowledged (or their tokens refused for good): their tokens are forgotten. */
    public void release(String scope, List<String> reportIds) {
        update(scope, campaign -> {
            for (String reportId : reportIds) campaign.bound.remove(reportId);
            return null;
        });
    }
}
