package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.dpdist.client.protocols.Memo;
import org.dpdist.client.protocols.Protocol;
import org.dpdist.client.protocols.RecordProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Records of several attributes and memos over time, against what Python writes (the JavaScript client's multi.test.js
 * and longitudinal.test.js, on the same fixture): Python's client view of each record protocol is accepted and gives
 * its config; the exact law of a record's report equals Python's channel and is epsilon-LDP; a view with another
 * constant, budget, protocol, part list or format is refused; records are lists or maps, bad ones refused naming the
 * attribute; Python's memo states load and are written back as they were.
 */
class RecordsTest {
    static Stream<Arguments> multi() {
        List<Arguments> out = new ArrayList<>();
        List<Map<String, Object>> entries = Fixtures.entries("multi");
        for (int index = 0; index < entries.size(); index++) {
            out.add(Arguments.of(index, Json.write(Json.asObject(entries.get(index).get("view")).get("config")).substring(0, 60)));
        }
        return out.stream();
    }

    @SuppressWarnings("unchecked")
    private static double[] row(Map<String, Object> entry, int row) {
        List<Object> values = ((List<List<Object>>) entry.get("channel")).get(row);
        double[] out = new double[values.size()];
        for (int i = 0; i < out.length; i++) out[i] = ((Number) values.get(i)).doubleValue();
        return out;
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("multi")
    @SuppressWarnings("unchecked")
    void pythonsViewIsAcceptedAndTheExactLawIsPythonsAndEpsilonLdp(int index, String name) {
        Map<String, Object> entry = Fixtures.entries("multi").get(index);
        Map<String, Object> view = Json.asObject(entry.get("view"));
        Protocol protocol = DpDist.fromConfig(view);
        assertTrue(protocol instanceof RecordProtocol);
        assertTrue(Json.same(protocol.config(), view.get("config")), Json.write(protocol.config()));
        assertTrue(Json.same(protocol.format().describe(), view.get("format")));
        List<Object> inputs = (List<Object>) entry.get("inputs");
        List<double[]> rows = new ArrayList<>();
        for (int r = 0; r < inputs.size(); r++) {
            double[] law = protocol.channelRow(inputs.get(r));
            double[] python = row(entry, r);
            assertEquals(python.length, law.length);
            for (int y = 0; y < law.length; y++) assertTrue(Math.abs(law[y] - python[y]) < 1e-12, "record " + inputs.get(r) + ", output " + y);
            rows.add(law);
        }
        double epsilon = protocol.epsilon();
        assertTrue(Stats.maxPrivacyLoss(rows) <= epsilon * (1 + Stats.CHANNEL_SLACK) + Stats.CHANNEL_SLACK);
        // seeded records follow Python's channel (Bonferroni over the records)
        RandomSource source = new SeededSource(3000 + index);
        for (int r = 0; r < inputs.size(); r++) {
            double[] python = row(entry, r);
            double p = Stats.chiSquarePValue(ChannelsTest.counts(protocol, inputs.get(r), python.length, 20_000, source), python);
            assertTrue(p > Stats.ALPHA / inputs.size(), "record " + inputs.get(r) + ": p = " + p);
        }
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("multi")
    @SuppressWarnings("unchecked")
    void aViewWithAnotherConstantBudgetProtocolOrFormatIsRefused(int index, String name) {
        Map<String, Object> view = Json.asObject(Fixtures.entries("multi").get(index).get("view"));
        Map<String, Object> design = Json.asObject(view.get("design"));
        String key = design.containsKey("attributes") ? "attributes" : "groups";
        List<Object> parts = (List<Object>) design.get(key);
        Map<String, Object> first = Json.asObject(parts.get(0));
        Map<String, Object> firstDesign = Json.asObject(first.get("design"));
        String constant = firstDesign.keySet().iterator().next();
        Object value = firstDesign.get(constant);
        Object changed = value instanceof Long ? (Object) ((Long) value + 1) : value instanceof Double ? (Object) Math.min(1, (Double) value * 1.25 + 1e-3) : null;
        List<Map<String, Object>> tampered = new ArrayList<>();
        tampered.add(withPart(view, key, parts, with(first, "design", with(firstDesign, constant, changed))));
        tampered.add(withPart(view, key, parts, with(first, "epsilon", ((Number) first.get("epsilon")).doubleValue() * 2)));
        tampered.add(withPart(view, key, parts, with(first, "protocol", "grr".equals(first.get("protocol")) ? "oue" : "grr")));
        tampered.add(with(view, "design", with(design, key, parts.subList(1, parts.size()))));
        tampered.add(with(view, "design", with(design, "keep", 0.9)));
        Map<String, Object> format = Json.asObject(view.get("format"));
        List<Object> fields = new ArrayList<>((List<Object>) format.get("fields"));
        fields.set(0, with(with(Json.asObject(fields.get(0)), "high", 1L), "reason", "wide"));
        tampered.add(with(view, "format", with(format, "fields", fields)));
        if (design.containsKey("g1")) tampered.add(with(view, "design", with(design, "g1", ((Number) design.get("g1")).longValue() * 2)));
        for (Map<String, Object> bad : tampered) {
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(bad), Json.write(bad.get("design")));
            assertTrue(error.getMessage().contains("The view is refused"), error.getMessage());
        }
    }

    private static Map<String, Object> with(Map<String, Object> map, String key, Object value) {
        Map<String, Object> out = new LinkedHashMap<>(map);
        out.put(key, value);
        return out;
    }

    private static Map<String, Object> withPart(Map<String, Object> view, String key, List<Object> parts, Map<String, Object> first) {
        List<Object> changed = new ArrayList<>(parts);
        changed.set(0, first);
        return with(view, "design", with(Json.asObject(view.get("design")), key, changed));
    }

    @Test
    void recordsAreListsOrMapsAndBadOnesAreRefusedNamingTheAttribute() {
        Map<String, Object> view = null;
        for (Map<String, Object> entry : Fixtures.entries("multi")) {
            Map<String, Object> candidate = Json.asObject(entry.get("view"));
            if ("spl".equals(Json.asObject(candidate.get("config")).get("protocol")) && view == null) view = candidate;
        }
        Protocol spl = DpDist.fromConfig(view);
        List<Map<String, Object>> attributes = ((RecordProtocol) spl).attributes();
        List<Object> record = new ArrayList<>();
        Map<String, Object> byName = new LinkedHashMap<>();
        for (Map<String, Object> attribute : attributes) {
            Object value = attribute.containsKey("bounds") ? (Object) ((Number) ((List<?>) attribute.get("bounds")).get(0)).doubleValue() : (Object) 0L;
            record.add(value);
            byName.put((String) attribute.get("name"), value);
        }
        assertEquals(2, spl.privatize(Arrays.asList(record, byName), new SeededSource(1)).length());
        assertThrows(InvalidValueTypeError.class, () -> spl.privatize(Arrays.asList(record.subList(1, record.size())), new SeededSource(1)));
        Map<String, Object> missing = new LinkedHashMap<>(byName);
        String firstName = (String) attributes.get(0).get("name");
        missing.remove(firstName);
        InvalidValueTypeError error = assertThrows(InvalidValueTypeError.class, () -> spl.privatize(Arrays.asList(missing), new SeededSource(1)));
        assertTrue(error.getMessage().contains("has no '" + firstName + "'"), error.getMessage());
        List<Object> outside = new ArrayList<>(record);
        if (attributes.get(0).containsKey("bounds")) {   // a number outside the bounds is clipped (Python's clip=True), not refused
            outside.set(0, 1e9);
            assertEquals(1, spl.privatize(Arrays.asList(outside), new SeededSource(1)).length());
        } else {
            outside.set(0, 1000L);
            OutOfDomainError bad = assertThrows(OutOfDomainError.class, () -> spl.privatize(Arrays.asList(outside), new SeededSource(1)));
            assertTrue(bad.getMessage().contains("attribute '" + firstName + "'") && !bad.getMessage().contains("1000"), bad.getMessage());
        }
    }

    @Test
    void pythonsMemoStatesLoadAndAreWrittenBackAsTheyWere() {
        int loaded = 0;
        for (Map<String, Object> entry : Fixtures.entries("memos")) {
            Map<String, Object> state = Json.asObject(entry.get("state"));
            Memo memo = new Memo(DpDist.fromConfig(state.get("config")), state, null);
            assertTrue(Json.same(memo.toJson(), state), Json.write(memo.toJson()) + " vs " + Json.write(state));
            assertTrue(memo.seeded() == Boolean.TRUE.equals(state.get("seeded")));
            Map<String, Object> wrongConfig = new LinkedHashMap<>(state);
            Map<String, Object> other = new LinkedHashMap<>(Json.asObject(state.get("config")));
            other.put("epsilon", ((Number) other.get("epsilon")).doubleValue() + 1);
            wrongConfig.put("config", other);
            assertThrows(IncompatibleStateError.class, () -> new Memo(DpDist.fromConfig(state.get("config")), wrongConfig, null));
            loaded += 1;
        }
        assertTrue(loaded >= 3);
    }

    @Test
    void aSeededMemoRefusesToReportFromTheCsprng() {
        Protocol lgrr = DpDist.fromConfig("{\"protocol\": \"l-grr\", \"epsilon\": 2.0, \"epsilon_1\": 1.0, \"domain_size\": 5}");
        Memo memo = new Memo(lgrr);
        memo.report(3, new SeededSource(1));
        assertTrue(memo.seeded());
        assertThrows(IncompatibleStateError.class, () -> memo.report(3));
        Memo real = new Memo(lgrr);
        real.report(3);
        Object first = real.toJson().get("memo");
        real.report(3);
        assertEquals(Json.write(first), Json.write(real.toJson().get("memo"))); // the permanent response, reused
    }
}
