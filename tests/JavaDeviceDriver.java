import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Client;
import org.dpdist.client.DPDistError;
import org.dpdist.client.FileStorage;
import org.dpdist.client.Json;
import org.dpdist.client.ReportBatch;
import org.dpdist.client.ServiceError;

/**
 * One device of the Java client, for tests driven from Python (as tests/relayed_submit_driver.mjs for the JavaScript
 * client):
 *
 * <pre>
 *   java -cp CLASSES JavaDeviceDriver '{"server": URL, "campaign": ID, "values": [...], "pin": HEX?,
 *     "issuer": {"credential": TEXT?, "url": URL}?, "batchSize": N?, "retries": N?, "retryDelayMs": N?,
 *     "storage": DIR?, "sendTwice": BOOL?, "pauseMs": N?}'
 * </pre>
 *
 * {@code storage} is the folder of the device's FileStorage (its ledger and its tokens, across runs; none: no ledger);
 * with {@code sendTwice} the values are randomized into one batch that is sent twice under the same batch id (an answer
 * lost), else submitted with {@code submitMany} (with {@code pauseMs}, one batch per call and that pause between calls, so
 * that a test can kill a server while the device sends).  The last line of stdout is JSON: {"acks": [...]} (exit 0), or
 * {"error": {"name", "code", "status", "message"}} for a refusal of the client (exit 3); exit 2 for a malformed request.
 */
public final class JavaDeviceDriver {
    private JavaDeviceDriver() {
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] arguments) throws InterruptedException {
        Map<String, Object> request;
        try {
            request = Json.asObject(Json.parse(arguments.length > 0 ? arguments[0] : ""));
        } catch (IllegalArgumentException error) {
            request = null;
        }
        if (request == null || !(request.get("server") instanceof String) || !(request.get("campaign") instanceof String) || !(request.get("values") instanceof List)) {
            System.err.println("java-device: the argument must be a JSON object with \"server\", \"campaign\" (strings) and \"values\" (an array)");
            System.exit(2);
        }
        Client.Options options = Client.options()
            .batchSize(((Number) request.getOrDefault("batchSize", 1000L)).intValue())
            .retries(((Number) request.getOrDefault("retries", 5L)).intValue())
            .retryDelayMs(((Number) request.getOrDefault("retryDelayMs", 200L)).longValue());
        if (request.get("storage") != null) options.storage(new FileStorage(Paths.get((String) request.get("storage"))));
        else options.withoutLedger();
        if (request.get("pin") != null) options.pin((String) request.get("pin"));
        Map<String, Object> issuer = Json.asObject(request.get("issuer"));
        try {
            if (issuer != null) options.issuer((String) issuer.get("credential"), (String) issuer.get("url"));
            Client client = new Client((String) request.get("server"), (String) request.get("campaign"), options);
            List<Object> values = (List<Object>) request.get("values");
            List<Map<String, Object>> acks = new ArrayList<>();
            if (Boolean.TRUE.equals(request.get("sendTwice"))) {
                client.campaign();
                client.prepareTokens(values.size());
                ReportBatch batch = client.randomize(values);
                String batchId = org.dpdist.client.Wire.newFileId();
                acks.add(client.send(batch, batchId));
                acks.add(client.send(batch, batchId)); // the same bytes under the same id: counted once
            } else if (request.get("pauseMs") != null) {
                int size = ((Number) request.getOrDefault("batchSize", 1000L)).intValue();
                for (int start = 0; start < values.size(); start += size) {
                    if (start > 0) Thread.sleep(((Number) request.get("pauseMs")).longValue());
                    acks.addAll(client.submitMany(values.subList(start, Math.min(values.size(), start + size))));
                }
            } else {
                acks.addAll(client.submitMany(values));
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("acks", acks);
            System.out.println(Json.write(out));
        } catch (DPDistError error) {
            Map<String, Object> described = new LinkedHashMap<>();
            described.put("name", error.name());
            described.put("code", error instanceof ServiceError ? ((ServiceError) error).code() : null);
            described.put("status", error instanceof ServiceError && ((ServiceError) error).status() >= 0 ? (long) ((ServiceError) error).status() : null);
            described.put("message", error.getMessage());
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("error", described);
            System.out.println(Json.write(out));
            System.exit(3);
        }
    }
}
