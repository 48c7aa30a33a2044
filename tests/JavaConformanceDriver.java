import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.dpdist.client.DpDist;
import org.dpdist.client.EntryPoint;
import org.dpdist.client.Json;
import org.dpdist.client.Odds;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportBatch;
import org.dpdist.client.SeededSource;
import org.dpdist.client.TracingSource;
import org.dpdist.client.Wire;
import org.dpdist.client.protocols.Protocol;
import org.dpdist.client.protocols.ProtocolIndex;

/**
 * The Java side of tests/clients/test_java_conformance.py: what the Java client does with configs Python writes, as
 * tests/js_conformance_driver.mjs for the JavaScript client (the same requests, the same answers).
 *
 * <pre>
 *   java -cp CLASSES JavaConformanceDriver registry        {"supported": [...], "attributes": [...]}
 *   java -cp CLASSES JavaConformanceDriver cases FILE.json one JSON result per case of FILE (a list of
 *                                                          {config, view, inputs, samples, seed}), as a JSON list
 *   java -cp CLASSES JavaConformanceDriver consent FILE.json Odds.consentText of each config of FILE (a list), as a
 *                                                          JSON list
 * </pre>
 *
 * For a case of a protocol the client implements: its config as the client normalizes it, whether it accepts the
 * collector's client view, the exact law of each input's report (channelRow; null where it is not enumerable), one
 * binary record (not shuffled) of {@code samples} reports of each input in turn from a seeded source (the JavaScript
 * client's, word for word), whether the protocol's own entry point privatizes as the main one does, and whether its
 * draws are the same whatever its coins and the value.  For a config it does not implement: the refusal.
 */
public final class JavaConformanceDriver {
    private JavaConformanceDriver() {
    }

    private static List<List<Double>> exactLaw(Protocol protocol, List<Object> inputs) {
        List<List<Double>> rows = new ArrayList<>();
        try {
            for (Object value : inputs) {
                List<Double> row = new ArrayList<>();
                for (double p : protocol.channelRow(value)) row.add(p);
                rows.add(row);
            }
        } catch (RuntimeException notEnumerable) {
            return null; // e.g. a trapezoid wave (a sum of two 53-bit uniforms): sampled only
        }
        return rows;
    }

    /** {@code samples} reports of each input in turn from {@code source}, one privatize per input, concatenated. */
    private static ReportBatch privatizeEach(Protocol protocol, List<Object> inputs, int samples, RandomSource source) {
        List<byte[]> parts = new ArrayList<>();
        int size = 0;
        ReportBatch first = null;
        for (Object value : inputs) {
            ReportBatch batch = protocol.privatize(Collections.nCopies(samples, value), source);
            if (first == null) first = batch;
            parts.add(batch.bytes);
            size += batch.bytes.length;
        }
        byte[] bytes = new byte[size];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, bytes, at, part.length);
            at += part.length;
        }
        return first.withRows(inputs.size() * samples, bytes);
    }

    /** Whether a seeded source sees the same calls whatever the coins (all forced one way) and the value. */
    private static boolean drawsAlike(Protocol protocol, List<Object> inputs) {
        List<Object> values = List.of(inputs.get(0), inputs.get(inputs.size() / 2), inputs.get(inputs.size() - 1));
        for (int seed = 1; seed <= 3; seed++) {
            Set<String> traces = new HashSet<>();
            for (boolean coin : new boolean[] {false, true}) {
                for (Object value : values) {
                    TracingSource source = new TracingSource(seed, coin);
                    protocol.privatize(List.of(value), source);
                    traces.add(source.trace());
                }
            }
            if (traces.size() != 1) return false;
        }
        return true;
    }

    private static String refusal(RuntimeException error) {
        return error.getClass().getSimpleName() + ": " + error.getMessage();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> run(Map<String, Object> request) {
        Map<String, Object> out = new LinkedHashMap<>();
        Protocol protocol;
        try {
            protocol = DpDist.fromConfig(request.get("config"));
        } catch (RuntimeException error) {
            out.put("refused", refusal(error));
            return out;
        }
        String viewRefused = null;
        try {
            DpDist.fromConfig(request.get("view"));
        } catch (RuntimeException error) {
            viewRefused = refusal(error);
        }
        List<Object> inputs = (List<Object>) request.get("inputs");
        int samples = ((Number) request.get("samples")).intValue();
        long seed = ((Number) request.get("seed")).longValue();
        byte[] record = Wire.encodeRecord(privatizeEach(protocol, inputs, samples, new SeededSource(seed)));
        EntryPoint<? extends Protocol> own = EntryPoint.of(protocol.getClass());
        byte[] alone = own.privatize(request.get("config"), inputs, new SeededSource(seed + 1)).bytes;
        byte[] main = DpDist.privatize(request.get("config"), inputs, new SeededSource(seed + 1)).bytes;
        out.put("config", protocol.config());
        out.put("viewRefused", viewRefused);
        out.put("channel", exactLaw(protocol, inputs));
        out.put("record", Base64.getEncoder().encodeToString(record));
        out.put("moduleAsMain", own.protocol.equals(protocol.name) && java.util.Arrays.equals(alone, main));
        out.put("drawsAlike", drawsAlike(protocol, inputs));
        return out;
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] arguments) throws Exception {
        if (arguments.length >= 1 && arguments[0].equals("registry")) {
            Map<String, Object> registry = new LinkedHashMap<>();
            registry.put("supported", DpDist.supportedProtocols());
            List<String> attributes = new ArrayList<>(ProtocolIndex.attributeProtocols().keySet());
            Collections.sort(attributes);
            registry.put("attributes", attributes);
            System.out.print(Json.write(registry));
            return;
        }
        if (arguments.length >= 2 && arguments[0].equals("cases")) {
            String text = new String(Files.readAllBytes(Paths.get(arguments[1])), StandardCharsets.UTF_8);
            List<Object> results = new ArrayList<>();
            for (Object request : (List<Object>) Json.parse(text)) results.add(run((Map<String, Object>) request));
            System.out.print(Json.write(results));
            return;
        }
        if (arguments.length >= 2 && arguments[0].equals("consent")) {
            String text = new String(Files.readAllBytes(Paths.get(arguments[1])), StandardCharsets.UTF_8);
            List<Object> sentences = new ArrayList<>();
            for (Object config : (List<Object>) Json.parse(text)) sentences.add(Odds.consentText(DpDist.fromConfig((Map<String, Object>) config)));
            System.out.print(Json.write(sentences));
            return;
        }
        System.err.println("usage: java JavaConformanceDriver registry | cases FILE.json | consent FILE.json");
        System.exit(2);
    }
}
