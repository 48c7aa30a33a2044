package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.protocols.Protocol;
import org.junit.jupiter.api.Test;

/**
 * A campaign config is an instruction to the device: a config answer whose statistic or one report is too
 * large is refused ({@code bad_answer}) before anything is drawn, sent or charged, and batches are cut to the body the
 * answer states ({@code max_body_bytes}, at most 16 MiB); the sizes are Python's (fixtures/python.json report_bound).
 */
class ReportBoundTest {
    /** A source that counts its fills (a draw), deterministic. */
    static final class CountingSource extends RandomSource {
        final SeededSource inner = new SeededSource(7);
        int fills;

        CountingSource() {
            super(true);
        }

        @Override
        protected void fill(int[] words) {
            fills += 1;
            inner.fill(words);
        }
    }

    /** A server answering {@code config} and {@code maxBodyBytes} (null: absent) for the config GET, acknowledging every batch. */
    static FakeServer server(String config, Object maxBodyBytes) throws Exception {
        Map<String, Object> extra = new LinkedHashMap<>();
        if (maxBodyBytes != null) extra.put("max_body_bytes", maxBodyBytes);
        return serverWith(config, extra);
    }

    /** A server answering {@code config} and the fields {@code extra} for the config GET, acknowledging every batch. */
    static FakeServer serverWith(String config, Map<String, Object> extra) throws Exception {
        return new FakeServer(request -> {
            if (request.method.equals("GET")) {
                Map<String, Object> document = new LinkedHashMap<>();
                document.put("campaign", "c");
                document.put("state", "open");
                document.put("config", Json.parse(config));
                document.putAll(extra);
                return FakeServer.Answer.json(200, document);
            }
            return ClientTest.ack(request);
        });
    }

