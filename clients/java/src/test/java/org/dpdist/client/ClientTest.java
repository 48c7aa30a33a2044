package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;

import org.dpdist.client.protocols.Protocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client of dpdist serve against a scripted server (the JavaScript client's client.test.js): one binary record per
 * batch under a fresh batch id; retries with the same bytes and id (network errors, 503, 409 campaign_not_open and
 * campaign_changed), refusals not retried; Retry-After honoured; queued batches kept under their ids; the published
 * client view checked; campaigns in rounds; the ledger charging before it draws and refusing before anything is sent; a
 * storage that cannot save (a full disk) stops the report.
 */
class ClientTest {
    static final String GRR = "{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 8}";

    /** A server of campaign {@code c} with {@code config}, whose batch PUTs are answered by {@code batches} in turn (then 200). */
    static FakeServer server(String config, Function<FakeServer.Request, FakeServer.Answer> batches) throws Exception {
        return new FakeServer(request -> {
            if (request.method.equals("GET") && request.path.equals("/api/campaigns/c/config")) {
                Map<String, Object> document = new LinkedHashMap<>();
                document.put("campaign", "c");
                document.put("state", "open");
                document.put("config", Json.parse(config));
                return FakeServer.Answer.json(200, document);
            }
            if (request.method.equals("PUT") && request.path.startsWith("/api/campaigns/")) return batches.apply(request); // null: dropped
            return FakeServer.Answer.json(404, Collections.singletonMap("error", "not_found"));
        });
    }

    static FakeServer.Answer ack(FakeServer.Request request) {
        Map<String, Object> ack = new LinkedHashMap<>();
        String[] parts = request.path.split("/"); // /api/campaigns/<campaign>/batches/<batch id>: the campaign it was sent to
        ack.put("campaign", parts.length > 3 ? parts[3] : "c");
        ack.put("batch_id", request.path.substring(request.path.lastIndexOf('/') + 1));
        ack.put("accepted", 1);
        ack.put("rejected", new LinkedHashMap<>());
        ack.put("duplicate", false);
        return FakeServer.Answer.json(200, ack);
    }

    /** Answers in turn (null drops the connection), then acks. */
    static Function<FakeServer.Request, FakeServer.Answer> answers(Object... script) {
        ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>(Arrays.asList(script));
        return request -> {
            Object next = queue.poll();
            if (next == null) return ack(request);
            return next == DROP ? null : (FakeServer.Answer) next;
        };
    }

    static final Object DROP = new Object();

    static FakeServer.Answer refusal(int status, String code) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", code);
        body.put("detail", "scripted " + code);
        return FakeServer.Answer.json(status, body);
    }

    static Client.Options fast() {
        return Client.options().withoutLedger().retries(3).retryDelayMs(1).source(new SeededSource(5));
    }

    @Test
    void submitSendsOneBinaryRecordUnderAFreshBatchIdWithTheTokenAndNothingElse() throws Exception {
        try (FakeServer server = server(GRR, ClientTest::ack)) {
            Client client = new Client(server.url() + "/", "c", fast().token("secret"));
            Map<String, Object> ack = client.submit(3);
            List<FakeServer.Request> puts = new ArrayList<>();
            for (FakeServer.Request request : server.requests) if (request.method.equals("PUT")) puts.add(request);
            assertEquals(1, puts.size());
            FakeServer.Request put = puts.get(0);
            String batchId = put.path.substring("/api/campaigns/c/batches/".length());
            assertTrue(batchId.matches("[0-9a-f]{32}") && batchId.equals(ack.get("batch_id")));
            assertEquals("Bearer secret", put.header("Authorization"));
            for (FakeServer.Request get : server.requests) {
                if (get.method.equals("GET")) assertNull(get.header("Authorization")); // the public config: no submit token
            }
            assertEquals("application/octet-stream", put.header("Content-Type"));
            String header = new String(put.body, 14, (int) Bytes.getU32(put.body, 10), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(header.contains("\"file_id\": \"" + batchId + "\"") && header.contains("\"shape\": [1]"), header);
            assertTrue(Json.same(Json.asObject(Json.parse(header)).get("config"), Json.parse(GRR)));
        }
    }

    @Test
    void androidsHttpUrlConnectionTransportSendsAndRetriesAsTheJdkOne() throws Exception {
        try (FakeServer server = server(GRR, answers(refusal(503, "unavailable"), DROP))) {
            Client client = new Client(server.url(), "c", fast().token("secret").transport(new UrlConnectionTransport(10_000)));
            Map<String, Object> ack = client.submit(3);
            List<FakeServer.Request> puts = new ArrayList<>();
            for (FakeServer.Request request : server.requests) if (request.method.equals("PUT")) puts.add(request);
            assertEquals(3, puts.size()); // 503 (its JSON read from the error stream), a dropped connection, then the ack
            for (FakeServer.Request put : puts) assertArrayEquals(puts.get(0).body, put.body);
            assertEquals("Bearer secret", puts.get(2).header("Authorization"));
            assertEquals(puts.get(0).path.substring(puts.get(0).path.lastIndexOf('/') + 1), ack.get("batch_id"));
        }
    }

    @Test
    void aFailedAttemptIsRetriedWithTheSameBytesAndBatchId() throws Exception {
        try (FakeServer server = server(GRR, answers(DROP, refusal(503, "unavailable"), refusal(409, "campaign_not_open"), refusal(409, "campaign_changed")))) {
            Client client = new Client(server.url(), "c", fast().retries(5));
            client.submit(3);
            List<FakeServer.Request> puts = new ArrayList<>();
            for (FakeServer.Request request : server.requests) if (request.method.equals("PUT")) puts.add(request);
            assertEquals(5, puts.size());
            for (FakeServer.Request put : puts) {
                assertEquals(puts.get(0).path, put.path);
                assertArrayEquals(puts.get(0).body, put.body);
            }
        }
    }

    @Test
    void aRefusalIsNotRetriedAndGivingUpCarriesTheBatch() throws Exception {
        try (FakeServer server = server(GRR, answers(refusal(409, "campaign_full")))) {
            Client client = new Client(server.url(), "c", fast());
            ServiceError error = assertThrows(ServiceError.class, () -> client.submit(3));
            assertEquals(409, error.status());
            assertEquals("campaign_full", error.code());
            assertTrue(error.getMessage().contains("HTTP 409 campaign_full"), error.getMessage());
            assertNotNull(error.batch());
            assertEquals(1, server.to("/api/campaigns/c/batches/" + error.batchId()).size());
        }
        try (FakeServer server = server(GRR, request -> refusal(503, "unavailable"))) {
            Client client = new Client(server.url(), "c", fast().retries(2));
            ServiceError error = assertThrows(ServiceError.class, () -> client.submit(3));
            assertTrue(error.getMessage().contains("gave up after 3 attempts"), error.getMessage());
            assertEquals(3, server.to("/api/campaigns/c/batches/" + error.batchId()).size());
        }
    }

    @Test
    void addQueuesReportsAndAFailedFlushKeepsItsBatchIdForTheNext() throws Exception {
        boolean[] down = {true};
        try (FakeServer server = server(GRR, request -> down[0] ? null : ack(request))) {
            Client client = new Client(server.url(), "c", fast().batchSize(3).retries(1));
            assertTrue(client.add(1).isEmpty());
            assertTrue(client.add(2).isEmpty());
            assertThrows(ServiceError.class, () -> client.add(3)); // the third fills the batch: the flush fails
            assertEquals(3, client.unsentReports());
            List<FakeServer.Request> failed = new ArrayList<>(server.requests);
            down[0] = false;
            List<Map<String, Object>> acks = client.flush();
            assertEquals(1, acks.size());
            assertEquals(0, client.unsentReports());
            FakeServer.Request last = server.requests.get(server.requests.size() - 1);
            FakeServer.Request first = null;
            for (FakeServer.Request request : failed) if (request.method.equals("PUT")) first = request;
            assertEquals(first.path, last.path);
            assertArrayEquals(first.body, last.body); // the same bytes: the server counts the batch once
        }
    }

    @Test
    void submitManySendsBatchesOfTheSizeWithDistinctIdsInARandomOrder() throws Exception {
        try (FakeServer server = server("{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": 30.0, \"domain_size\": 8}", ClientTest::ack)) {
            List<Integer> values = new ArrayList<>();
            for (int i = 0; i < 25; i++) values.add(i % 8);
            Collections.sort(values);
            assertEquals(3, new Client(server.url(), "c", fast().batchSize(10)).submitMany(values).size());
            Set<String> ids = new HashSet<>();
            List<Integer> reported = new ArrayList<>();
            for (FakeServer.Request request : server.requests) {
                if (!request.method.equals("PUT")) continue;
                ids.add(request.path);
                int headerBytes = (int) Bytes.getU32(request.body, 10);
                for (int at = 14 + headerBytes; at < request.body.length; at++) reported.add((int) request.body[at]);
            }
            assertEquals(3, ids.size());
            List<Integer> sorted = new ArrayList<>(reported);
            Collections.sort(sorted);
            assertEquals(values, sorted); // epsilon 30: every value kept, and all of them sent
            assertNotEquals(values, reported); // not in the order given (sorted input would give the values away)
        }
    }

    @Test
    void aCampaignOfAnUnsupportedProtocolOrAWeakenedViewIsRefusedBeforeAnythingIsDrawn() throws Exception {
        try (FakeServer server = server("{\"protocol\": \"cp\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 8}", ClientTest::ack)) {
            TracingSource source = new TracingSource(1, false);
            Client client = new Client(server.url(), "c", fast().source(source));
            assertThrows(UnsupportedProtocolError.class, () -> client.submit(3));
            assertTrue(source.calls.isEmpty());
            for (FakeServer.Request request : server.requests) assertEquals("GET", request.method);
        }
        Protocol grr = DpDist.fromConfig(GRR);
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("config", Json.parse(GRR));
        view.put("format", grr.format().describe());
        view.put("design", Json.parse("{\"keep\": 0.99}"));
        try (FakeServer server = new FakeServer(request -> {
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("campaign", "c");
            document.put("state", "open");
            document.put("config", Json.parse(GRR));
            document.put("client_view", view);
            return request.method.equals("GET") ? FakeServer.Answer.json(200, document) : ack(request);
        })) {
            TracingSource source = new TracingSource(1, false);
            Client client = new Client(server.url(), "c", fast().source(source));
            ServiceError error = assertThrows(ServiceError.class, () -> client.submit(3)); // the server's answer refused
            assertEquals("bad_answer", error.code());
            assertTrue(error.getMessage().contains("keep = 0.99"), error.getMessage());
            assertTrue(source.calls.isEmpty());
            for (FakeServer.Request request : server.requests) assertEquals("GET", request.method);
        }
    }

    @Test
    void aConfigAnswerThisClientCannotBuildIsTheServersAnswerRefusedNotTheAppsMistake() throws Exception {
        // a hostile config's parameter out of range or missing was InvalidParameterError, the app's own mistake
        StringBuilder long300k = new StringBuilder("a\\u001b[2J\\u202e");
        for (int i = 0; i < 300_000; i++) long300k.append('x');
        for (String config : new String[] {"{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": -1.0, \"domain_size\": 8}",
                                           "{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": 1.0}",
                                           "{\"protocol\": \"oue\", \"version\": 1, \"epsilon\": 1e308, \"domain_size\": 5}",
                                           "{\"protocol\": \"sw\", \"version\": 1, \"epsilon\": 1.0, \"b\": 1e308}", // was a raw overflow
                                           "{\"protocol\": \"grr\", \"version\": 2, \"epsilon\": 1.0, \"domain_size\": 8}",
                                           "{\"protocol\": \"grr\\u001b]0;pwn\\u0007\\n\", \"version\": 2}", // control characters
                                           "{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": \"" + long300k + "\", \"domain_size\": 8}"}) {
            try (FakeServer server = server(config, ClientTest::ack)) {
                TracingSource source = new TracingSource(1, false);
                Client client = new Client(server.url(), "c", fast().source(source));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submit(3));
                assertEquals("bad_answer", error.code());
                assertTrue(error.getMessage().contains("config answer of campaign 'c'")
                    && error.getMessage().contains("Nothing was drawn or sent"), error.getMessage());
                assertTrue(error.getMessage().length() < 1000
                    && !error.getMessage().matches("(?s).*[\\u0000-\\u001f\\u007f\\u2028\\u2029\\u202e].*"), error.getMessage());
                assertTrue(source.calls.isEmpty());
                for (FakeServer.Request request : server.requests) assertEquals("GET", request.method);
            }
        }
    }

    @Test
    void retryAfterIsHonouredNeverEarlierAndJitteredLater() throws Exception {
        assertEquals(7.0, Client.retryAfterSeconds("7"));
        assertEquals((double) Client.MAX_RETRY_AFTER, Client.retryAfterSeconds("100000"));
        assertNull(Client.retryAfterSeconds("soon"));
        assertNull(Client.retryAfterSeconds(null));
        String later = DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(java.time.ZoneOffset.UTC).plusSeconds(5));
        double seconds = Client.retryAfterSeconds(later);
        assertTrue(seconds >= 3.0 && seconds <= 5.0, String.valueOf(seconds));
        Set<Long> delays = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            double delay = Client.retryDelayMs(1000, null);
            assertTrue(delay >= 500 && delay <= 1000);
            delays.add(Math.round(delay * 1000));
            double asked = Client.retryDelayMs(1000, 4.0);
            assertTrue(asked >= 4000 && asked <= 6000);
            // "at most 60 s" waited up to 90 s (the jitter was added after the cap)
            double capped = Client.retryDelayMs(1000, Client.retryAfterSeconds("31536000"));
            assertTrue(capped <= 60_000 && capped >= 60_000, String.valueOf(capped));
            double near = Client.retryDelayMs(1000, 50.0);
            assertTrue(near >= 50_000 && near <= 60_000, String.valueOf(near));
        }
        assertTrue(delays.size() > 40); // clients refused together spread out
        try (FakeServer server = server(GRR, answers(refusal(503, "unavailable").header("Retry-After", "1")))) {
            Client client = new Client(server.url(), "c", fast());
            long started = System.nanoTime();
            client.submit(3);
            assertTrue(System.nanoTime() - started >= 1_000_000_000L, "retried before the Retry-After");
        }
    }

    /** A campaign in rounds: round {@code round} open, its own campaign r{round}, the rounds' sizes. */
    static FakeServer rounds(int[] open, List<Object> sizes) throws Exception {
        return new FakeServer(request -> {
            if (request.method.equals("GET")) {
                Map<String, Object> rounds = new LinkedHashMap<>();
                rounds.put("round", (long) open[0]);
                rounds.put("round_state", "open");
                rounds.put("sizes", sizes);
                Map<String, Object> config = Json.asObject(Json.parse("{\"protocol\": \"threshold\", \"version\": 1, \"epsilon\": 1.0, \"cuts\": [4], \"grid_size\": 8}"));
                config.put("round", (long) open[0]);
                Map<String, Object> document = new LinkedHashMap<>();
                document.put("campaign", "c");
                document.put("state", "open");
                document.put("config", config);
                document.put("rounds", rounds);
                document.put("submit_to", "c-r" + open[0]);
                return FakeServer.Answer.json(200, document);
            }
            return ack(request);
        });
    }

    @Test
    void aDeviceAnswersTheOneRoundItDrewAndOnlyOnce(@TempDir Path folder) throws Exception {
        int[] open = {1};
        try (FakeServer server = rounds(open, Arrays.asList(0L, 5L, 0L))) { // round 2 has every device
            Client.Options options = Client.options().storage(new FileStorage(folder)).retries(0).retryDelayMs(1);
            ServiceError wait = assertThrows(ServiceError.class, () -> new Client(server.url(), "c", options).submit(0.3));
            assertEquals("wait_for_round", wait.code()); // round 1 open, this device drew round 2: nothing drawn
            open[0] = 2;
            new Client(server.url(), "c", options).submit(0.3);
            assertEquals(1, server.to("/api/campaigns/c-r2/batches/" + lastBatch(server, "c-r2")).size());
            PrivacyBudgetError again = assertThrows(PrivacyBudgetError.class, () -> new Client(server.url(), "c", options).submit(0.7));
            assertTrue(again.getMessage().contains("already answered 'c'"), again.getMessage());
            open[0] = 3; // another device drew round 2 too: round 3 open, its round is over
            Client.Options other = Client.options().storage(new FileStorage(folder.resolve("other"))).retries(0);
            assertEquals("round_over", assertThrows(ServiceError.class, () -> new Client(server.url(), "c", other).submit(0.3)).code());
            assertThrows(InvalidParameterError.class, () -> new Client(server.url(), "c", Client.options().withoutLedger()).submit(0.3));
        }
    }

    static String lastBatch(FakeServer server, String campaign) {
        String prefix = "/api/campaigns/" + campaign + "/batches/";
        String last = null;
        for (FakeServer.Request request : server.requests) if (request.path.startsWith(prefix)) last = request.path.substring(prefix.length());
        return last;
    }

    @Test
    void theLedgerChargesBeforeItDrawsAndRefusesBeforeAnythingIsSent(@TempDir Path folder) throws Exception {
        try (FakeServer server = server(GRR, ClientTest::ack)) {
            Client.Options options = Client.options().storage(new FileStorage(folder)).retries(0);
            Client client = new Client(server.url(), "c", options);
            client.submitMany(Arrays.asList(0, 1, 2, 3, 4, 5, 6, 7, 0, 1)); // epsilon 10: the default budget
            TracingSource source = new TracingSource(3, false);
            Client again = new Client(server.url(), "c", Client.options().storage(new FileStorage(folder)).retries(0).source(source));
            PrivacyBudgetError refused = assertThrows(PrivacyBudgetError.class, () -> again.submit(2));
            assertTrue(refused.getMessage().contains("Nothing was sent") && refused.remaining() < 1e-9, refused.getMessage());
            assertTrue(source.calls.isEmpty(), "drew before refusing: " + source.calls);
            int puts = 0;
            for (FakeServer.Request request : server.requests) if (request.method.equals("PUT")) puts += 1;
            assertEquals(1, puts);
            Ledger ledger = Ledger.fromJson(Json.parse(new String(Files.readAllBytes(folder.resolve("dpdist-ledger.json")), java.nio.charset.StandardCharsets.UTF_8)), null);
            assertEquals(1, ledger.charges().size());
            assertEquals(10L, ledger.charges().get(0).get("reports"));
        }
    }

    @Test
    void theOwnersBudgetInCodeReplacesTheStoredOneSoAnEditedLedgerFileDoesNotRaiseIt(@TempDir Path folder) throws Exception {
        // "budget": 10.0 edited to 1e9 in the file let the device report 50 more times
        try (FakeServer server = server(GRR, ClientTest::ack)) {
            Client.Options options = Client.options().storage(new FileStorage(folder)).retries(0).budget(3.0);
            new Client(server.url(), "c", options).submitMany(Arrays.asList(0, 1, 2)); // epsilon 3: the owner's budget
            Path file = folder.resolve("dpdist-ledger.json");
            String text = new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(text.contains("\"budget\":3.0"), text);
            Files.write(file, text.replace("\"budget\":3.0", "\"budget\":1000000000.0").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            TracingSource source = new TracingSource(3, false);
            Client again = new Client(server.url(), "c", Client.options().storage(new FileStorage(folder)).retries(0).budget(3.0).source(source));
            PrivacyBudgetError refused = assertThrows(PrivacyBudgetError.class, () -> again.submit(2));
            assertTrue(refused.getMessage().contains("budget of 3"), refused.getMessage());
            assertTrue(source.calls.isEmpty(), "drew before refusing: " + source.calls);
            // a stored ledger with charges is not re-read under another accounting
            Client other = new Client(server.url(), "c", Client.options().storage(new FileStorage(folder)).retries(0).accounting("stable"));
            assertThrows(IncompatibleStateError.class, () -> other.submit(2));
            assertThrows(InvalidParameterError.class, () -> Client.options().budget(Double.POSITIVE_INFINITY));
            assertThrows(InvalidParameterError.class, () -> Client.options().accounting("sometimes"));
        }
    }

    @Test
    void anAcknowledgementOfAnotherBatchIsNotTakenAsThisOnes() throws Exception {
        // a 200 naming batch 000...0 was returned as the success of another batch
        Map<String, Object> other = new LinkedHashMap<>();
        other.put("campaign", "c");
        other.put("batch_id", "00000000000000000000000000000000");
        other.put("accepted", 1);
        try (FakeServer server = server(GRR, request -> FakeServer.Answer.json(200, other))) {
            Client client = new Client(server.url(), "c", fast());
            ServiceError error = assertThrows(ServiceError.class, () -> client.submit(3));
            assertEquals("wrong_ack", error.code());
            assertNotNull(error.batch());
            assertTrue(error.batchId().matches("[0-9a-f]{32}") && error.getMessage().contains(error.batchId()), error.getMessage());
        }
    }

    @Test
    void anyOtherSuccessIsRetriedWithTheSameBytesUntilTheServiceAcknowledgesThisBatch() throws Exception {
        // a captive portal's page, a body cut short, JSON without the acknowledgement's fields, another campaign's
        Map<String, Object> otherCampaign = new LinkedHashMap<>();
        otherCampaign.put("campaign", "elsewhere");
        otherCampaign.put("accepted", 1);
        FakeServer.Answer portal = new FakeServer.Answer(200, "text/html", Bytes.utf8("<html>Welcome to the airport Wi-Fi</html>"));
        FakeServer.Answer cut = new FakeServer.Answer(200, "application/json", Bytes.utf8("{\"campaign\": \"c\", \"batch_id\": \""));
        FakeServer.Answer empty = FakeServer.Answer.json(200, new LinkedHashMap<>());
        try (FakeServer server = server(GRR, answers(portal, cut, empty, FakeServer.Answer.json(200, otherCampaign)))) {
            Client client = new Client(server.url(), "c", fast().retries(5));
            Map<String, Object> ack = client.submit(3);
            List<FakeServer.Request> puts = new ArrayList<>();
            for (FakeServer.Request request : server.requests) if (request.method.equals("PUT")) puts.add(request);
            assertEquals(5, puts.size());
            for (FakeServer.Request put : puts) {
                assertEquals(puts.get(0).path, put.path);
                assertArrayEquals(puts.get(0).body, put.body);
            }
            assertEquals(puts.get(0).path.substring(puts.get(0).path.lastIndexOf('/') + 1), ack.get("batch_id"));
        }
        try (FakeServer server = server(GRR, request -> portal)) {
            Client client = new Client(server.url(), "c", fast());
            ServiceError error = assertThrows(ServiceError.class, () -> client.submit(3));
            assertEquals("wrong_ack", error.code());
            assertTrue(error.getMessage().contains("a body that is not JSON") && error.getMessage().contains("the dpdist service"), error.getMessage());
            assertNotNull(error.batch());
        }
    }

    @Test
    void anAcknowledgementCountingMoreReportsThanWereSentIsNone() throws Exception {
        // accepted 1000000 for a batch of 1 report was counted
        java.util.concurrent.atomic.AtomicInteger puts = new java.util.concurrent.atomic.AtomicInteger();
        long[][] counts = {{1000000, 1000000}, {1, 0}, {1, 2}, {0, 1}}; // accepted, n_read; the last: dpdist serve's, a row rejected
        try (FakeServer server = server(GRR, request -> {
            FakeServer.Answer answer = ack(request);
            Map<String, Object> body = new LinkedHashMap<>(Json.asObject(Json.parse(new String(answer.body, java.nio.charset.StandardCharsets.UTF_8))));
            long[] pair = counts[Math.min(puts.getAndIncrement(), counts.length - 1)];
            body.put("accepted", pair[0]);
            body.put("n_read", pair[1]);
            body.put("duplicate", true); // a duplicate's counts are the first time's
            return FakeServer.Answer.json(200, body);
        })) {
            Client client = new Client(server.url(), "c", fast().retries(5));
            Map<String, Object> ack = client.submit(3); // one report
            assertEquals(4, puts.get());
            assertEquals(0L, ((Number) ack.get("accepted")).longValue());
        }
        String tooMany = Connection.ackProblem(new HttpTransport.Response(200, new LinkedHashMap<>(), Bytes.utf8(
            "{\"campaign\": \"c\", \"batch_id\": \"b\", \"accepted\": 4, \"rejected\": {}, \"duplicate\": false}")),
            "batch_id", "b", "c", 3);
        assertTrue(tooMany != null && tooMany.contains("at most the 3 report(s) sent"), tooMany);
    }

    /** A storage that saves nothing: a full disk. */
    static final class FullDisk implements Storage {
        @Override
        public String getItem(String key) {
            return null;
        }

        @Override
        public void setItem(String key, String value) {
            throw new IncompatibleStateError("No space left on device (a test's full disk)");
        }
    }

    @Test
    void aStorageThatCannotSaveTheChargeStopsTheReport() throws Exception {
        try (FakeServer server = server(GRR, ClientTest::ack)) {
            Client client = new Client(server.url(), "c", Client.options().storage(new FullDisk()).retries(0));
            IncompatibleStateError error = assertThrows(IncompatibleStateError.class, () -> client.submit(3));
            assertTrue(error.getMessage().contains("No space left"), error.getMessage());
            for (FakeServer.Request request : server.requests) assertEquals("GET", request.method); // nothing was sent
        }
    }

    @Test
    void aLongitudinalCampaignNeedsStorageAndKeepsItsMemoAcrossClients(@TempDir Path folder) throws Exception {
        String lgrr = "{\"protocol\": \"l-grr\", \"version\": 1, \"epsilon\": 2.0, \"epsilon_1\": 0.5, \"domain_size\": 8}";
        try (FakeServer server = server(lgrr, ClientTest::ack)) {
            InvalidParameterError noStorage = assertThrows(InvalidParameterError.class, () -> new Client(server.url(), "c", Client.options().withoutLedger()).submit(3));
            assertTrue(noStorage.getMessage().contains("'storage' option"), noStorage.getMessage());
            new Client(server.url(), "c", Client.options().storage(new FileStorage(folder))).submit(3);
            Client later = new Client(server.url(), "c", Client.options().storage(new FileStorage(folder)));
            Map<String, Object> memo = later.memo().toJson();
            later.submit(3);
            assertEquals(Json.write(memo.get("memo")), Json.write(later.memo().toJson().get("memo"))); // the same permanent response
            assertEquals(Arrays.asList(3L), later.memo().items());
        }
    }

    @Test
    void fileStorageReplacesAtomicallyForItsOwnerOnlyAndRefusesBadKeys(@TempDir Path folder) throws Exception {
        Path directory = folder.resolve("device");
        FileStorage storage = new FileStorage(directory);
        assertNull(storage.getItem("dpdist-ledger"));
        storage.setItem("dpdist-ledger", "{\"a\": 1}");
        storage.setItem("dpdist-ledger", "{\"a\": 2}");
        assertEquals("{\"a\": 2}", storage.getItem("dpdist-ledger"));
        assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)));
        try (java.util.stream.Stream<Path> files = Files.list(directory)) {
            assertEquals(1, files.filter(path -> path.getFileName().toString().endsWith(".tmp")).count() + 1); // no temporary left
        }
        assertThrows(InvalidParameterError.class, () -> storage.setItem("../escape", "x"));
        directory.toFile().setWritable(false);
        try {
            if (!Files.isWritable(directory)) { // (root writes anyway)
                assertThrows(IncompatibleStateError.class, () -> storage.setItem("dpdist-ledger", "{\"a\": 3}"));
                assertEquals("{\"a\": 2}", storage.getItem("dpdist-ledger"));
            }
        } finally {
            directory.toFile().setWritable(true);
        }
        assertEquals("ok", storage.withLock(() -> storage.withLock(() -> "ok"))); // nested: one lock
        // a write that cannot happen (root writes to read-only folders: here the folder is gone, a file in its place)
        FileStorage lost = new FileStorage(folder.resolve("lost"));
        Files.delete(folder.resolve("lost"));
        Files.write(folder.resolve("lost"), new byte[0]);
        IncompatibleStateError failed = assertThrows(IncompatibleStateError.class, () -> lost.setItem("dpdist-ledger", "{}"));
        assertTrue(failed.getMessage().contains("could not be saved") && failed.getMessage().contains("nothing that needed it was sent"), failed.getMessage());
    }

    @Test
    void fileStorageMakesAnExistingOpenDirectoryOwnerOnlyAndWritesItsFilesForItsOwner(@TempDir Path folder) throws Exception {
        // a 0777 directory was kept 0777 and the ledger (its memo holds the values) written 0644
        Path directory = Files.createDirectory(folder.resolve("open"));
        Files.setPosixFilePermissions(directory, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        FileStorage storage = new FileStorage(directory);
        assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)));
        storage.withLock(() -> {
            storage.setItem("dpdist-ledger", "{\"memo\": {\"3\": 1}}");
            return null;
        });
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(directory.resolve("dpdist-ledger.json"))));
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(directory.resolve(".lock"))));
    }

    @Test
    void bothTransportsRefuseToReadAnAnswerLongerThanTheirCap() throws Exception {
        // a 200 MB config answer ran a small heap out of memory (an Error, not a DPDistError)
        byte[] huge = new byte[HttpTransport.MAX_ANSWER_BYTES + 1];
        java.util.Arrays.fill(huge, (byte) ' ');
        byte[] fits = new byte[HttpTransport.MAX_ANSWER_BYTES];
        try (FakeServer server = new FakeServer(request -> new FakeServer.Answer(200, "application/json", request.path.equals("/big") ? huge : fits))) {
            for (HttpTransport transport : new HttpTransport[] {new JdkHttpTransport(), new UrlConnectionTransport()}) {
                java.io.IOException error = assertThrows(java.io.IOException.class,
                    () -> transport.send("GET", server.url() + "/big", Collections.emptyMap(), null), transport.getClass().getName());
                assertTrue(error.getMessage().contains("MAX_ANSWER_BYTES"), error.getMessage());
                assertEquals(fits.length, transport.send("GET", server.url() + "/fits", Collections.emptyMap(), null).body.length);
            }
        }
    }

    @Test
    void aHeldStorageLockIsWaitedForAtMostTheLockTimeout(@TempDir Path folder) throws Exception {
        // a held .lock blocked submit without limit
        FileStorage storage = new FileStorage(folder, 200);
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Thread holder = new Thread(() -> storage.withLock(() -> {
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
            return null;
        }));
        holder.start();
        held.await();
        long started = System.nanoTime();
        IncompatibleStateError error = assertThrows(IncompatibleStateError.class, () -> new FileStorage(folder, 200).withLock(() -> "never"));
        assertTrue(error.getMessage().contains(".lock") && error.getMessage().contains("200 ms"), error.getMessage());
        assertTrue(System.nanoTime() - started >= 150_000_000L);
        release.countDown();
        holder.join();
        assertEquals("ok", new FileStorage(folder, 200).withLock(() -> "ok"));
        assertThrows(InvalidParameterError.class, () -> new FileStorage(folder, 0));
    }

    @Test
    void aBatchThatCouldNotBeSentOutlivesTheProcessAndTheNextClientsFlushResendsItTheSameBytes(@TempDir Path folder) throws Exception {
        // a batch that failed lived in memory only; after a restart its charge (and, relayed, its token) was spent for nothing
        try (FakeServer server = server(GRR, answers(refusal(503, "unavailable")))) {
            Client first = new Client(server.url(), "c", Client.options().storage(new FileStorage(folder)).retries(0).retryDelayMs(1));
            ServiceError failed = assertThrows(ServiceError.class, () -> first.submit(3));
            // the app's process ends here: a new client of the same storage
            Client restarted = new Client(server.url(), "c", Client.options().storage(new FileStorage(folder)).retries(0).retryDelayMs(1));
            List<Map<String, Object>> acks = restarted.flush();
            assertEquals(1, acks.size());
            assertEquals(failed.batchId(), acks.get(0).get("batch_id"));
            List<FakeServer.Request> puts = new ArrayList<>();
            for (FakeServer.Request request : server.requests) if (request.method.equals("PUT")) puts.add(request);
            assertEquals(2, puts.size());
            assertEquals(puts.get(0).path, puts.get(1).path);
            assertArrayEquals(puts.get(0).body, puts.get(1).body);
            assertTrue(restarted.flush().isEmpty()); // acknowledged: forgotten
            restarted.submit(4);                      // sent at once: nothing kept
            assertTrue(new Client(server.url(), "c", Client.options().storage(new FileStorage(folder))).flush().isEmpty());
        }
    }
}
