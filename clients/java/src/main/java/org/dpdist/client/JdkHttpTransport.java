package org.dpdist.client;

import java.io.IOException;
import java.net.ProtocolException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@link HttpTransport} on {@code java.net.http}, bounded waits.  HTTP/1.1 only: the JDK's default asks a plain-http
 * server to upgrade to HTTP/2 in the request that carries the body, which some servers (uvicorn's h11) answer as if the
 * body were empty.
 */
public final class JdkHttpTransport implements HttpTransport {
    /** A body's reading stopped by the deadline (a mark: {@link #read} stops any body given after it). */
    private static final JdkAnswerBody STOPPED = new JdkAnswerBody(0, "", 0);
    /**
     * The threads the exchanges run on, as many as run at once (idle ones end after a minute): the caller waits for its
     * exchange until the deadline only.
     */
    private static final ExecutorService EXCHANGES = Executors.newCachedThreadPool(AnswerDeadline.daemons("dpdist-jdk-exchange"));
    /** The threads the JDK's clients hand their work to (idle ones end after a minute). */
    private static final ExecutorService WORKERS = Executors.newCachedThreadPool(AnswerDeadline.daemons("dpdist-jdk-worker"));
    /** Where the JDK's clients hand their work: package-private so a test can make every hand-over fail. */
    static volatile Executor threads = WORKERS;
    private final Duration timeout;
    private HttpClient client;

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
        try {
            client(); // here, not in the first request's deadline (a first build took 0.3-2.6 s on a loaded machine)
        } catch (IOException noThreadYet) {
            // a thread limit: built at the first request that can start its selector thread
        }
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
        HttpRequest request = request(method, url, headers, body);
        HttpClient used = client(); // built by the constructor (else here, before the deadline starts: a build loads classes)
        AtomicReference<JdkAnswerBody> reading = new AtomicReference<>();
        HttpResponse.BodyHandler<byte[]> bodies = answer -> read(reading, new JdkAnswerBody(answer.statusCode() >= 200 && answer.statusCode() < 300
            ? limit : ACK_ANSWER_BYTES, url, declaredLength(answer)));
        // the request's timeout ends a wait for the head (the JDK's); the deadline the whole exchange, head and body, from
        // its start, run on a thread of EXCHANGES: the caller waits for it so long at most (the JDK's send waited without
        // a bound for threads that could not start), and an interrupt ends the wait (a body's read ignored it)
        try (AnswerDeadline deadline = new AnswerDeadline(timeout.toMillis(), timeout.toMillis(), false, () -> stop(reading))) {
            HttpResponse<byte[]> response = deadline.await(started(() -> used.send(request, bodies), url), url);
            return new Response(response.statusCode(), response.headers().map(), response.body());
        } catch (ProtocolException refused) {
            String location = invalidLocation(refused.getMessage());
            if (location != null) throw new HttpTransport.InvalidLocation(location, refused); // a redirect: not retried
            throw refused;
        } catch (IllegalArgumentException badAnswer) {
            // the request was built: this is the answer's (the JDK's NumberFormatException of a Content-Length "8, 8"),
            // a network error retried as any other bad answer, not the caller's URL
            throw new IOException("the answer of " + url + " is not one this client can read (" + badAnswer.getMessage() + ")", badAnswer);
        } catch (RuntimeException failed) {
            // any other failure of the JDK's exchange: a network error, as the JDK's own send says it
            throw new IOException("the request to " + url + " failed (" + failed + ")", failed);
        } catch (OutOfMemoryError noThread) {
            // the JDK's threads that could not start (a thread limit: "unable to create native thread"), for the client
            // or a stage of the exchange: a network error, retried, on a client built anew (this one may be dead); a full
            // heap is no network error (retried, it allocated again), but it may have ended the client's
            // selector thread too: the next request builds a new one
            forgetClient(used);
            if (!String.valueOf(noThread.getMessage()).contains("native thread")) throw noThread;
            throw new IOException("the request to " + url + " could not go on (" + noThread + ")", noThread);
        } catch (IOException failed) {
            // a full heap the JDK wrapped as an IOException (its threads ran out of heap gathering this answer or another's)
            // is no network error, and may have ended the client's selector thread; once that thread ended,
            // the JDK refuses every request of the client at once, for good: the next request builds a new client
            OutOfMemoryError heap = fullHeap(failed);
            if (heap != null || String.valueOf(failed.getMessage()).contains("selector manager closed")) forgetClient(used);
            if (heap != null) throw heap;
            throw failed;
        }
    }

    /** The OutOfMemoryError of a full heap among the causes of {@code failed} (not a thread that could not start), or null. */
    private static OutOfMemoryError fullHeap(Throwable failed) {
        for (Throwable cause = failed.getCause(); cause != null && cause != failed; cause = cause.getCause()) {
            if (cause instanceof OutOfMemoryError && !String.valueOf(cause.getMessage()).contains("native thread")) {
                return (OutOfMemoryError) cause;
            }
        }
        return null;
    }

    private HttpRequest request(String method, String url, Map<String, String> headers, byte[] body) {
        try {
            HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
            for (Map.Entry<String, String> header : headers.entrySet()) builder.header(header.getKey(), header.getValue());
            return builder.build();
        } catch (IllegalArgumentException badUrl) {
            throw new InvalidParameterError("Not a URL this client can request: " + Json.show(url) + " (" + badUrl.getMessage() + ").");
        }
    }

    /**
     * {@code exchange} under way on a thread of {@link #EXCHANGES}; an IOException (a network error, retried) when no
     * thread can start (a thread limit: OutOfMemoryError "unable to create native thread").  Not the JDK's
     * {@code sendAsync}: its answer is handed over on the common ForkJoinPool, and an app whose tasks keep that pool busy
     * had every request end at its deadline.
     */
    private static Future<HttpResponse<byte[]>> started(Callable<HttpResponse<byte[]>> exchange, String url) throws IOException {
        try {
            return EXCHANGES.submit(exchange);
        } catch (OutOfMemoryError | RejectedExecutionException noThread) {
            throw new IOException("no thread could start for the request to " + url + " (" + noThread + ")", noThread);
        }
    }

    /** The Content-Length an answer declares, or -1 (none, or none this client reads: the JDK refuses the answer then). */
    private static long declaredLength(HttpResponse.ResponseInfo answer) {
        try {
            return answer.headers().firstValueAsLong("content-length").orElse(-1L);
        } catch (NumberFormatException unreadable) {
            return -1L;
        }
    }

    /** The next request builds a new client, unless one replaced {@code dead} already (its threads could not start, or
     * it is dead). */
    private synchronized void forgetClient(HttpClient dead) {
        if (client == dead) client = null;
    }

    /**
     * The JDK's client, built by the constructor, or at the first request that can start its selector thread when a
     * thread limit kept the constructor from it (the constructor, and so the {@link Client}'s, threw an OutOfMemoryError).
     */
    private synchronized HttpClient client() throws IOException {
        if (client == null) {
            HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER);
            try {
                client = builder.executor(JdkHttpTransport::handOver).build();
            } catch (OutOfMemoryError noThread) {
                throw new IOException("no thread could start for the JDK's HTTP client (" + noThread + ")", noThread);
            }
        }
        return client;
    }

    /**
     * Runs {@code work} of a JDK client on a thread of {@link #threads}, or here when none can take it (a thread limit):
     * on JDK 17 the failure escaped the client's selector thread, which ended, and the client with it for good (every
     * later request waited for its timeout, threads free again or not).
     */
    private static void handOver(Runnable work) {
        try {
            threads.execute(work);
        } catch (OutOfMemoryError | RejectedExecutionException noThread) {
            work.run();
        }
    }

    /** {@code body}, the one {@code reading} holds for the deadline to stop, or stopped at once when it passed already. */
    private static JdkAnswerBody read(AtomicReference<JdkAnswerBody> reading, JdkAnswerBody body) {
        if (reading.getAndUpdate(held -> held == STOPPED ? held : body) == STOPPED) body.cancel(new IOException("deadline passed"));
        return body;
    }

    /** Stops the body {@code reading} holds, and any it would hold after (the deadline passed, or the caller was interrupted). */
    private static void stop(AtomicReference<JdkAnswerBody> reading) {
        JdkAnswerBody held = reading.getAndSet(STOPPED);
        if (held != null && held != STOPPED) held.cancel(new IOException("deadline passed"));
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
}
