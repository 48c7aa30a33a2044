package org.dpdist.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The requests of a {@link Client} to its server, the relay and the issuer (the JavaScript client's {@code
 * src/connection.js}, Python's {@code dpdist.client._connection}): each retried with the same bytes (network errors,
 * 408, 425, 429, 5xx, 409 campaign_not_open and campaign_changed), a redirect or a refusal refused by name with what it
 * says shown escaped and masked, and a success that acknowledges something else retried as a failure.
 */
final class Connection {
    private static final Set<Integer> RETRYABLE_STATUS = new HashSet<>(Arrays.asList(408, 425, 429, 500, 502, 503, 504));
    /** 409 refusals worth retrying: the campaign is between states, or was deleted and created again meanwhile. */
    private static final Set<String> RETRYABLE_CONFLICTS = new HashSet<>(Arrays.asList("campaign_not_open", "campaign_changed"));

    private final String serverUrl;
    private final Client.Options options;
    private final HttpTransport transport;
    private final Supplier<String> credential;

    /** The connection of a client of {@code serverUrl} with {@code options}; {@code credential}: its issuer credential now (masked). */
    Connection(String serverUrl, Client.Options options, Supplier<String> credential) {
        this.serverUrl = serverUrl;
        this.options = options;
        this.transport = options.transport != null ? options.transport : HttpTransport.platformDefault();
        this.credential = credential;
    }

    /** Seconds a {@code Retry-After} header asks for (delta-seconds or an HTTP date), null if absent or unreadable. */
    static Double retryAfterSeconds(String value) {
        if (value == null) return null;
        String text = value.trim();
        if (text.matches("[0-9]+")) return Math.min(text.length() > 9 ? Client.MAX_RETRY_AFTER : Double.parseDouble(text), Client.MAX_RETRY_AFTER);
        try {
            long moment = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
            return Math.min(Math.max(0, (moment - System.currentTimeMillis()) / 1000.0), Client.MAX_RETRY_AFTER);
        } catch (DateTimeParseException unreadable) {
            return null;
        }
    }

    /**
     * The wait before a retry (ms), jittered so that many clients refused together do not return together: a server's
     * Retry-After is honoured (never earlier, up to 50% later, but never past {@link #Client.MAX_RETRY_AFTER} seconds, jitter
     * included), else the backoff is spread over its upper half.
     */
    static double retryDelayMs(double backoffMs, Double askedSeconds) {
        double jitter = ThreadLocalRandom.current().nextDouble(); // timing only: nothing private depends on it
        if (askedSeconds != null) {
            double asked = Math.min(askedSeconds, Client.MAX_RETRY_AFTER) * 1000;
            return Math.max(asked, Math.min(asked * (1 + 0.5 * jitter), Client.MAX_RETRY_AFTER * 1000.0));
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

    static Map<String, Object> json(HttpTransport.Response response) {
        return json(response, HttpTransport.ACK_ANSWER_BYTES);
    }

    /**
     * The JSON object of a successful answer read within {@code limit} bytes, else {@code bad_answer}: JSON that may hold
     * more values than {@link Json#mostValuesWithin} {@code limit} is not parsed.
     */
    static Map<String, Object> json(HttpTransport.Response response, int limit) {
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
     * {@code authorization} and never this client's submit token), retried as {@link Client#send} describes.
     */
    HttpTransport.Response request(String method, String url, byte[] body, Map<String, String> headers, String authorization, boolean other) {
        return request(method, url, body, headers, authorization, other, null);
    }

    /**
     * As above; {@code acknowledges} (null: any success) says what a successful answer must be ({@link #ackProblem}): one
     * that is not is retried like a failure, with the same bytes, and the last failure is then {@code wrong_ack}.
     */
    HttpTransport.Response request(String method, String url, byte[] body, Map<String, String> headers, String authorization, boolean other,
                                           Function<HttpTransport.Response, String> acknowledges) {
        return request(method, url, body, headers, authorization, other, acknowledges, HttpTransport.ACK_ANSWER_BYTES);
    }

    /**
     * As above, a successful answer read up to {@code limit} bytes (a config, an identity: {@link HttpTransport#MAX_ANSWER_BYTES};
     * anything else, and any refusal: {@link HttpTransport#ACK_ANSWER_BYTES}).
     */
    HttpTransport.Response request(String method, String url, byte[] body, Map<String, String> headers, String authorization, boolean other,
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
        for (String held : new String[] {options.token, credential.get()}) if (held != null && !held.isEmpty()) secrets.add(held);
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
