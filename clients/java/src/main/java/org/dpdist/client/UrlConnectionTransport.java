package org.dpdist.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.Map;

/** {@link HttpTransport} on {@code HttpURLConnection}: the HTTP client an Android app has (no java.net.http there). */
public final class UrlConnectionTransport implements HttpTransport {
    private final int timeoutMillis;

    /**
     * A transport whose connections and reads each wait at most {@code timeoutMillis}, and whose whole answer (its head
     * and its body) is within {@code timeoutMillis} of the request's start: a trickled answer ends there.
     */
    public UrlConnectionTransport(int timeoutMillis) {
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
        // its timeouts are per read: the whole answer has this deadline too, past which the connection is closed
        try (AnswerDeadline deadline = new AnswerDeadline(timeoutMillis, timeoutMillis, connection::disconnect)) {
            try {
                return exchange(connection, method, url, headers, body, limit, deadline);
            } catch (IOException failure) {
                throw deadline.explained(failure, url);
            }
        } finally {
            connection.disconnect();
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
        InputStream stream = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        byte[] answer = stream == null ? new byte[0] : HttpTransport.readLimited(stream, url,
            status >= 200 && status < 300 ? limit : ACK_ANSWER_BYTES, deadline);
        long declared = connection.getContentLengthLong(); // a body the server closed short of it ends without an error here
        if (declared >= 0 && connection.getContentEncoding() == null && answer.length < declared) {
            throw new IOException("the answer of " + url + " was cut short: " + answer.length + " of its " + declared + " bytes");
        }
        return new Response(status, connection.getHeaderFields(), answer);
    }

}
