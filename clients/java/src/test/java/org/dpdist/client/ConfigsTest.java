package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.protocols.FrequencyProtocol;
import org.dpdist.client.protocols.LocalHashing;
import org.dpdist.client.protocols.NumericalProtocol;
import org.dpdist.client.protocols.Protocol;
import org.junit.jupiter.api.Test;

/**
 * The client reads every config Python writes for a supported protocol (normalized to exactly Python's config), and
 * refuses unsupported protocols, bad parameters and bad values with a clear error, before anything is drawn (the
 * JavaScript client's configs.test.js).
 */
class ConfigsTest {
    private static Map<String, Object> config(String json) {
        return Json.asObject(Json.parse(json));
    }

    @Test
    void everyPythonWrittenConfigParsesToTheSameConfig() {
        int parsed = 0;
        for (Map<String, Object> config : Fixtures.entries("configs")) {
            assertTrue(Json.same(DpDist.fromConfig(config).config(), config), Json.write(config));
            assertTrue(Json.same(DpDist.fromConfig(Json.write(config)).config(), config), Json.write(config));
            parsed += 1;
        }
        assertTrue(parsed >= 15, "only " + parsed + " configs");
    }

    @Test
    void configsOfUnsupportedProtocolsAreRefusedNamingTheProtocolAndTheSupportedOnes() {
        for (String text : new String[] {"{\"protocol\": \"cp\", \"version\": 1, \"epsilon\": 1, \"domain_size\": 6}", "{\"protocol\": \"toString\", \"epsilon\": 1}"}) {
            UnsupportedProtocolError error = assertThrows(UnsupportedProtocolError.class, () -> DpDist.fromConfig(text));
            String name = (String) config(text).get("protocol");
            assertTrue(error.getMessage().contains("protocol '" + name + "'"), error.getMessage());
            assertTrue(error.getMessage().contains("it implements " + String.join(", ", DpDist.supportedProtocols()) + "."), error.getMessage());
        }
    }

    @Test
    void defaultsAreFilledInAndNumbersNormalizedAsPythonDoes() {
        assertEquals("{\"protocol\":\"sw\",\"version\":1,\"epsilon\":1.0,\"bounds\":[0.0,1.0],\"bins\":1024,\"output_bins\":null,\"b\":null,\"discrete\":false}",
            Json.write(DpDist.fromConfig("{\"protocol\": \"sw\", \"epsilon\": 1}").config()));
        assertEquals("{\"protocol\":\"olh\",\"version\":1,\"epsilon\":2.0,\"domain_size\":10,\"hash_range\":null,\"hash_prime\":2147483647}",
            Json.write(DpDist.fromConfig("{\"protocol\": \"olh\", \"epsilon\": 2, \"domain_size\": 10.0}").config()));
    }

