package org.dpdist.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.ProtocolException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * {@link HttpTransport} on {@code java.net.http}, bounded waits.  HTTP/1.1 only: the JDK's default asks a plain-http
 * server to upgrade to HTTP/2 in the request that carries the body, which some servers (uvicorn's h11) answer as if the
 * body were empty.
 */
public final class JdkHttpTransport implements HttpTransport {
    private final HttpClient client;
    private final Duration timeout;

    /**
     * A transport whose connections and whole answers (head and body, from the request's start) each take at most
     * {@code timeout}: from 1 ms to {@link Integer#MAX_VALUE} ms (about 24.8 days), else an {@link InvalidParameterError}.
     */
    public JdkHttpTransport(Duration timeout) {
        if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
            throw new InvalidParameterError("The 'timeout' argument of JdkHttpTransport must be a Duration from 1 ms to " + Integer.MAX_VALUE
                + " ms. Got " + timeout + ".");
        }
        this.timeout = timeout;
        this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER).build();
    }

    /** A transport that waits at most 30 s for a connection or an answer. */
    public JdkHttpTransport() {
        this(Duration.ofSeconds(30));
    }

    @Override
    public Response send(String method, String url, Map<String, String> headers, byte[] body) throws IOException {
        return send(method, url, headers, body, MAX_ANSWER_BYTES);
    }

    @Override
    public Response send(String method, String url, Map<String, String> headers, byte[] body, int limit) throws IOException {
        HttpRequest request;
        try {
            HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
            for (Map.Entry<String, String> header : headers.entrySet()) builder.header(header.getKey(), header.getValue());
            request = builder.build();
        } catch (IllegalArgumentException badUrl) {
            throw new InvalidParameterError("Not a URL this client can request: " + Json.show(url) + " (" + badUrl.getMessage() + ").");
        }
        long started = System.nanoTime();
        try {
            // the request's timeout ends a wait for the head; the body too is within it of the start (closed past it)
            HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
            InputStream stream = response.body();
            long left = timeout.toMillis() - (System.nanoTime() - started) / 1_000_000;
            try (AnswerDeadline deadline = new AnswerDeadline(timeout.toMillis(), left, false, () -> close(stream))) {
                try {
                    return new Response(response.statusCode(), response.headers().map(), HttpTransport.readLimited(stream, url,
                        response.statusCode() >= 200 && response.statusCode() < 300 ? limit : ACK_ANSWER_BYTES));
                } catch (IOException failure) {
                    throw deadline.explained(failure, url);
                }
            }
        } catch (ProtocolException refused) {
            String location = invalidLocation(refused.getMessage());
            if (location != null) throw new HttpTransport.InvalidLocation(location, refused); // a redirect: not retried
            throw refused;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", interrupted);
        } catch (IllegalArgumentException badAnswer) {
            // the request was built: this is the answer's (the JDK's NumberFormatException of a Content-Length "8, 8",
            // attack76 F2), a network error retried as any other bad answer, not the caller's URL
            throw new IOException("the answer of " + url + " is not one this client can read (" + badAnswer.getMessage() + ")", badAnswer);
        }
    }

    /**
     * The value of the {@code Location} header the JDK refused, read from its refusal ({@code Invalid header value
     * "Location: VALUE"}, jdk.internal.net.http.Http1HeaderParser: the name as sent, a valid token), else null: any other
     * refusal stays a network error.
     */
    static String invalidLocation(String message) {
        String opening = "Invalid header value \"";
        String name = "location:";
        if (message == null || !message.startsWith(opening) || !message.endsWith("\"")
            || !message.regionMatches(true, opening.length(), name, 0, name.length())) return null;
        String value = message.substring(opening.length() + name.length(), message.length() - 1);
        return value.startsWith(" ") ? value.substring(1) : value; // the JDK's "NAME: VALUE" (VALUE trimmed already)
    }

    private static void close(InputStream stream) {
        try {
            stream.close();
        } catch (IOException ignored) {
            // the read it ends fails anyway
        }
    }
}
