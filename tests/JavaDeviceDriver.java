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
 *     "storage": DIR?, "sendTwice": BOOL?, "pauseMs": N?, "unsentFile": PATH?, "resendFile": PATH?}'
 * </pre>
 *
 * {@code storage} is the folder of the device's FileStorage (its ledger and its tokens, across runs; none: no ledger);
 * with {@code sendTwice} the values are randomized into one batch that is sent twice under the same batch id (an answer
 * lost); with {@code pauseMs}, randomized and sent one batch at a time with that pause between them (so that a test can
 * kill a server while the device sends), the reports sent printed too ({@code "reports"}: their bytes in base64, in the
 * order sent); with {@code resendFile}, the batch that file holds is sent again under its batch id (no draw); else
 * submitted with {@code submitMany}.  With {@code unsentFile}, a batch the client could not send (the ServiceError
 * carries it) is written there, as an app keeps it for later.  The last line of stdout is JSON: {"acks": [...]} (exit 0), or
 * {"error": {"name", "code", "status", "message"}} for a refusal of the client (exit 3); exit 2 for a malformed request.
 */
public final class JavaDeviceDriver {
    private JavaDeviceDriver() {
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] arguments) throws Exception {
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
            String reports = null;
            if (Boolean.TRUE.equals(request.get("sendTwice"))) {
                client.campaign();
                client.prepareTokens(values.size());
                ReportBatch batch = client.randomize(values);
                String batchId = org.dpdist.client.Wire.newFileId();
                acks.add(client.send(batch, batchId));
                acks.add(client.send(batch, batchId)); // the same bytes under the same id: counted once
            } else if (request.get("pauseMs") != null) {
                int size = ((Number) request.getOrDefault("batchSize", 1000L)).intValue();
                java.io.ByteArrayOutputStream sent = new java.io.ByteArrayOutputStream();
                client.campaign();
                for (int start = 0; start < values.size(); start += size) {
                    if (start > 0) Thread.sleep(((Number) request.get("pauseMs")).longValue());
                    List<Object> chunk = values.subList(start, Math.min(values.size(), start + size));
                    client.prepareTokens(chunk.size());
                    ReportBatch batch = client.randomize(chunk);
                    acks.add(client.send(batch, org.dpdist.client.Wire.newFileId()));
                    sent.write(batch.bytes, 0, batch.bytes.length);
                }
                reports = java.util.Base64.getEncoder().encodeToString(sent.toByteArray());
            } else if (request.get("resendFile") != null) {
                Map<String, Object> kept = Json.asObject(Json.parse(new String(java.nio.file.Files.readAllBytes(Paths.get((String) request.get("resendFile"))),
                    java.nio.charset.StandardCharsets.UTF_8)));
                List<Object> shape = (List<Object>) kept.get("shape");
                int[] dimensions = new int[shape.size()];
                for (int i = 0; i < dimensions.length; i++) dimensions[i] = ((Number) shape.get(i)).intValue();
                ReportBatch batch = new ReportBatch(Json.asObject(kept.get("config")), new java.util.HashSet<>((List<String>) (List<?>) kept.get("floatKeys")),
                    kept.get("descr"), dimensions, java.util.Base64.getDecoder().decode((String) kept.get("bytes")));
                acks.add(client.send(batch, (String) kept.get("batchId")));
            } else {
                acks.addAll(client.submitMany(values));
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("acks", acks);
            if (reports != null) out.put("reports", reports);
            System.out.println(Json.write(out));
        } catch (DPDistError error) {
            if (error instanceof ServiceError && ((ServiceError) error).batch() != null && request.get("unsentFile") != null) {
                ReportBatch batch = ((ServiceError) error).batch();
                Map<String, Object> kept = new LinkedHashMap<>();
                kept.put("batchId", ((ServiceError) error).batchId());
                kept.put("config", batch.config);
                kept.put("floatKeys", new ArrayList<>(batch.floatKeys));
                kept.put("descr", batch.descr);
                List<Object> shape = new ArrayList<>();
                for (int size : batch.shape) shape.add((long) size);
                kept.put("shape", shape);
                kept.put("bytes", java.util.Base64.getEncoder().encodeToString(batch.bytes));
                try {
                    java.nio.file.Files.write(Paths.get((String) request.get("unsentFile")), Json.write(kept).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                } catch (java.io.IOException cannot) {
                    throw new java.io.UncheckedIOException(cannot);
                }
            }
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
