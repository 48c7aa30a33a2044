package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.regex.Pattern;

import org.dpdist.client.IncompatibleStateError;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportBatch;

/**
 * A device's memo of a longitudinal protocol (the JavaScript client's {@code Memo}): its user randomness if the protocol
 * has one (LOLOHA's hash seed, dBitFlipPM's sampled buckets), drawn once, and the permanent response of each memo key,
 * in the JSON form of Python's {@code MemoizedClient.to_dict} / {@code BucketMemoClient.to_dict}
 * ({@code {config, [randomness,] memo: {key: response}}}), so a memo moves between the three clients.
 *
 * <p>The memo must persist with the device: a device that forgets it and reports the same value again spends a fresh
 * eps_inf.  {@link #report} stores what it draws (through {@code onChange}) before it returns the report, so nothing is
 * sent that the memo does not hold.
 */
public final class Memo {
    private static final Pattern KEY = Pattern.compile("0|[1-9][0-9]{0,19}");

    private final Protocol protocol;
    private final Longitudinal longitudinal;
    private final Consumer<Memo> onChange;
    private Object randomness;
    private final TreeMap<Long, Object> memo = new TreeMap<>();
    private boolean seeded;

    /**
     * @param protocol a longitudinal protocol
     * @param state    a previous {@link #toJson()} (or Python's to_dict) of the same config, or null
     * @param onChange called with the memo whenever it draws something new, before the report leaves (null: none)
     */
    public Memo(Protocol protocol, Map<String, Object> state, Consumer<Memo> onChange) {
        if (!(protocol instanceof Longitudinal)) {
            throw new InvalidParameterError("A Memo needs a longitudinal protocol (l-grr, l-osue, loloha, dbitflippm). Got "
                + (protocol == null ? "null" : protocol.name) + ".");
        }
        this.protocol = protocol;
        this.longitudinal = (Longitudinal) protocol;
        this.onChange = onChange;
        if (state != null) load(state);
    }

    public Memo(Protocol protocol) {
        this(protocol, null, null);
    }

    private void load(Map<String, Object> state) {
        Map<String, Object> entries = Json.asObject(state.get("memo"));
        if (entries == null) throw new IncompatibleStateError("Not a memoized client state: it needs a 'memo' (an object).");
        if (!Json.same(state.get("config"), protocol.config())) {
            throw new IncompatibleStateError("The memo was made for config " + Json.show(state.get("config")) + ", not " + Json.show(protocol.config())
                + "; a memo only serves the protocol it was drawn for.");
        }
        Longitudinal.Losses losses = longitudinal.losses();
        if (losses.userRandomness && state.get("randomness") != null) randomness = longitudinal.checkUserRandomness(state.get("randomness"));
        if (losses.userRandomness && randomness == null && !entries.isEmpty()) {
            // the memo's buckets were drawn under a hash seed (or sampled buckets) this state does not hold
            throw new IncompatibleStateError("A client's memo has entries but no randomness: they cannot be used.");
        }
        Object flag = state.get("seeded");
        if (state.containsKey("seeded") && !(flag instanceof Boolean)) {
            throw new IncompatibleStateError("A client state's 'seeded' must be true or false. Got " + Json.show(flag) + ".");
        }
        seeded = Boolean.TRUE.equals(flag);
        for (Map.Entry<String, Object> entry : entries.entrySet()) {
            // canonical decimal only: '' and ' 1' are no keys, and '01' would read as item 1 beside '1'
            String text = entry.getKey();
            long key = KEY.matcher(text).matches() && text.length() < 19 ? Long.parseLong(text) : -1;
            if (key < 0 || key >= losses.keys) throw new IncompatibleStateError("A memo is keyed by integers in [0, " + losses.keys + "). Got another key (not shown: a user's value is private).");
            memo.put(key, longitudinal.memoFromJson(entry.getValue(), key));
        }
    }

    public Protocol protocol() {
        return protocol;
    }

    /** Whether a permanent response was drawn from a reproducible (test) source. */
    public boolean seeded() {
        return seeded;
    }

    /** Memo keys with a permanent response (values, or hashed values for LOLOHA), in order. */
    public List<Long> items() {
        return Collections.unmodifiableList(new ArrayList<>(memo.keySet()));
    }

    /** The device's user randomness in JSON form (LOLOHA: [seed]), null before the first report or if none. */
    public Object randomness() {
        return randomness == null ? null : longitudinal.randomnessToJson(randomness);
    }

    /**
     * Today's report of {@code value} as a one-row ReportBatch: the memoized permanent response (drawn and stored on
     * first use) through a fresh instantaneous response, drawn from {@code source} (the CSPRNG; a test passes a seeded one).
     */
    public ReportBatch report(Object value, RandomSource source) {
        boolean secure = source.secure();
        if (seeded && secure) {
            throw new IncompatibleStateError("This memo was drawn from a reproducible (seeded) source: anyone who knows the seed can re-draw its permanent "
                + "responses, so they protect nothing. A device reporting for real needs a memo drawn from the CSPRNG.");
        }
        int item = (Integer) protocol.checkValue(value, 0);
        boolean changed = false;
        if (longitudinal.losses().userRandomness && randomness == null) {
            randomness = longitudinal.drawUserRandomness(source);
            changed = true;
        }
        long key = longitudinal.bucketOf(item, randomness);
        // a permanent response is drawn every time, kept only for a new key: the same work whether or not the value is
        // new, so the report's timing does not tell a change
        Object drawn = longitudinal.permanentResponse(key, source, randomness);
        if (!memo.containsKey(key)) {
            memo.put(key, drawn);
            changed = true;
        }
        if (changed && !secure) seeded = true;
        if (changed && onChange != null) onChange.accept(this); // persisted before any report of it exists
        byte[] bytes = new byte[protocol.rowBytes()];
        longitudinal.writeMemoized(memo.get(key), source, bytes, 0, randomness);
        return protocol.batchOf(1, bytes);
    }

    /** {@link #report(Object, RandomSource)} from the CSPRNG. */
    public ReportBatch report(Object value) {
        return report(value, RandomSource.secureSource());
    }

    /** The JSON form (Python's {@code to_dict}). */
    public Map<String, Object> toJson() {
        Map<String, Object> entries = new LinkedHashMap<>();
        for (Map.Entry<Long, Object> entry : memo.entrySet()) entries.put(String.valueOf(entry.getKey()), longitudinal.memoToJson(entry.getValue()));
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("config", protocol.config());
        if (longitudinal.losses().userRandomness) state.put("randomness", randomness());
        state.put("memo", entries);
        if (seeded) state.put("seeded", true);
        return state;
    }
}