    @Test
    void badConfigsAreRefusedWithTheParameterTheValueAndWhatIsAllowed() {
        String[][] cases = {
            {"{\"protocol\": \"grr\", \"epsilon\": 0, \"domain_size\": 5}", "'epsilon' parameter of GRR must be a finite float >= 1e-06 and <= 30. Got 0 instead."},
            {"{\"protocol\": \"grr\", \"epsilon\": 1}", "GRR needs the parameter 'domain_size'"},
            {"{\"protocol\": \"grr\", \"epsilon\": 1, \"domain_size\": 1}", "'domain_size' parameter of GRR must be an int in [2, 2147483647]. Got 1"},
            {"{\"protocol\": \"oue\", \"epsilon\": 1, \"domain_size\": 2.5}", "'domain_size' parameter of OUE"},
            {"{\"protocol\": \"grr\", \"epsilon\": true, \"domain_size\": 5}", "'epsilon' parameter of GRR must be a finite float >= 1e-06 and <= 30. Got true"},
            {"{\"protocol\": \"grr\", \"epsilon\": 1, \"domain_size\": 5, \"extra\": 1}", "unknown parameter 'extra'"},
            {"{\"protocol\": \"olh\", \"epsilon\": 1, \"domain_size\": 5, \"hash_prime\": 9}", "'hash_prime' parameter of OLH must be a prime. Got 9"},
            {"{\"protocol\": \"sw\", \"epsilon\": 1, \"bounds\": [1, 0]}", "'bounds' parameter of SW must be a pair"},
            {"{\"protocol\": \"sw\", \"epsilon\": 1, \"discrete\": true, \"output_bins\": 8}", "'output_bins' parameter of SW must be None"},
            {"{\"protocol\": \"gw\", \"epsilon\": 1, \"shape\": \"triangle\", \"ratio\": 0.3}", "'ratio' parameter of GW must be None"},
            {"{\"protocol\": \"grr\", \"version\": 2, \"epsilon\": 1, \"domain_size\": 5}", "Config version 2 of protocol 'grr' is not supported"},
            {"{\"epsilon\": 1}", "must be an object with a 'protocol' key"},
            {"{not json", "not valid JSON"},
        };
        for (String[] entry : cases) {
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(entry[0]), entry[0]);
            assertTrue(error.getMessage().contains(entry[1]), entry[0] + " -> " + error.getMessage());
        }
    }

    @Test
    void epsilonOutsidePythonsSupportedRangeAndDomainsPythonRefusesForMemoryAreRefusedWhenBuilt() {
        // grr at epsilon 1e-7, 31 or 1000 was accepted (1000 then threw IllegalArgumentException), oue at d = 2^31 - 1 ran out of memory
        for (String epsilon : new String[] {"1e-300", "1e-7", "31.0", "1000.0"}) {
            String config = "{\"protocol\": \"grr\", \"epsilon\": " + epsilon + ", \"domain_size\": 5}";
            InvalidPrivacyParameterError error = assertThrows(InvalidPrivacyParameterError.class, () -> DpDist.fromConfig(config), config);
            assertTrue(error.getMessage().contains("The 'epsilon' parameter of GRR must be a finite float >= 1e-06 and <= 30. Got "), error.getMessage());
        }
        String longitudinal = "{\"protocol\": \"l-grr\", \"epsilon\": 1, \"epsilon_1\": 31, \"domain_size\": 5}";
        assertTrue(assertThrows(InvalidPrivacyParameterError.class, () -> DpDist.fromConfig(longitudinal)).getMessage().contains("'epsilon_1'"));
        assertEquals(1e-6, DpDist.fromConfig("{\"protocol\": \"grr\", \"epsilon\": 1e-6, \"domain_size\": 5}").param("epsilon"));
        assertEquals(30.0, DpDist.fromConfig("{\"protocol\": \"grr\", \"epsilon\": 30, \"domain_size\": 5}").param("epsilon"));
        // Python: 8 bytes per item (16 for hr and dbitflippm) over 2 GiB is refused; the largest allowed is built
        String[][] limits = {{"grr", "268435456"}, {"oue", "268435456"}, {"sue", "268435456"}, {"ss", "268435456"}, {"hr", "134217728"}};
        for (String[] limit : limits) {
            long largest = Long.parseLong(limit[1]);
            String over = "{\"protocol\": \"" + limit[0] + "\", \"epsilon\": 1, \"domain_size\": " + (largest + 1) + "}";
            InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(over), over);
            assertTrue(error.getMessage().contains("The largest allowed domain_size is " + String.format(java.util.Locale.ROOT, "%,d", largest)), error.getMessage());
        }
        assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig("{\"protocol\": \"oue\", \"epsilon\": 1, \"domain_size\": 2147483647}"));
        assertEquals(268435456, ((FrequencyProtocol) DpDist.fromConfig("{\"protocol\": \"grr\", \"epsilon\": 1, \"domain_size\": 268435456}")).domainSize());
    }

    @Test
    void ocmsRefusesABoundOnTheFrequenciesBelowOneOverDAsPythonDoes() {
        String config = "{\"protocol\": \"ocms\", \"epsilon\": 1, \"domain_size\": 16, \"max_frequency\": 0.01}";
        InvalidParameterError error = assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(config));
        assertTrue(error.getMessage().contains("'max_frequency' parameter of OCMS must be in [1/d, 1] = [0.0625, 1]") && error.getMessage().contains("Got 0.01"),
            error.getMessage());
        assertEquals(0.0625, DpDist.fromConfig(config.replace("0.01", "0.0625")).param("max_frequency"));
    }

    @Test
    void badValuesAreRefusedBeforeAnythingIsDrawn() {
        TracingSource source = new TracingSource(1, false);
        String grr = "{\"protocol\": \"grr\", \"epsilon\": 1, \"domain_size\": 5}";
        OutOfDomainError outside = assertThrows(OutOfDomainError.class, () -> DpDist.privatize(grr, Arrays.asList(0, 5), source));
        assertTrue(outside.getMessage().contains("position 1") && !outside.getMessage().contains("Got 5"), outside.getMessage());
        assertThrows(InvalidValueTypeError.class, () -> DpDist.privatize(grr, Arrays.asList(1.5), source));
        assertThrows(InvalidValueTypeError.class, () -> DpDist.privatize(grr, Arrays.asList("1"), source));
        assertThrows(InvalidValueTypeError.class, () -> DpDist.privatize(grr, Arrays.asList(true), source));
        assertThrows(InvalidValueTypeError.class, () -> DpDist.privatize(grr, null, source));
        String sw = "{\"protocol\": \"sw\", \"epsilon\": 1, \"bounds\": [0, 10]}";
        OutOfDomainError missing = assertThrows(OutOfDomainError.class, () -> DpDist.privatize(sw, Arrays.asList(3.0, Double.NaN), source));
        assertTrue(missing.getMessage().contains("position 1") && missing.getMessage().contains("missing"), missing.getMessage());
        assertTrue(source.calls.isEmpty(), "drew before refusing: " + source.calls);
        assertEquals(3, DpDist.privatize(sw, Arrays.asList(0, 10, 3.3), source).length());
    }

    @Test
    void numericalValuesOutsideTheBoundsAreClippedNotRefusedSoWhetherAReportLeavesNeverDependsOnTheValue() {
        // a refusal of 87250.5 under bounds [0, 50000] told the collector which device earns more (as Python's clip=True)
        for (String name : new String[] {"sw", "gw", "opm"}) {
            String json = "{\"protocol\": \"" + name + "\", \"epsilon\": 1, \"bounds\": [0, 50000]}";
            NumericalProtocol protocol = (NumericalProtocol) DpDist.fromConfig(json);
            assertEquals(1.0, protocol.checkReal(87250.5, 0), name);
            assertEquals(1.0, protocol.checkReal(Double.POSITIVE_INFINITY, 0), name);
            assertEquals(0.0, protocol.checkReal(-3.0, 0), name);
            assertEquals(0.0, protocol.checkReal(Double.NEGATIVE_INFINITY, 0), name);
            assertArrayEquals(DpDist.privatize(json, Arrays.asList(50000.0, 0.0), new SeededSource(5)).bytes,
                DpDist.privatize(json, Arrays.asList(87250.5, -1e300), new SeededSource(5)).bytes, name);
        }
        NumericalProtocol circle = (NumericalProtocol) DpDist.fromConfig("{\"protocol\": \"opm-circular\", \"epsilon\": 1, \"bounds\": [0, 1440]}");
        assertEquals(60.0 / 1440, circle.checkReal(1500.0, 0), 1e-15);     // Python's wrap_real_values: 1500 minutes of a day is 60
        assertEquals(1380.0 / 1440, circle.checkReal(-60.0, 0), 1e-15);
        assertEquals(1.0, circle.checkReal(Double.POSITIVE_INFINITY, 0));
    }

    @Test
    void labelsAPublicLabelDomainValuesByLabelOrItem() {
        String json = "{\"protocol\": \"oue\", \"version\": 1, \"epsilon\": 1.0, \"labels\": [\"ja\", \"nein\", \"vielleicht\", \"\u00fcber\"]}";
        FrequencyProtocol protocol = (FrequencyProtocol) DpDist.fromConfig(json);
        assertEquals(4, protocol.domainSize());
        Map<String, Object> expected = new LinkedHashMap<>(config(json));
        expected.put("domain_size", 4L);
        assertTrue(Json.same(protocol.config(), expected));
        assertEquals("\u00fcber", protocol.labelOf(3));
        assertEquals(3, DpDist.privatize(protocol, Arrays.asList("\u00fcber", "ja", 2), new SeededSource(8)).length());
        OutOfDomainError error = assertThrows(OutOfDomainError.class, () -> DpDist.privatize(protocol, Arrays.asList("vielleicht ", 0), new SeededSource(8)));
        assertTrue(error.getMessage().contains("position 0 is not a label") && !error.getMessage().contains("vielleicht"), error.getMessage());
        Map<String, Object> five = config(json);
        five.put("domain_size", 5);
        assertTrue(assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(five)).getMessage().contains("must hold domain_size=5 labels. Got 4"));
        Map<String, Object> twice = config(json);
        twice.put("labels", Arrays.asList("a", "a"));
        assertTrue(assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(twice)).getMessage()
            .contains("'labels' parameter of OUE must be None (null) or a list of at least 2 distinct non-empty strings"));
        assertEquals("{\"protocol\":\"grr\",\"version\":1,\"epsilon\":1.0,\"domain_size\":3}",
            Json.write(DpDist.fromConfig("{\"protocol\": \"grr\", \"epsilon\": 1, \"domain_size\": 3, \"labels\": null}").config()));
    }

    /** A source that fails after {@code budget} words: a rejection loop that never ends fails instead of hanging. */
    private static final class Budgeted extends RandomSource {
        private final RandomSource inner = new SeededSource(3);
        private int budget = 100_000;

        Budgeted() {
            super(true);
        }

        @Override
        protected void fill(int[] words) {
            for (int i = 0; i < words.length; i++) {
                if (--budget < 0) throw new IllegalStateException("drew 100,000 words for 4 reports");
                words[i] = (int) inner.word();
            }
        }
    }

    @Test
    void hashingProtocolsWorkAtTheTopOfTheEpsilonRange() {
        String[] configs = {
            "{\"protocol\": \"olh\", \"epsilon\": 30.0, \"domain_size\": 100}",
            "{\"protocol\": \"loloha\", \"epsilon\": 30.0, \"epsilon_1\": 29.0, \"domain_size\": 100}",
            "{\"protocol\": \"pem\", \"epsilon\": 30.0, \"bits\": 16, \"k\": 4, \"hash_count\": 64}",
        };
        for (String json : configs) {
            Protocol protocol = DpDist.fromConfig(json);
            ReportBatch batch = protocol.privatize(Arrays.asList(1, 2, 3, 99), new Budgeted());
            assertEquals(4, batch.length());
            long g = ((Number) protocol.design().get("g")).longValue();
            if (!protocol.name.equals("pem")) {
                assertTrue(g > (1L << 32), protocol.name + ": g = " + g);
                for (int i = 0; i < 4; i++) assertTrue(LocalHashing.valueOf(batch.row(i)) < g);
            }
        }
    }

    @Test
    void aClientViewIsCheckedAgainstTheClientsOwnDerivation() {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("config", config("{\"protocol\": \"grr\", \"version\": 1, \"epsilon\": 1.0, \"domain_size\": 5}"));
        Protocol protocol = DpDist.fromConfig(view.get("config"));
        view.put("format", protocol.format().describe());
        view.put("design", protocol.design());
        assertEquals("grr", DpDist.fromConfig(view).name);
        Map<String, Object> weaker = new LinkedHashMap<>(view);
        weaker.put("design", config("{\"keep\": 0.9}"));
        assertTrue(assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(weaker)).getMessage().contains("states GRR's keep = 0.9"));
        Map<String, Object> other = new LinkedHashMap<>(view);
        other.put("format", config("{\"kind\": \"items\", \"dtype\": \"<u2\", \"row_shape\": []}"));
        assertTrue(assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(other)).getMessage().contains("declares GRR reports as"));
        Map<String, Object> unknown = new LinkedHashMap<>(view);
        unknown.put("design", config("{\"flip\": 0.1}"));
        assertThrows(InvalidParameterError.class, () -> DpDist.fromConfig(unknown));
    }

    @Test
    void aProtocolsOwnEntryPointTakesItsConfigsOnly() {
        EntryPoint<org.dpdist.client.protocols.GRR> grr = EntryPoint.of(org.dpdist.client.protocols.GRR.class);
        String config = "{\"protocol\": \"grr\", \"epsilon\": 1, \"domain_size\": 5}";
        List<Integer> values = Arrays.asList(0, 1, 4);
        assertTrue(Arrays.equals(grr.privatize(config, values, new SeededSource(2)).bytes, DpDist.privatize(config, values, new SeededSource(2)).bytes));
        UnsupportedProtocolError error = assertThrows(UnsupportedProtocolError.class, () -> grr.fromConfig("{\"protocol\": \"oue\", \"epsilon\": 1, \"domain_size\": 5}"));
        assertTrue(error.getMessage().contains("The entry point 'grr' implements only grr"), error.getMessage());
    }
}
