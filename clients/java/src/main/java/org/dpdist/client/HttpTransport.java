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
     * The largest answer body a transport reads, a config or an identity's (4 MiB, the Python client's
     * {@code CONFIG_ANSWER_BYTES}; 16 MiB of a hostile config held 670 MB): a larger one is an
     * {@link IOException} (the client gives up with a {@link ServiceError}), never an {@code OutOfMemoryError} on a small
     * heap.  A config is at most the 1 MiB of the record header that carries it ({@link ReportBound#MAX_HEADER_BYTES})
     * and its answer holds it twice; the service refuses at creation a config whose answer would pass 4 MiB or 524,288
     * JSON values.
     */
    int MAX_ANSWER_BYTES = 4 << 20;
    /**
     * The largest body the {@link Client} reads of an acknowledgement, a refusal (4xx/5xx), an issuer's key or token
     * answer (1 MiB, as the Python client's {@code ACK_ANSWER_BYTES}: each is a few hundred bytes); a config or an identity
     * is read up to {@link #MAX_ANSWER_BYTES}.  A bound on bytes is no bound on what parsing them holds: the
     * client also refuses, unparsed, JSON that may hold more values than {@link Json#mostValuesWithin} its bound.
     */
    int ACK_ANSWER_BYTES = 1 << 20;
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

    /**
     * As above, a successful answer's body read up to {@code limit} bytes and any other's up to {@link #ACK_ANSWER_BYTES}
     * (an IOException beyond).  The transports of this library stop reading there; this default, for a transport of
     * one's own, reads up to {@link #MAX_ANSWER_BYTES} and then refuses a longer body.
     */
    default Response send(String method, String url, Map<String, String> headers, byte[] body, int limit) throws IOException {
        Response response = send(method, url, headers, body);
        int most = response.ok() ? limit : ACK_ANSWER_BYTES;
        if (response.body != null && response.body.length > most) throw tooLong(url, most);
        return response;
    }

    /** The IOException of an answer of {@code url} longer than {@code limit} bytes. */
    static IOException tooLong(String url, int limit) {
        return new IOException("The answer of " + url + " is longer than " + limit + " bytes (" + (limit == ACK_ANSWER_BYTES ? "HttpTransport.ACK_ANSWER_BYTES"
            : limit == MAX_ANSWER_BYTES ? "HttpTransport.MAX_ANSWER_BYTES" : "the bound of this answer") + "); not read.");
    }

    /** Read {@code stream} whole, up to {@code limit} bytes (an IOException beyond: nothing more is read). */
    static byte[] readLimited(InputStream stream, String url, int limit) throws IOException {
        return readLimited(stream, url, limit, null);
    }

    /** {@link #readLimited(InputStream, String, int)}, {@code deadline} (if any) checked after every read. */
    static byte[] readLimited(InputStream stream, String url, int limit, AnswerDeadline deadline) throws IOException {
        try (InputStream in = stream) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                if (out.size() + read > limit) throw tooLong(url, limit);
                out.write(buffer, 0, read);
                if (deadline != null) deadline.check(url);
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
