package org.dpdist.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/** {@link HttpTransport} on {@code HttpURLConnection}: the HTTP client an Android app has (no java.net.http there). */
public final class UrlConnectionTransport implements HttpTransport {
    /**
     * The threads the exchanges run on, as many as run at once (idle ones end after a minute): the caller waits for its
     * exchange until the deadline only, as a read under way is not ended at once by {@code disconnect}.
     */
    private static final ExecutorService EXCHANGES = Executors.newCachedThreadPool(AnswerDeadline.daemons("dpdist-url-exchange"));
    private final int timeoutMillis;

    /**
     * A transport whose connections and reads each wait at most {@code timeoutMillis}, and whose whole answer (its head
     * and its body) is within {@code timeoutMillis} of the request's start: a trickled answer ends there.  At least 1 ms
     * (HttpURLConnection's 0 would be no timeout), else an {@link InvalidParameterError}.
     */
    public UrlConnectionTransport(int timeoutMillis) {
        if (timeoutMillis < 1) {
            throw new InvalidParameterError("The 'timeoutMillis' argument of UrlConnectionTransport must be an int >= 1 (milliseconds). Got "
                + timeoutMillis + ".");
        }
        this.timeoutMillis = timeoutMillis;
    }

    public UrlConnectionTransport() {
        this(30_000);
    }

    @Override
    public Response send(String method, String url, Map<String, String> headers, byte[] body) throws IOException {
        return send(method, url, headers, body, MAX_ANSWER_BYTES);
    }

    @Override
    public Response send(String method, String url, Map<String, String> headers, byte[] body, int limit) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) new URL(url).openConnection();
        // its timeouts are per read: the whole answer has this deadline too, past which the connection is closed (on a
        // thread of its own: disconnect waits for a read under way) and the caller has its IOException at once
        try (AnswerDeadline deadline = new AnswerDeadline(timeoutMillis, timeoutMillis, true, connection::disconnect)) {
            return deadline.await(started(() -> {
                try {
                    return exchange(connection, method, url, headers, body, limit, deadline);
                } finally {
                    connection.disconnect();
                }
            }, url), url);
        }
    }

    /**
     * {@code exchange} under way on a thread of {@link #EXCHANGES}; an IOException (a network error, retried) when no
     * thread can start (a thread limit: OutOfMemoryError "unable to create native thread").
     */
    private static Future<Response> started(Callable<Response> exchange, String url) throws IOException {
        try {
            return EXCHANGES.submit(exchange);
        } catch (OutOfMemoryError | RejectedExecutionException noThread) {
            throw new IOException("no thread could start for the request to " + url + " (" + noThread + ")", noThread);
        }
    }

    private Response exchange(HttpURLConnection connection, String method, String url, Map<String, String> headers, byte[] body, int limit,
                              AnswerDeadline deadline) throws IOException {
        connection.setRequestMethod(method);
        connection.setInstanceFollowRedirects(false);
        connection.setConnectTimeout(timeoutMillis);
        connection.setReadTimeout(timeoutMillis);
        for (Map.Entry<String, String> header : headers.entrySet()) connection.setRequestProperty(header.getKey(), header.getValue());
        if (body != null) {
            connection.setDoOutput(true);
            connection.setFixedLengthStreamingMode(body.length);
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body);
            }
        }
        int status = connection.getResponseCode();
        deadline.check(url);
        refuseUnasked(connection, url, status, headers);
        // no error stream: a 401/407 to a request with a body (the JDK cannot resend it to authenticate): the answer, empty
        InputStream stream = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        if (stream == null) return new Response(status, connection.getHeaderFields(), new byte[0]);
        byte[] answer = HttpTransport.readLimited(stream, url, status >= 200 && status < 300 ? limit : ACK_ANSWER_BYTES, deadline);
        long declared = connection.getContentLengthLong(); // a body the server closed short of it ends without an error here
        if (declared >= 0 && answer.length < declared) {
            throw new IOException("the answer of " + url + " was cut short: " + answer.length + " of its " + declared + " bytes");
        }
        if (declared >= 0 && answer.length > declared) {
            // JDK 17's HttpURLConnection reads a closing answer to its end: what follows its declared length is no part
            // of it (a 129-byte acknowledgement under Content-Length 109 was taken whole)
            throw new IOException("the answer of " + url + " is longer than its Content-Length: " + answer.length + " of "
                + declared + " bytes");
        }
        return new Response(status, connection.getHeaderFields(), answer);
    }

    /**
     * An IOException (a bad answer, retried) for what HttpURLConnection gives as an answer but is none: an interim
     * status (1xx: 103 Early Hints, whose body would be the final answer's raw head) or a body in a
     * Content-Encoding that {@code headers} did not ask for (it is not decoded: its length is not the answer's).
     * Android's transparent gzip, asked by the platform itself, removes the header it decodes.
     */
    private static void refuseUnasked(HttpURLConnection connection, String url, int status, Map<String, String> headers) throws IOException {
        if (status >= 100 && status < 200) throw new IOException("the answer of " + url + " has the interim status " + status + " and no final one this transport reads");
        String encoding = connection.getContentEncoding();
        if (encoding == null || encoding.trim().equalsIgnoreCase("identity")) return;
        for (String name : headers.keySet()) if (name.equalsIgnoreCase("Accept-Encoding")) return;
        throw new IOException("the answer of " + url + " is in the Content-Encoding " + Json.show(encoding.length() > 64 ? encoding.substring(0, 64) + "..." : encoding)
            + ", which the request did not ask for");
    }

}
