package org.dpdist.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The batches a device has drawn but no server has acknowledged, kept in its {@link Storage} (key {@code dpdist-outbox})
 * so that a restarted app resends them under the same batch id, with the same bytes and, in a relayed campaign, the
 * same tokens (bound in the {@link TokenWallet} to {@code <batch id>.<row>}).  Each entry names the server, the
 * campaign and the config its reports were drawn under; it is removed once acknowledged.  Callers hold the storage's
 * lock.
 */
final class Outbox {
    static final String KEY = "dpdist-outbox";
    private static final String FORMAT = "dpdist-outbox";

    private Outbox() {
    }

    /** One kept batch: its id, its rows and their bytes. */
    static final class Kept {
        final String batchId;
        final int rows;
        final byte[] bytes;

        Kept(String batchId, int rows, byte[] bytes) {
            this.batchId = batchId;
            this.rows = rows;
            this.bytes = bytes;
        }
    }

    /** Keep {@code batch} under {@code batchId} for {@code server}, {@code campaign} and {@code config} (the config's canonical JSON). */
    static void keep(Storage storage, String server, String campaign, String config, ReportBatch batch, String batchId) {
        List<Object> entries = entries(storage);
        for (Object entry : entries) if (batchId.equals(Json.asObject(entry).get("batch_id"))) return;
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("server", server);
        entry.put("campaign", campaign);
        entry.put("config", config);
        entry.put("batch_id", batchId);
        entry.put("rows", (long) batch.length());
        entry.put("bytes", Bytes.base64Url(batch.bytes));
        entries.add(entry);
        save(storage, entries);
    }

    /** Forget the batch {@code batchId} (acknowledged). */
    static void forget(Storage storage, String batchId) {
        List<Object> entries = entries(storage);
        boolean removed = entries.removeIf(entry -> batchId.equals(Json.asObject(entry).get("batch_id")));
        if (removed) save(storage, entries);
    }

    /** The kept batches of {@code server}, {@code campaign} and {@code config}, oldest first. */
    static List<Kept> of(Storage storage, String server, String campaign, String config) {
        List<Kept> out = new ArrayList<>();
        for (Object value : entries(storage)) {
            Map<String, Object> entry = Json.asObject(value);
            if (server.equals(entry.get("server")) && campaign.equals(entry.get("campaign")) && config.equals(entry.get("config"))) {
                out.add(new Kept((String) entry.get("batch_id"), ((Number) entry.get("rows")).intValue(), Bytes.fromBase64Url(entry.get("bytes"), "A kept batch")));
            }
        }
        return out;
    }

    /** How many batches are kept, of any campaign. */
    static int size(Storage storage) {
        return entries(storage).size();
    }

    private static List<Object> entries(Storage storage) {
        String text = storage.getItem(KEY);
        if (text == null) return new ArrayList<>();
        try {
            Map<String, Object> state = Json.asObject(Json.parse(text));
            List<Object> batches = state == null || !FORMAT.equals(state.get("format")) ? null : Json.asList(state.get("batches"));
            if (batches == null) throw new IllegalArgumentException("not an outbox");
            for (Object entry : batches) {
                Map<String, Object> fields = Json.asObject(entry);
                if (fields == null || !(fields.get("batch_id") instanceof String) || !(fields.get("server") instanceof String)
                    || !(fields.get("campaign") instanceof String) || !(fields.get("config") instanceof String)
                    || !Json.isInteger(fields.get("rows")) || !(fields.get("bytes") instanceof String)) {
                    throw new IllegalArgumentException("a damaged entry");
                }
            }
            return new ArrayList<>(batches);
        } catch (IllegalArgumentException | ClassCastException damaged) {
            throw new IncompatibleStateError("The unsent batches under '" + KEY + "' are damaged (" + damaged.getMessage() + "); they were not overwritten.");
        }
    }

    private static void save(Storage storage, List<Object> entries) {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("format", FORMAT);
        state.put("version", 1L);
        state.put("batches", entries);
        storage.setItem(KEY, Json.write(state));
    }
}
