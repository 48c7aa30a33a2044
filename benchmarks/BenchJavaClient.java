import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.DpDist;
import org.dpdist.client.Json;
import org.dpdist.client.protocols.FrequencyProtocol;
import org.dpdist.client.protocols.Protocol;

/**
 * Reports per CPU-second of the Java client's {@code privatize}, per config, as benchmarks/bench_js_client.mjs --cpu
 * measures the JavaScript client's (benchmarks/bench_java_client.py runs both, side by side):
 *
 * <pre>
 *   java -cp CLASSES:benchmarks BenchJavaClient '[config, ...]' SECONDS RUNS WARMUP
 *   java -cp CLASSES:benchmarks BenchJavaClient @cases.json SECONDS RUNS WARMUP
 * </pre>
 *
 * (a file {@code [{"config": ..., "values": [...]}, ...]}: the values each config privatizes, those that
 * bench_java_client.py writes for both clients; a bare config privatizes items or values spread over [0, 1] as before).
 * Each config privatizes batches of 1000 values (the same values as the JavaScript benchmark) through the list API,
 * from the CSPRNG (the client's default source), for at least SECONDS of the process's CPU time (every thread: the JIT and
 * the garbage collector count), after a warm-up of WARMUP seconds of every config (the JIT compiles the unary encodings' loops within a few
 * CPU-seconds); RUNS such runs.  Prints one JSON line per config.
 */
public final class BenchJavaClient {
    private static final int BATCH = 1000;

    private BenchJavaClient() {
    }

    /** CPU-seconds of this process (all its threads). */
    static double cpuSeconds() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
    }

    static double rate(Protocol protocol, List<Object> values, double seconds) {
        long reports = 0;
        double start = cpuSeconds();
        while (cpuSeconds() - start < seconds) {
            protocol.privatize(values);
            reports += BATCH;
        }
        return reports / (cpuSeconds() - start);
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] arguments) throws IOException {
        String cases = arguments[0].startsWith("@")
            ? new String(Files.readAllBytes(Paths.get(arguments[0].substring(1))), StandardCharsets.UTF_8) : arguments[0];
        List<Object> configs = (List<Object>) Json.parse(cases);
        double seconds = Double.parseDouble(arguments[1]);
        int runs = Integer.parseInt(arguments[2]);
        double warmup = Double.parseDouble(arguments[3]);
        List<Protocol> protocols = new ArrayList<>();
        List<List<Object>> batches = new ArrayList<>();
        for (int index = 0; index < configs.size(); index++) {
            Object config = configs.get(index);
            List<Object> given = null;
            if (config instanceof Map && ((Map<String, Object>) config).containsKey("values")) { // {"config": ..., "values": [...]}
                given = (List<Object>) ((Map<String, Object>) config).get("values");
                config = ((Map<String, Object>) config).get("config");
                configs.set(index, config);
            }
            Protocol protocol = DpDist.fromConfig(config);
            List<Object> values = given != null ? given : new ArrayList<>();
            for (int i = 0; given == null && i < BATCH; i++) {
                values.add(protocol instanceof FrequencyProtocol ? (Object) (long) ((i * 7919L) % ((FrequencyProtocol) protocol).domainSize())
                    : (Object) ((i + 0.5) / BATCH));
            }
            protocols.add(protocol);
            batches.add(values);
            rate(protocol, values, warmup); // warm-up (JIT) of every config before any is measured
        }
        for (int index = 0; index < configs.size(); index++) {
            Object config = configs.get(index);
            Protocol protocol = protocols.get(index);
            List<Object> values = batches.get(index);
            List<Object> rates = new ArrayList<>();
            for (int run = 0; run < runs; run++) rates.add(rate(protocol, values, seconds));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("config", config);
            out.put("rates", rates);
            System.out.println(Json.write(out));
        }
    }
}