    static Map<String, Object> fields(Object... pairs) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) out.put((String) pairs[i], pairs[i + 1]);
        return out;
    }

    static List<Long> rowsSent(FakeServer server) {
        List<Long> rows = new ArrayList<>();
        for (FakeServer.Request put : puts(server)) rows.add(rowsOf(put.body));
        return rows;
    }

    static List<FakeServer.Request> puts(FakeServer server) {
        List<FakeServer.Request> out = new ArrayList<>();
        synchronized (server.requests) {
            for (FakeServer.Request request : server.requests) if (request.method.equals("PUT")) out.add(request);
        }
        return out;
    }

    static long rowsOf(byte[] body) {
        String header = new String(body, 14, (int) Bytes.getU32(body, 10), StandardCharsets.UTF_8);
        return ((Number) ((List<?>) Json.asObject(Json.parse(header)).get("shape")).get(0)).longValue();
    }

    static List<Object> values(int count) {
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < count; i++) out.add(i % 8);
        return out;
    }

    @Test
    void theCeilingsArePythons() {
        Map<String, Object> bound = Json.asObject(Fixtures.python().get("report_bound"));
        assertEquals(((Number) bound.get("max_body_bytes")).longValue(), ReportBound.CLIENT_MAX_BODY_BYTES);
        assertEquals(((Number) bound.get("max_statistic_bytes")).longValue(), ReportBound.CLIENT_MAX_STATISTIC_BYTES);
        assertEquals(((Number) bound.get("max_header_bytes")).longValue(), ReportBound.MAX_HEADER_BYTES);
    }

    /** GRR over {@code n} labels 000000, 000001, ... (the fixture's header cases). */
    static String labelled(int n) {
        StringBuilder labels = new StringBuilder();
        for (int i = 0; i < n; i++) labels.append(i == 0 ? "" : ", ").append('"').append(String.format("%06d", i)).append('"');
        return "{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": " + n + ", \"labels\": [" + labels + "]}";
    }

    @Test
    void recordHeaderBytesArePythons() {
        List<?> headers = (List<?>) Json.asObject(Fixtures.python().get("report_bound")).get("headers");
        boolean past = false;
        for (Object row : headers) {
            List<?> expected = (List<?>) row;
            int n = ((Number) expected.get(0)).intValue();
            long size = ((Number) expected.get(1)).longValue();
            past |= size > ReportBound.MAX_HEADER_BYTES;
            assertEquals(size, ReportBound.headerBytes(DpDist.fromConfig(Json.parse(labelled(n)))), String.valueOf(n));
        }
        assertTrue(past);
    }

    @Test
    void aConfigWhoseRecordHeaderWouldPassOneMiBIsRefusedBeforeAnythingIsDrawn() throws Exception {
        // 150,000 labels were taken and every batch refused as malformed, after the draw
        for (Object row : (List<?>) Json.asObject(Fixtures.python().get("report_bound")).get("headers")) {
            int n = ((Number) ((List<?>) row).get(0)).intValue();
            long size = ((Number) ((List<?>) row).get(1)).longValue();
            if (n < 1000) continue;
            try (FakeServer server = server(labelled(n), 16L << 20)) {
                CountingSource source = new CountingSource();
                Client client = new Client(server.url(), "c", Client.options().withoutLedger().retries(0).source(source));
                if (size <= ReportBound.MAX_HEADER_BYTES) {
                    client.submitMany(values(3));
                    assertEquals(1, puts(server).size(), String.valueOf(n));
                    continue;
                }
                ServiceError error = assertThrows(ServiceError.class, () -> client.submitMany(values(3)));
                assertEquals("bad_answer", error.code());
                assertTrue(error.getMessage().contains("record header (it carries the config) takes " + size + " bytes, more than the 1048576"), error.getMessage());
                assertFalse(error.getMessage().contains("\n"));
                assertEquals(0, source.fills);
                assertEquals(0, puts(server).size());
            }
        }
    }

    @Test
    void recordBytesAndStatisticBytesArePythons() {
        List<?> cases = (List<?>) Json.asObject(Fixtures.python().get("report_bound")).get("cases");
        assertTrue(cases.size() >= 60);
        for (Object row : cases) {
            List<?> expected = (List<?>) row;
            Protocol protocol = DpDist.fromConfig(expected.get(0));
            List<Long> got = Arrays.asList(ReportBound.recordBytes(protocol, 1), ReportBound.recordBytes(protocol, 7), protocol.statisticSize() * 8);
            List<Long> want = new ArrayList<>();
            for (Object number : expected.subList(1, 4)) want.add(((Number) number).longValue());
            assertEquals(want, got, protocol.name);
        }
    }

    @Test
    void theAttackersConfigIsRefusedBeforeAnythingIsDrawnOrSent() throws Exception {
        try (FakeServer server = server("{\"protocol\": \"oue\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 20000000}", 16L << 20)) {
            CountingSource source = new CountingSource();
            Client client = new Client(server.url(), "c", Client.options().withoutLedger().retries(0).source(source));
            ServiceError error = assertThrows(ServiceError.class, () -> client.submitMany(values(300)));
            assertEquals("bad_answer", error.code());
            assertTrue(error.getMessage().contains("domain_size = 20000000"), error.getMessage());
            assertTrue(error.getMessage().contains("statistic takes 160000000 bytes, more than the 67108864"), error.getMessage());
            assertFalse(error.getMessage().contains("\n"));
            assertEquals(0, source.fills);
            assertEquals(0, puts(server).size());
        }
    }

    @Test
    void aConfigWhoseOneReportDoesNotFitTheStatedBodyIsRefusedNamingTheFieldAndTheSizes() throws Exception {
        try (FakeServer server = server("{\"protocol\": \"oue\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 8192}", 1024)) {
            CountingSource source = new CountingSource();
            Client client = new Client(server.url(), "c", Client.options().withoutLedger().retries(0).source(source));
            ServiceError error = assertThrows(ServiceError.class, () -> client.submit(3));
            assertEquals("bad_answer", error.code());
            assertTrue(error.getMessage().matches(".*reports of \\d+ bytes each \\('config': domain_size = 8192\\).*\\(1024 bytes: 'max_body_bytes' = 1024.*"),
                error.getMessage());
            assertEquals(0, source.fills);
            assertEquals(0, puts(server).size());
        }
    }

    @Test
    void aMaxBodyBytesThatIsNotAnIntAtLeastOneIsRefused() throws Exception {
        for (Object stated : Arrays.asList(0, -5, 1.5, "4096", true, Collections.singletonList(4096))) {
            try (FakeServer server = server(ClientTest.GRR, stated)) {
                Client client = new Client(server.url(), "c", Client.options().withoutLedger().retries(0).source(new CountingSource()));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submitMany(values(2)), String.valueOf(stated));
                assertEquals("bad_answer", error.code());
                assertTrue(error.getMessage().contains("'max_body_bytes'"), error.getMessage());
                assertEquals(0, puts(server).size());
            }
        }
    }

    @Test
    void submitManyAndAddCutEachBatchToTheReportsThatFitTheStatedBody() throws Exception {
        String config = "{\"protocol\": \"oue\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 4096}"; // 512-byte reports
        try (FakeServer server = server(config, 4096)) {
            Client client = new Client(server.url(), "c", Client.options().withoutLedger().batchSize(1000).source(new CountingSource()));
            client.submitMany(values(50));
            long total = 0;
            long most = 0;
            for (FakeServer.Request put : puts(server)) {
                assertTrue(put.body.length <= 4096);
                total += rowsOf(put.body);
                most = Math.max(most, rowsOf(put.body));
            }
            assertEquals(50, total);
            assertTrue(most >= 2 && ReportBound.recordBytes(DpDist.fromConfig(config), most + 1) > 4096, most + " reports per body");
            int before = puts(server).size();
            for (int i = 0; i < 2 * most; i++) client.add(i);
            List<FakeServer.Request> added = puts(server).subList(before, puts(server).size());
            assertEquals(2, added.size()); // a full body is flushed, not a batchSize queue
            for (FakeServer.Request put : added) assertEquals(most, rowsOf(put.body));
        }
    }

    @Test
    void withoutMaxBodyBytesTheCeilingIs16MiBAndBatchSizeStillApplies() throws Exception {
        try (FakeServer server = server(ClientTest.GRR, null)) {
            Client client = new Client(server.url(), "c", Client.options().withoutLedger().batchSize(4).source(new CountingSource()));
            client.submitMany(values(10));
            List<Long> rows = new ArrayList<>();
            for (FakeServer.Request put : puts(server)) rows.add(rowsOf(put.body));
            Collections.sort(rows);
            assertEquals(Arrays.asList(2L, 4L, 4L), rows);
        }
    }

    // the service's per-batch work bound (fix76): a config answer's max_batch_reports caps every batch; one that is not
    // an int >= 1 is the server's answer refused before anything is drawn or sent; absent, the body alone bounds it

    @Test
    void aMaxBatchReportsOfThreeCutsTenValuesIntoFourBatchesOfAtMostThree() throws Exception {
        try (FakeServer server = serverWith(ClientTest.GRR, fields("max_batch_reports", 3))) {
            Client client = new Client(server.url(), "c", Client.options().withoutLedger().batchSize(1000).source(new CountingSource()));
            List<Map<String, Object>> acks = client.submitMany(values(10));
            assertEquals(Arrays.asList(3L, 3L, 3L, 1L), rowsSent(server));
            assertEquals(4, acks.size());
            java.util.Set<Object> ids = new java.util.HashSet<>();
            for (Map<String, Object> ack : acks) ids.add(ack.get("batch_id"));
            assertEquals(4, ids.size());
            for (int i = 0; i < 7; i++) client.add(i);
            assertEquals(Arrays.asList(3L, 3L, 3L, 1L, 3L, 3L), rowsSent(server)); // a queue of 3 is flushed, not a batchSize one
            client.flush();
            assertEquals(Arrays.asList(3L, 3L, 3L, 1L, 3L, 3L, 1L), rowsSent(server));
        }
    }

    @Test
    void maxBatchReportsAndMaxBodyBytesBothBoundABatchTheSmallerWins() throws Exception {
        String config = "{\"protocol\": \"oue\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 4096}"; // 512-byte reports
        Object[][] cases = {{fields("max_body_bytes", 4096, "max_batch_reports", 2), 1000, 2L},
            {fields("max_body_bytes", 4096, "max_batch_reports", 500), 1000, null}, {fields("max_batch_reports", 5), 4, 4L}};
        for (Object[] each : cases) {
            @SuppressWarnings("unchecked")
            Map<String, Object> extra = (Map<String, Object>) each[0];
            try (FakeServer server = serverWith(config, extra)) {
                Client client = new Client(server.url(), "c", Client.options().withoutLedger().batchSize((Integer) each[1]).source(new CountingSource()));
                client.submitMany(values(20));
                List<Long> rows = rowsSent(server);
                assertEquals(20L, rows.stream().mapToLong(Long::longValue).sum(), extra.toString());
                long most = Collections.max(rows);
                if (each[2] != null) assertEquals((long) (Long) each[2], most, extra.toString());
                else assertTrue(most < 20 && ReportBound.recordBytes(DpDist.fromConfig(config), most + 1) > 4096, most + " reports per body");
            }
        }
    }

    @Test
    void aMaxBatchReportsThatIsNotAnIntAtLeastOneIsRefusedNothingDrawnOrSent() throws Exception {
        StringBuilder longText = new StringBuilder();
        for (int i = 0; i < 100; i++) longText.append('x');
        List<Object> bad = Arrays.asList(0, -3, 2.5, 3.0, "3", true, false, Collections.singletonList(3), fields("n", 3),
            (1L << 53) + 1, Long.MAX_VALUE, 1e300, longText.toString());
        for (Object stated : bad) {
            try (FakeServer server = serverWith(ClientTest.GRR, fields("max_batch_reports", stated))) {
                CountingSource source = new CountingSource();
                Client client = new Client(server.url(), "c", Client.options().withoutLedger().retries(0).source(source));
                ServiceError error = assertThrows(ServiceError.class, () -> client.submitMany(values(2)), String.valueOf(stated));
                assertEquals("bad_answer", error.code());
                assertTrue(error.getMessage().matches("The config answer of campaign 'c' gives 'max_batch_reports' = .{1,40}, not an int >= 1; "
                    + "nothing was drawn or sent\\."), error.getMessage());
                assertThrows(ServiceError.class, () -> client.add(1), String.valueOf(stated));
                assertEquals(0, source.fills, String.valueOf(stated));
                assertEquals(0, puts(server).size());
            }
        }
    }

    @Test
    void aMaxBatchReportsOfTwoToThe53IsTakenAndNullOrAbsentIsNoCap() throws Exception {
        Map<String, Object> nullOne = new LinkedHashMap<>();
        nullOne.put("max_batch_reports", null);
        for (Map<String, Object> extra : Arrays.asList(fields(), nullOne, fields("max_batch_reports", 1L << 53))) {
            try (FakeServer server = serverWith(ClientTest.GRR, extra)) {
                Client client = new Client(server.url(), "c", Client.options().withoutLedger().batchSize(1000).source(new CountingSource()));
                client.submitMany(values(1500));
                List<Long> rows = rowsSent(server);
                Collections.sort(rows);
                assertEquals(Arrays.asList(500L, 1000L), rows, extra.toString());
            }
        }
    }
}
