package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.dpdist.client.protocols.Protocol;
import org.dpdist.client.protocols.SS;
import org.dpdist.client.protocols.WaveProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java randomizers implement the Python protocols' channels exactly (the JavaScript client's channels.test.js, on
 * the same fixture): the sampling constants derived from the config equal Python's, bit for bit; the exact law of the
 * Java sampler ({@code channelRow}, enumerated) equals Python's channel(); that law satisfies the epsilon-LDP bound; and
 * seeded reports follow Python's channel() (Pearson chi-square at ALPHA, Bonferroni over the inputs).
 */
class ChannelsTest {
    private static final int SAMPLES_PER_INPUT = 20_000;

    static Stream<Arguments> channels() {
        List<Arguments> out = new ArrayList<>();
        List<Map<String, Object>> entries = Fixtures.entries("channels");
        for (int index = 0; index < entries.size(); index++) out.add(Arguments.of(index, Json.write(entries.get(index).get("config"))));
        return out.stream();
    }

    private static Map<String, Object> channel(int index) {
        return Fixtures.entries("channels").get(index);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> inputs(Map<String, Object> entry) {
        return (List<Object>) entry.get("inputs");
    }

    @SuppressWarnings("unchecked")
    private static double[] row(Map<String, Object> entry, int row) {
        List<Object> values = ((List<List<Object>>) entry.get("channel")).get(row);
        double[] out = new double[values.size()];
        for (int i = 0; i < out.length; i++) out[i] = ((Number) values.get(i)).doubleValue();
        return out;
    }

    /** A trapezoid wave's law is a sum of two 53-bit uniforms: sampled only. */
    private static boolean enumerable(Protocol protocol) {
        if (!(protocol instanceof WaveProtocol)) return true;
        Object halfWidths = protocol.design().get("halfWidths");
        return halfWidths == null || ((Number) ((List<?>) halfWidths).get(1)).doubleValue() == 0;
    }

    @Test
    void derivedSamplingConstantsEqualPythonForEveryFixtureConfig() {
        List<Map<String, Object>> cases = new ArrayList<>(Fixtures.entries("channels"));
        cases.addAll(Fixtures.entries("derived"));
        assertTrue(cases.size() > 1000);
        for (Map<String, Object> entry : cases) {
            Protocol protocol = DpDist.fromConfig(entry.get("config"));
            Map<String, Object> design = protocol.design();
            for (Map.Entry<String, Object> expected : Json.asObject(entry.get("derived")).entrySet()) {
                assertTrue(Json.same(design.get(expected.getKey()), expected.getValue()),
                    Json.write(entry.get("config")) + ": " + expected.getKey() + " = " + Json.show(design.get(expected.getKey())) + ", Python " + expected.getValue());
            }
        }
    }

    @Test
    void ssTakesSubsetSizeAsTheConfigGivesItAndTheCeilingFromAConfigWithoutIt() {
        String stored = "{\"protocol\": \"ss\", \"version\": 1, \"epsilon\": 4.0, \"domain_size\": 128";
        SS legacy = (SS) DpDist.fromConfig(stored + "}");
        assertEquals(3, legacy.subsetSize);
        assertEquals(Json.asObject(Json.parse(stored + "}")), legacy.config()); // the record header states the config as given
        SS given = (SS) DpDist.fromConfig(stored + ", \"subset_size\": 2}");
        assertEquals(2, given.subsetSize);
        assertEquals(2L, given.config().get("subset_size"));
        InvalidParameterError refused = assertThrows(InvalidParameterError.class,
            () -> DpDist.fromConfig(stored + ", \"subset_size\": 128}"));
        assertTrue(refused.getMessage().contains("'subset_size' parameter of SS must be below 'domain_size' = 128"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("channels")
    void theExactChannelEqualsPythonsAndIsEpsilonLdp(int index, String config) {
        Map<String, Object> entry = channel(index);
        Protocol protocol = DpDist.fromConfig(entry.get("config"));
        if (!enumerable(protocol)) return;
        List<double[]> rows = new ArrayList<>();
        for (int row = 0; row < inputs(entry).size(); row++) {
            double[] law = protocol.channelRow(inputs(entry).get(row));
            double[] python = row(entry, row);
            assertEquals(python.length, law.length);
            double sum = 0;
            for (int y = 0; y < law.length; y++) {
                assertTrue(Math.abs(law[y] - python[y]) < 1e-12, "input " + inputs(entry).get(row) + ", output " + y + ": " + law[y] + " vs " + python[y]);
                sum += law[y];
            }
            assertTrue(Math.abs(sum - 1) < 1e-9, "rows sum to 1");
            rows.add(law);
        }
        double loss = Stats.maxPrivacyLoss(rows);
        double epsilon = protocol.epsilon();
        assertTrue(loss <= epsilon * (1 + Stats.CHANNEL_SLACK) + Stats.CHANNEL_SLACK, "privacy loss " + loss + " > epsilon " + epsilon);
    }

    /** Counts of each report's column over {@code samples} reports of {@code value}. */
    static long[] counts(Protocol protocol, Object value, int outputs, int samples, RandomSource source) {
        ReportBatch batch = protocol.privatize(Collections.nCopies(samples, value), source);
        long[] counts = new long[outputs];
        for (int i = 0; i < batch.length(); i++) counts[(int) protocol.reportIndex(batch.row(i))] += 1;
        return counts;
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("channels")
    void seededReportsFollowPythonsChannel(int index, String config) {
        Map<String, Object> entry = channel(index);
        Protocol protocol = DpDist.fromConfig(entry.get("config"));
        RandomSource source = new SeededSource(1000 + index);
        int inputs = inputs(entry).size();
        for (int row = 0; row < inputs; row++) {
            double[] python = row(entry, row);
            double p = Stats.chiSquarePValue(counts(protocol, inputs(entry).get(row), python.length, SAMPLES_PER_INPUT, source), python);
            assertTrue(p > Stats.ALPHA / inputs, "input " + inputs(entry).get(row) + ": chi-square p-value " + p);
        }
    }

    /** A source whose coins come up true 2% more often than asked: a randomizer that keeps the true item too often. */
    private static final class LeakySource extends RandomSource {
        private final RandomSource inner = new SeededSource(7);

        LeakySource() {
            super(true);
        }

        @Override
        public long word() {
            return inner.word();
        }

        @Override
        public long uniformInt(long n) {
            return inner.uniformInt(n);
        }

        @Override
        public boolean bernoulli(double p) {
            return inner.bernoulli(Math.min(1, p + 0.02));
        }
    }

    @Test
    void theChiSquareCheckCatchesARandomizerThatKeepsTooOften() {
        Map<String, Object> entry = null;
        for (Map<String, Object> candidate : Fixtures.entries("channels")) {
            if ("grr".equals(Json.asObject(candidate.get("config")).get("protocol"))) entry = candidate;
        }
        Protocol protocol = DpDist.fromConfig(entry.get("config"));
        double[] python = row(entry, 0);
        long[] honest = counts(protocol, 0L, python.length, 200_000, new SeededSource(7));
        long[] leaky = counts(protocol, 0L, python.length, 200_000, new LeakySource());
        assertTrue(Stats.chiSquarePValue(honest, python) > Stats.ALPHA);
        assertTrue(Stats.chiSquarePValue(leaky, python) < Stats.ALPHA);
    }

    @Test
    void randomizersDrawTheSameNumbersWhetherOrNotTheyKeepWhateverTheValue() {
        Map<String, Integer> perProtocol = new HashMap<>();
        for (Map<String, Object> entry : Fixtures.entries("channels")) {
            String name = (String) Json.asObject(entry.get("config")).get("protocol");
            if (perProtocol.getOrDefault(name, 0) >= 3) continue;
            perProtocol.merge(name, 1, Integer::sum);
            Protocol protocol = DpDist.fromConfig(entry.get("config"));
            List<Object> inputs = inputs(entry);
            List<Object> values = List.of(inputs.get(0), inputs.get(inputs.size() / 2), inputs.get(inputs.size() - 1));
            for (int seed = 1; seed <= 10; seed++) {
                Set<String> traces = new HashSet<>();
                for (boolean coin : new boolean[] {false, true}) {
                    for (Object value : values) {
                        TracingSource source = new TracingSource(seed, coin);
                        protocol.privatize(List.of(value), source);
                        traces.add(source.trace());
                    }
                }
                assertEquals(1, traces.size(), entry.get("config") + " seed " + seed + ": the draws differ with the coin or the value");
            }
        }
        assertTrue(perProtocol.size() >= 10 && perProtocol.containsKey("grr"), perProtocol.keySet().toString());
    }
}
