package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The transports under a hostile or odd server: a 401 to a PUT is the server's answer; the whole answer ends
 * at the timeout even when a read is under way, and one slow server delays no other request's deadline; a bad
 * Content-Length is a bad answer, not a bad URL; an unasked Content-Encoding or an interim 1xx status is no answer; no
 * abort that cannot start a thread ends the deadlines, nor does a closed deadline hold its connection.
 * Servers on 127.0.0.1, each connection held at most 10 s.  The deadline tests measure the time a send takes: a bound of
 * the timeout plus 0.8 s, against the 2x timeout of the fault.
 */
class TransportsTest {
    /** What a scripted server does with one connection. */
    interface Script {
        void serve(Socket connection, InputStream in, OutputStream out) throws Exception;
    }

    /** A server on 127.0.0.1 running {@code script} on each connection, on a daemon thread of its own. */
    static final class Scripted implements AutoCloseable {
        final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));

        Scripted(Script script) throws IOException {
            Thread acceptor = new Thread(() -> {
                while (!socket.isClosed()) {
                    try {
                        Socket connection = socket.accept();
                        Thread one = new Thread(() -> {
                            try (Socket held = connection) {
                                held.setSoTimeout(10_000);
                                script.serve(held, held.getInputStream(), held.getOutputStream());
                            } catch (Exception ended) {
                                // the client closed it, or the test ended
                            }
                        });
                        one.setDaemon(true);
                        one.start();
                    } catch (IOException closed) {
                        // the test ended
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
        }

        String url(String path) {
            return "http://127.0.0.1:" + socket.getLocalPort() + path;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** The request's head and body, read whole (its Content-Length). */
    static String request(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString("ISO-8859-1").endsWith("\r\n\r\n")) {
            int one = in.read();
            if (one < 0) throw new IOException("the request ended in its head");
            head.write(one);
        }
        String text = head.toString("ISO-8859-1");
        long length = 0;
        for (String line : text.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) length = Long.parseLong(line.substring(15).trim());
        }
        for (long read = 0; read < length; read++) {
            if (in.read() < 0) throw new IOException("the request ended in its body");
        }
        return text;
    }

    static void send(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** Sends {@code head}, then a space every {@code gapMillis} ms for at most 10 s. */
    static Script trickling(String head, long gapMillis) {
        return (connection, in, out) -> {
            request(in);
            send(out, head);
            for (long start = System.nanoTime(); System.nanoTime() - start < 10_000_000_000L; ) {
                Thread.sleep(gapMillis);
                send(out, " ");
            }
        };
    }

    static final String REFUSAL = "{\"error\": \"bad_token\", \"detail\": \"no\"}";

    @Test
    void aRefusalOfAPutThatAsksToAuthenticateIsTheServersAnswerNotACutBody() throws Exception {
        // HttpURLConnection gives no error stream for a 401/407 to a streamed body (it cannot resend it): the status, empty
        for (String status : new String[] {"401 Unauthorized\r\nWWW-Authenticate: Bearer", "407 Proxy Authentication Required\r\nProxy-Authenticate: Basic"}) {
            try (Scripted server = new Scripted((connection, in, out) -> {
                request(in);
                send(out, "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " + REFUSAL.length()
                    + "\r\nConnection: close\r\n\r\n" + REFUSAL);
            })) {
                HttpTransport.Response answer = new UrlConnectionTransport(5000).send("PUT", server.url("/api/campaigns/c/batches/b"),
                    Collections.singletonMap("Content-Type", "application/json"), "{\"reports\": []}".getBytes(StandardCharsets.US_ASCII));
                assertEquals(Integer.parseInt(status.substring(0, 3)), answer.status);
                assertTrue(answer.body.length == 0 || new String(answer.body, StandardCharsets.UTF_8).equals(REFUSAL), answer.body.length + " bytes");
            }
        }
    }

    static long millisOf(Future<?> finished, long started) throws Exception {
        try {
            finished.get();
        } catch (java.util.concurrent.ExecutionException expected) {
            assertTrue(expected.getCause() instanceof IOException, String.valueOf(expected.getCause()));
            String said = expected.getCause().getMessage();
            assertTrue(said.contains("not whole within") || said.contains("timed out"), said);
        }
        return (System.nanoTime() - started) / 1_000_000;
    }

    @Test
    void aBodyTrickledJustWithinTheReadTimeoutEndsAtTheDeadlineAndDelaysNoOtherDeadline() throws Exception {
        // A: a byte every 2.9 s of a 3 s timeout (each read within it); B, 2.5 s later, a body ended by the deadline
        // timer alone (the JDK transport's), due at 3.5 s while A's read is under way past A's deadline (3 s)
        ExecutorService callers = Executors.newFixedThreadPool(2);
        String head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
        try (Scripted slow = new Scripted(trickling(head, 2900)); Scripted other = new Scripted(trickling(head, 100))) {
            long startedA = System.nanoTime();
            Future<?> a = callers.submit(() -> new UrlConnectionTransport(3000).send("GET", slow.url("/a"), Collections.emptyMap(), null));
            Thread.sleep(2500);
            long startedB = System.nanoTime();
            Future<?> b = callers.submit(() -> new JdkHttpTransport(Duration.ofMillis(1000)).send("GET", other.url("/b"), Collections.emptyMap(), null));
            long millisB = millisOf(b, startedB);
            long millisA = millisOf(a, startedA);
            String took = "A took " + millisA + " ms of its 3000, B " + millisB + " ms of its 1000";
            assertTrue(millisA < 3800 && millisB < 1800, took);
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void aRequestBodyTheServerDoesNotReadEndsAtTheDeadline() throws Exception {
        try (Scripted server = new Scripted((connection, in, out) -> Thread.sleep(10_000))) {
            byte[] body = new byte[16 << 20];
            long started = System.nanoTime();
            IOException error = assertThrows(IOException.class, () -> new UrlConnectionTransport(1500).send("PUT", server.url("/put"),
                Collections.emptyMap(), body));
            long millis = (System.nanoTime() - started) / 1_000_000;
            String said = error.getMessage() + " " + error.getCause();
            assertTrue(said.contains("not whole within 1500 ms") || said.contains("timed out"), said);
            assertTrue(millis < 2300, "took " + millis + " ms of its 1500");
        }
    }

    @Test
    void aContentLengthTheJdkCannotParseIsABadAnswerNotABadUrl() throws Exception {
        try (Scripted server = new Scripted((connection, in, out) -> {
            request(in);
            send(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8, 8\r\nConnection: close\r\n\r\n{\"a\": 1}");
        })) {
            IOException error = assertThrows(IOException.class, () -> new JdkHttpTransport(Duration.ofMillis(5000)).send("PUT",
                server.url("/api/campaigns/c/batches/b"), Collections.emptyMap(), new byte[] {'{', '}'}));
            assertTrue(error.getMessage().contains("not one this client can read") && error.getMessage().contains("8, 8"), error.getMessage());
        }
    }

    @Test
    void aBodyInAnUnaskedContentEncodingOrAfterAnInterimStatusIsNoAnswer() throws Exception {
        String[][] answers = {
            {"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"a\": 1}", "cut short: 8 of its 100"},
            {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{\"a\": 1}", "longer than its Content-Length: 8 of 5"},
            {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 8\r\nConnection: close\r\n\r\n{\"a\": 1}", "Content-Encoding \"gzip\""},
            {"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\n{\"a\": 1}",
                "interim status 103"},
        };
        for (String[] answer : answers) {
            try (Scripted server = new Scripted((connection, in, out) -> {
                request(in);
                send(out, answer[0]);
            })) {
                HttpTransport.Response read;
                try {
                    read = new UrlConnectionTransport(5000).send("GET", server.url("/api/campaigns/c/config"), Collections.emptyMap(), null);
                } catch (IOException error) {
                    assertTrue(String.valueOf(error.getMessage()).contains(answer[1]), error.getMessage());
                    continue;
                }
                // a JDK whose HttpURLConnection skips the interim status itself (JDK 25; JDK 17 gives the 103, the final
                // answer's raw head as its body) gives the final answer: that alone is no refusal
                assertTrue(answer[1].startsWith("interim") && read.status == 200 && new String(read.body, StandardCharsets.UTF_8).equals("{\"a\": 1}"),
                    "the answer " + read.status + " " + new String(read.body, StandardCharsets.UTF_8));
            }
        }
    }

    static final String SMALL = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";

    @Test
    void anAbortWhoseThreadCannotStartEndsItsAnswerAndLeavesEveryLaterDeadlineAndAnswer() throws Exception {
        // the abort's thread failed to start on the shared java.util.Timer, which died for the whole process
        // ("Timer already cancelled" for every later request); a stalled body here is ended by its abort alone (JDK)
        Executor pool = AnswerDeadline.aborts;
        AnswerDeadline.aborts = abort -> {
            throw new OutOfMemoryError("unable to create native thread");
        };
        try (Scripted stalled = new Scripted(trickling("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", 20_000));
             Scripted fine = new Scripted((connection, in, out) -> {
                 request(in);
                 send(out, SMALL);
             })) {
            for (int round = 0; round < 3; round++) {
                for (HttpTransport transport : new HttpTransport[] {new UrlConnectionTransport(400), new JdkHttpTransport(Duration.ofMillis(400))}) {
                    long started = System.nanoTime();
                    IOException error = assertThrows(IOException.class, () -> transport.send("GET", stalled.url("/s"), Collections.emptyMap(), null));
                    long millis = (System.nanoTime() - started) / 1_000_000;
                    String said = error.getMessage() + " " + error.getCause();
                    assertTrue(said.contains("not whole within 400 ms") || said.contains("timed out"), said);
                    assertTrue(millis < 2400, transport.getClass().getSimpleName() + " took " + millis + " ms of its 400");
                    assertEquals(200, transport.send("GET", fine.url("/ok"), Collections.emptyMap(), null).status);
                }
            }
        } finally {
            AnswerDeadline.aborts = pool;
        }
    }

    @Test
    void anAnswerBodyIsGatheredInOneArrayOfItsDeclaredLengthAndRefusedPastItsLimit() throws Exception {
        // a ByteArrayOutputStream and its final copy held twice the body (a 4 MiB answer needed a 24 MB heap)
        java.util.concurrent.Flow.Subscription idle = new java.util.concurrent.Flow.Subscription() {
            @Override
            public void request(long n) {
            }

            @Override
            public void cancel() {
            }
        };
        for (long declared : new long[] {6, -1, 2}) {
            JdkAnswerBody body = new JdkAnswerBody(10, "http://x/a", declared);
            body.onSubscribe(idle);
            body.onNext(java.util.Arrays.asList(java.nio.ByteBuffer.wrap(new byte[] {'a', 'b', 'c'}), java.nio.ByteBuffer.wrap(new byte[] {'d', 'e', 'f'})));
            body.onComplete();
            assertEquals("abcdef", new String(body.getBody().toCompletableFuture().get(), StandardCharsets.US_ASCII), "declared " + declared);
        }
        // an array taken at the declared length once 8 KiB had arrived held 4 MiB for 8 KiB sent; it grows
        // to at most twice what arrived, and a body of its declared length ends in an array of that length
        JdkAnswerBody declared = new JdkAnswerBody(4 << 20, "http://x/a", 4 << 20);
        declared.onSubscribe(idle);
        declared.onNext(Collections.singletonList(java.nio.ByteBuffer.wrap(new byte[8193])));
        assertTrue(declared.capacity() <= 2 * 8193, "held " + declared.capacity() + " bytes for 8193 received");
        declared.onNext(Collections.singletonList(java.nio.ByteBuffer.wrap(new byte[(512 << 10) - 8194])));
        assertTrue(declared.capacity() <= 2 * (512 << 10), "held " + declared.capacity() + " bytes for 512 KiB - 1");
        declared.onNext(Collections.singletonList(java.nio.ByteBuffer.wrap(new byte[1])));
        assertEquals(4 << 20, declared.capacity()); // an eighth: the declared length, at most 8 times what arrived
        JdkAnswerBody whole = new JdkAnswerBody(1 << 20, "http://x/a", 20_000);
        whole.onSubscribe(idle);
        byte[] sent = new byte[20_000];
        new java.util.Random(5).nextBytes(sent);
        for (int start = 0; start < sent.length; start += 7_000) {
            whole.onNext(Collections.singletonList(java.nio.ByteBuffer.wrap(sent, start, Math.min(7_000, sent.length - start))));
        }
        assertEquals(20_000, whole.capacity());
        whole.onComplete();
        assertTrue(java.util.Arrays.equals(sent, whole.getBody().toCompletableFuture().get()));
        // doubling up to the declared length held 6 MiB for a 4 MiB answer (a config failed at -Xmx16m): the
        // array takes the declared length once an eighth of it arrived, its copy then holding an eighth more
        JdkAnswerBody honest = new JdkAnswerBody(4 << 20, "http://x/a", 4 << 20);
        honest.onSubscribe(idle);
        int received = 0;
        while (received < (4 << 20)) {
            int before = honest.capacity();
            honest.onNext(Collections.singletonList(java.nio.ByteBuffer.wrap(new byte[64 << 10])));
            received += 64 << 10;
            if (honest.capacity() != before) {
                assertTrue(before + honest.capacity() <= (4 << 20) + (4 << 20) / 8,
                    "a growth from " + before + " to " + honest.capacity() + " bytes");
            }
        }
        assertEquals(4 << 20, honest.capacity());
        JdkAnswerBody over = new JdkAnswerBody(4, "http://x/a", -1);
        over.onSubscribe(idle);
        over.onNext(Collections.singletonList(java.nio.ByteBuffer.wrap(new byte[] {'a', 'b', 'c', 'd', 'e'})));
        java.util.concurrent.ExecutionException refused = assertThrows(java.util.concurrent.ExecutionException.class,
            () -> over.getBody().toCompletableFuture().get());
        assertTrue(refused.getCause().getMessage().contains("longer than 4 bytes"), refused.getCause().getMessage());
    }

    @Test
    void anAbortThatMayBlockAndNoThreadCanTakeHoldsNeitherTheCallerNorTheScheduler() throws Exception {
        // CI's runs: with no abort thread, HttpURLConnection's disconnect ran on the scheduler's thread, then on the waiting
        // caller's, and waited there for the JDK's keep-alive cleaner (5 s): 400 ms deadlines ended after 5.0 and 5.4 s
        Executor pool = AnswerDeadline.aborts;
        AnswerDeadline.aborts = abort -> {
            throw new OutOfMemoryError("unable to create native thread");
        };
        java.util.concurrent.CompletableFuture<String> never = new java.util.concurrent.CompletableFuture<>();
        try (AnswerDeadline blocking = new AnswerDeadline(300, 300, true, () -> sleep(4000));
             AnswerDeadline other = new AnswerDeadline(500, 500, false, () -> never.complete("aborted"))) {
            long started = System.nanoTime();
            IOException error = assertThrows(IOException.class, () -> blocking.await(new java.util.concurrent.CompletableFuture<String>(), "http://x/a"));
            long millis = (System.nanoTime() - started) / 1_000_000;
            assertTrue(String.valueOf(error.getMessage()).contains("not whole within 300 ms"), error.getMessage());
            assertTrue(millis < 1500, "the caller waited " + millis + " ms of its 300");
            assertEquals("aborted", never.get(1500, java.util.concurrent.TimeUnit.MILLISECONDS)); // the scheduler was free at 500 ms
        } finally {
            AnswerDeadline.aborts = pool;
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aJdkExchangeWhoseThreadsCannotStartEndsWithinItsTimeout() throws Exception {
        // under a thread limit the JDK's HttpClient could not start its worker threads: its send waited for them without a
        // bound (no timeout ended it), and its selector thread ended, the client refusing every later request for good
        Executor own = JdkHttpTransport.threads;
        JdkHttpTransport.threads = task -> {
            throw new OutOfMemoryError("unable to create native thread");
        };
        ExecutorService callers = Executors.newSingleThreadExecutor();
        try (Scripted fine = new Scripted((connection, in, out) -> {
            request(in);
            send(out, SMALL);
        })) {
            JdkHttpTransport transport = new JdkHttpTransport(Duration.ofMillis(400));
            for (String method : new String[] {"GET", "PUT", "GET"}) {
                long started = System.nanoTime();
                Future<HttpTransport.Response> sent = callers.submit(() -> transport.send(method, fine.url("/ok"), Collections.emptyMap(),
                    method.equals("PUT") ? new byte[] {'{', '}'} : null));
                String outcome;
                try {
                    outcome = "answer " + sent.get(10, java.util.concurrent.TimeUnit.SECONDS).status;
                } catch (java.util.concurrent.ExecutionException failed) {
                    assertTrue(failed.getCause() instanceof IOException, String.valueOf(failed.getCause()));
                    outcome = "IOException";
                } catch (java.util.concurrent.TimeoutException hung) {
                    throw new AssertionError("no answer and no error within 10 s of a 400 ms timeout", hung);
                }
                long millis = (System.nanoTime() - started) / 1_000_000;
                assertTrue(millis < 2400, method + " took " + millis + " ms of its 400 (" + outcome + ")");
            }
            // the threads can start again: the same transport answers
            JdkHttpTransport.threads = own;
            assertEquals(200, transport.send("GET", fine.url("/ok"), Collections.emptyMap(), null).status);
        } finally {
            JdkHttpTransport.threads = own;
            callers.shutdownNow();
        }
    }

    @Test
    void anInterruptEndsAJdkBodyUnderWayAndIsKept() throws Exception {
        // the JDK's body stream (JDK 17) ignored the interrupt and cleared it: the request went on to its
        // deadline (5 s here) and the caller never learnt it was interrupted
        try (Scripted trickled = new Scripted(trickling("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", 100))) {
            Thread caller = Thread.currentThread();
            Thread interrupter = new Thread(() -> {
                sleep(400);
                caller.interrupt();
            });
            long started = System.nanoTime();
            interrupter.start();
            IOException error = assertThrows(IOException.class, () -> new JdkHttpTransport(Duration.ofMillis(5000)).send("GET", trickled.url("/t"),
                Collections.emptyMap(), null));
            long millis = (System.nanoTime() - started) / 1_000_000;
            boolean kept = Thread.interrupted(); // clears it for the tests after
            interrupter.join();
            assertTrue(String.valueOf(error.getMessage()).contains("interrupted"), String.valueOf(error));
            assertTrue(kept, "the interrupt was lost");
            assertTrue(millis < 2400, "took " + millis + " ms, interrupted at 400 ms of its 5000");
        }
    }

    @Test
    void aClosedDeadlineLeavesTheSchedulerAtOnceWithItsConnection() throws Exception {
        // java.util.Timer kept each cancelled task, and the HttpURLConnection its abort held, until its due
        // time (30 s by default): 5,000 quick requests held 173 MB
        int before = AnswerDeadline.scheduled();
        try (Scripted fine = new Scripted((connection, in, out) -> {
            request(in);
            send(out, SMALL);
        })) {
            HttpTransport[] transports = {new UrlConnectionTransport(30_000), new JdkHttpTransport(Duration.ofSeconds(30))};
            for (int i = 0; i < 100; i++) {
                for (HttpTransport transport : transports) assertEquals(200, transport.send("GET", fine.url("/ok"), Collections.emptyMap(), null).status);
            }
        }
        int after = AnswerDeadline.scheduled();
        assertTrue(after <= before, "the scheduler holds " + after + " deadlines after 200 answered requests, " + before + " before");
    }

    @Test
    void aTimeoutOutsideItsRangeIsRefusedAtConstruction() {
        for (int millis : new int[] {0, -5, Integer.MIN_VALUE}) {
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> new UrlConnectionTransport(millis));
            assertTrue(error.getMessage().contains("'timeoutMillis'") && error.getMessage().contains(">= 1") && error.getMessage().contains("Got " + millis + "."),
                error.getMessage());
        }
        for (Duration timeout : new Duration[] {Duration.ZERO, Duration.ofMillis(-5), Duration.ofNanos(999_999), Duration.ofDays(30), null}) {
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> new JdkHttpTransport(timeout));
            assertTrue(error.getMessage().contains("'timeout'") && error.getMessage().contains("from 1 ms") && error.getMessage().contains("Got " + timeout + "."),
                error.getMessage());
        }
        new UrlConnectionTransport(1);
        new JdkHttpTransport(Duration.ofMillis(1));
        new JdkHttpTransport(Duration.ofMillis(Integer.MAX_VALUE));
    }
}
