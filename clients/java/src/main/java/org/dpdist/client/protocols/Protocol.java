package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.dpdist.client.Config;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.InvalidValueTypeError;
import org.dpdist.client.Json;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportBatch;
import org.dpdist.client.ReportFormat;

/**
 * What every protocol of the client shares (the JavaScript client's {@code src/protocols/_base.js}): the normalized
 * config, the declared report format ({@link #format()}: NumPy dtype descr and row shape, as Python's report_format
 * declares them), the design constants and the check of a collector's client view against them, value checks and the
 * batch loop.  A protocol's class states its registry name as {@code public static final String PROTOCOL}.
 */
public abstract class Protocol {
    /** The registry name ("grr", ...). */
    public final String name;
    /** The normalized parameters (defaults filled in), in the rules' order. */
    protected final Map<String, Object> params;
    /** The keys of the config whose numbers are floats (for the record header). */
    protected final Set<String> floatKeys;
    /** {@code {protocol, version, ...params}}: what the record header states. */
    protected Map<String, Object> config;
    /** The declared report format; each protocol sets it in its constructor. */
    protected ReportFormat format;

    /**
     * @param name     registry name
     * @param config   the parsed JSON config
     * @param rules    parameter rules (see {@link Params})
     * @param defaults default parameters
     */
    protected Protocol(String name, Map<String, Object> config, Map<String, Params.Rule> rules, Map<String, Object> defaults) {
        this.name = name;
        Params.Checked checked = Params.check(displayName(name), config, rules, defaults);
        this.params = checked.params;
        this.floatKeys = checked.floatKeys;
        this.config = new LinkedHashMap<>();
        this.config.put("protocol", name);
        this.config.put("version", (long) Config.CONFIG_VERSION);
        this.config.putAll(params);
    }

    /** How messages name the protocol ("GRR", ...): the registry name in upper case unless a protocol says otherwise. */
    protected String displayName(String name) {
        return name.toUpperCase(java.util.Locale.ROOT);
    }

    public String display() {
        return displayName(name);
    }

    /** "frequency", "numerical", "multi", "key_value" or "heavy_hitters", as Python's tags. */
    public abstract String kind();

    public double epsilon() {
        return ((Number) params.get("epsilon")).doubleValue();
    }

    /** The normalized config (a copy: the record header states it). */
    public Map<String, Object> config() {
        return new LinkedHashMap<>(config);
    }

    /** The keys of {@link #config()} whose numbers are floats. */
    public Set<String> floatKeys() {
        return floatKeys;
    }

    /** A normalized parameter. */
    public Object param(String key) {
        return params.get(key);
    }

    public ReportFormat format() {
        return format;
    }

    /** NumPy descr of the reports. */
    public Object descr() {
        return format.dtype;
    }

    /** Shape of one report. */
    public int[] rowShape() {
        return format.rowShape.clone();
    }

    /** Bytes of one report. */
    public int rowBytes() {
        return format.rowBytes();
    }

    /**
     * The constants of the randomizer that a collector's client view may state (Python's {@code _client_design}), by
     * their names there: a view stating one that is not here, or another value, is refused.
     */
    public abstract Map<String, Object> design();

    /**
     * Entries of the aggregate statistic of this protocol (Python's {@code statistic_size}; every entry 8 bytes: int64 or
     * float64), from its parameters: what a device checks before it takes part.
     */
    public abstract long statisticSize();

    /**
     * Check a collector's published client view (Python's {@code protocol.client_view()}) against this client's own
     * reading of its config: the declared format and every design constant must be exactly what this client derives
     * from epsilon, so a collector cannot weaken the randomizer by publishing other constants.
     */
    public void checkView(Map<String, Object> view) {
        format.check(view.get("format"), display());
        Map<String, Object> published = Json.asObject(view.get("design"));
        if (published == null) return;
        Map<String, Object> own = design();
        for (Map.Entry<String, Object> entry : published.entrySet()) {
            if (!own.containsKey(entry.getKey()) || !Json.same(own.get(entry.getKey()), entry.getValue())) {
                throw new InvalidParameterError("The collector's client view states " + display() + "'s " + entry.getKey() + " = "
                    + Json.show(entry.getValue()) + "; this client derives " + Json.show(own.get(entry.getKey()))
                    + " from the config (epsilon " + epsilon() + "). The view is refused.");
            }
        }
    }

    /** A user's value checked: the internal form the randomizer takes (an item, a unit-interval real, a record, a set). */
    public abstract Object checkValue(Object value, int index);

    /** Every value checked, before anything is drawn. */
    public Object[] checkValues(List<?> values) {
        if (values == null) {
            throw new InvalidValueTypeError("The 'values' argument of " + display() + ".privatize must be a list. Got null instead.");
        }
        Object[] out = new Object[values.size()];
        for (int i = 0; i < out.length; i++) out[i] = checkValue(values.get(i), i);
        return out;
    }

    /** Write one report of the checked value {@code checked} at {@code offset} of {@code bytes}, drawing from {@code source}. */
    public abstract void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset);

    /** Randomize each value; one report per value, from the CSPRNG. */
    public ReportBatch privatize(List<?> values) {
        return privatize(values, RandomSource.secureSource());
    }

    /** Randomize each value; one report per value (every value is checked before anything is drawn). */
    public ReportBatch privatize(List<?> values, RandomSource source) {
        Object[] checked = checkValues(values);
        int rowBytes = rowBytes();
        byte[] bytes = new byte[checked.length * rowBytes];
        for (int i = 0; i < checked.length; i++) writeChecked(checked[i], source, bytes, i * rowBytes);
        return batchOf(checked.length, bytes);
    }

    /** A batch of {@code rows} reports of this protocol in {@code bytes}. */
    public ReportBatch batchOf(int rows, byte[] bytes) {
        int[] shape = new int[1 + format.rowShape.length];
        shape[0] = rows;
        System.arraycopy(format.rowShape, 0, shape, 1, format.rowShape.length);
        return new ReportBatch(config(), floatKeys, format.dtype, shape, bytes);
    }

    /**
     * The exact law of the report of a checked value over Python's columns ({@code channel()}), when it is enumerable;
     * InvalidParameterError otherwise.
     */
    public abstract double[] channelRowChecked(Object checked);

    /** The exact law of the report of {@code value} (checked first). */
    public double[] channelRow(Object value) {
        return channelRowChecked(checkValue(value, 0));
    }

    /** The column of one report ({@code row}: its bytes) in {@link #channelRow} (Python's {@code report_index}). */
    public abstract long reportIndex(byte[] row);

    /** The bytes of one report of {@code batch}. */
    protected static byte[] slice(byte[] bytes, int offset, int length) {
        byte[] out = new byte[length];
        System.arraycopy(bytes, offset, out, 0, length);
        return out;
    }

    /** A list of the given values (design constants). */
    protected static List<Object> listOf(Object... values) {
        List<Object> out = new ArrayList<>();
        for (Object value : values) out.add(value);
        return out;
    }

    /** An ordered map from (name, value) pairs (design constants). */
    protected static Map<String, Object> mapOf(Object... pairs) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) out.put((String) pairs[i], pairs[i + 1]);
        return out;
    }

    /** An InvalidParameterError saying {@code channelRow} cannot enumerate this config's outputs. */
    protected InvalidParameterError notEnumerable(String what) {
        return new InvalidParameterError(display() + ".channelRow enumerates " + what + ".");
    }
}
