package org.dpdist.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A scripted HTTP server on 127.0.0.1 for the client's tests (the JDK's httpserver): it records every request and
 * answers each with what {@code answer} returns for it.  Closed by the test ({@link #close}).
 */
public final class FakeServer implements AutoCloseable {
    /** One request as the server received it. */
    public static final class Request {
        public final String method;
        public final String path;
        public final Map<String, String> headers;
        public final byte[] body;

        Request(String method, String path, Map<String, String> headers, byte[] body) {
            this.method = method;
            this.path = path;
            this.headers = headers;
            this.body = body;
        }

        public String header(String name) {
            return headers.get(name.toLowerCase(java.util.Locale.ROOT));
        }
    }

    /** An answer: a status, headers, a body. */
    public static final class Answer {
        final int status;
        final Map<String, String> headers = new LinkedHashMap<>();
        final byte[] body;

        public Answer(int status, String contentType, byte[] body) {
            this.status = status;
            this.body = body;
            headers.put("Content-Type", contentType);
        }

        /** A JSON answer. */
        public static Answer json(int status, Object value) {
            return new Answer(status, "application/json", Bytes.utf8(Json.write(value)));
        }

        public Answer header(String name, String value) {
            headers.put(name, value);
            return this;
        }
    }

    private final HttpServer server;
    public final List<Request> requests = Collections.synchronizedList(new ArrayList<>());

    public FakeServer(Function<Request, Answer> answer) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> handle(exchange, answer));
        server.start();
    }

    private void handle(HttpExchange exchange, Function<Request, Answer> answer) throws IOException {
        try (InputStream in = exchange.getRequestBody(); ByteArrayOutputStream body = new ByteArrayOutputStream()) {
            byte[] buffer = new byte[8192];
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) body.write(buffer, 0, read);
            Map<String, String> headers = new LinkedHashMap<>();
            for (Map.Entry<String, List<String>> header : exchange.getRequestHeaders().entrySet()) {
                headers.put(header.getKey().toLowerCase(java.util.Locale.ROOT), header.getValue().get(0));
            }
            Request request = new Request(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(), headers, body.toByteArray());
            requests.add(request);
            Answer reply;
            try {
                reply = answer.apply(request);
            } catch (RuntimeException error) {
                reply = Answer.json(500, Collections.singletonMap("error", String.valueOf(error)));
            }
            if (reply == null) { // drop the connection: the client sees a network error
                exchange.close();
                return;
            }
            for (Map.Entry<String, String> header : reply.headers.entrySet()) exchange.getResponseHeaders().add(header.getKey(), header.getValue());
            exchange.sendResponseHeaders(reply.status, reply.body.length == 0 ? -1 : reply.body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(reply.body);
            }
        }
    }

    /** The server's URL (http://127.0.0.1:port). */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The requests made to {@code path}. */
    public List<Request> to(String path) {
        List<Request> out = new ArrayList<>();
        synchronized (requests) {
            for (Request request : requests) if (request.path.equals(path)) out.add(request);
        }
        return out;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
