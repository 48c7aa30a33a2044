package org.dpdist.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * How the {@link Client} talks HTTP: one request, one answer, or an IOException when the server cannot be reached (the
 * client retries).  {@link JdkHttpTransport} uses {@code java.net.http} (the JDK's client, the default);
 * {@link UrlConnectionTransport} uses {@code HttpURLConnection}, which Android has (its runtime has no java.net.http).
 */
public interface HttpTransport {
    /**
     * The largest answer body a transport reads (16 MiB: a config, a client view, an identity document or an
     * acknowledgement is far smaller): a larger one is an {@link IOException} (the client retries, then gives up with a
     * {@link ServiceError}), never an {@code OutOfMemoryError} on a small heap.
     */
    int MAX_ANSWER_BYTES = 16 << 20;
    /** A server's answer: its status, its headers (names in lower case) and its body. */
    final class Response {
        public final int status;
        public final Map<String, List<String>> headers;
        public final byte[] body;

        public Response(int status, Map<String, List<String>> headers, byte[] body) {
            this.status = status;
            Map<String, List<String>> lower = new TreeMap<>();
            for (Map.Entry<String, List<String>> entry : headers.entrySet()) {
                if (entry.getKey() != null) lower.put(entry.getKey().toLowerCase(Locale.ROOT), entry.getValue());
            }
            this.headers = Collections.unmodifiableMap(lower);
            this.body = body;
        }

        /** The first value of header {@code name}, or null. */
        public String header(String name) {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null || values.isEmpty() ? null : values.get(0);
        }

        public boolean ok() {
            return status >= 200 && status < 300;
        }
    }

    /**
     * An answer whose {@code Location} header holds a value that is no valid header value (a raw control byte), which the
     * platform's HTTP stack refused before giving the answer ({@link JdkHttpTransport}: the JDK's "Invalid header value
     * \"Location: ...\""): the {@link Client} refuses it at once as {@code redirected}, not as a network error retried.
     */
    final class InvalidLocation extends IOException {
        private static final long serialVersionUID = 1L;
        /** The Location's value as the platform quoted it, raw: the {@link Client} shows it escaped, cut and masked. */
        public final String location;

        public InvalidLocation(String location, IOException refusal) {
            super("an answer whose Location is not a valid header value", refusal);
            this.location = location;
        }
    }

    /** Send {@code method} to {@code url} with {@code headers} and {@code body} (null: none). */
    Response send(String method, String url, Map<String, String> headers, byte[] body) throws IOException;

    /** Read {@code stream} whole, up to {@link #MAX_ANSWER_BYTES} (an IOException beyond: nothing more is read). */
    static byte[] readLimited(InputStream stream, String url) throws IOException {
        try (InputStream in = stream) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                if (out.size() + read > MAX_ANSWER_BYTES) {
                    throw new IOException("The answer of " + url + " is longer than " + MAX_ANSWER_BYTES + " bytes (HttpTransport.MAX_ANSWER_BYTES); not read.");
                }
                out.write(buffer, 0, read);
            }
            return out.toByteArray();
        }
    }

    /** {@link JdkHttpTransport} where the platform has {@code java.net.http} (a JDK), else {@link UrlConnectionTransport} (Android). */
    static HttpTransport platformDefault() {
        try {
            Class.forName("java.net.http.HttpClient");
        } catch (ClassNotFoundException | LinkageError none) {
            return new UrlConnectionTransport();
        }
        return new JdkHttpTransport();
    }
}
