package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.dpdist.client.Config;
import org.dpdist.client.EntryPoint;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.RecordFormat;
import org.dpdist.client.UnsupportedProtocolError;

/**
 * Records of several attributes per user, the base of "spl", "smp", "rsfd" and "rsrfd" ({@code dpdist.local.multi}; the
 * JavaScript client's {@code src/protocols/_multi.js}), over the attribute protocols of the client
 * ({@link ProtocolIndex#attributeProtocols()}).  Each attribute of the public schema is randomized by its own protocol of
 * this client (its inner protocol, named by the attribute's {@code protocol}, with its {@code options}), at the budget the
 * multi-attribute protocol gives it, built from a config derived exactly as Python builds it (spl's budget epsilon * 1 / k,
 * the GRR/OUE rule d &lt; 3 e^eps + 2 for an attribute without a protocol), so every constant is the one Python derives; a
 * collector's client view states each attribute's protocol, budget, format and design constants, and a view that
 * differs is refused.
 */
public abstract class MultiAttribute extends RecordProtocol {
    /** Each attribute's protocol, in the schema's order. */
    public final List<Protocol> inners = new ArrayList<>();
    private int[] outputCounts;

    protected MultiAttribute(String name, Map<String, Object> config, Map<String, EntryPoint<?>> table, Object[] extraRules, Map<String, Object> defaults) {
        super(name, config, extraRules, defaults);
        int k = attributes().size();
        double[] budgets = budgets(k);
        List<Object> named = new ArrayList<>();
        for (int index = 0; index < k; index++) {
            Map<String, Object> attribute = attributes().get(index);
            Protocol inner = buildInner(attribute, budgets[index], table);
            inners.add(inner);
            Map<String, Object> entry = new LinkedHashMap<>(attribute);
            entry.put("protocol", inner.name);
            named.add(entry);
            for (String key : inner.floatKeys()) if (!key.equals("domain_size")) floatKeys.add(key);
        }
        this.checkers = new ArrayList<>();
        for (Protocol inner : inners) checkers.add(inner::checkValue);
        params.put("attributes", named);
        this.config = new LinkedHashMap<>();
        this.config.put("protocol", name);
        this.config.put("version", (long) Config.CONFIG_VERSION);
        this.config.putAll(params);
    }

    /** The budget of each attribute's protocol. */
    protected double[] budgets(int k) {
        double[] out = new double[k];
        java.util.Arrays.fill(out, epsilon());
        return out;
    }

    /** The protocol of an attribute without one: the GRR/OUE variance rule at its budget, or SW. */
    protected String defaultProtocol(Map<String, Object> attribute, double epsilon) {
        if (!attribute.containsKey("domain_size")) return "sw";
        return ((Number) attribute.get("domain_size")).doubleValue() < 3.0 * Libm.exp(epsilon) + 2.0 ? "grr" : "oue";
    }

    /** The protocols of {@code table} an attribute may use: the numerical ones for one with bounds, else the categorical ones. */
    protected Set<String> allowed(Map<String, Object> attribute, Map<String, EntryPoint<?>> table) {
        Class<?> base = isNumerical(attribute) ? NumericalProtocol.class : FrequencyProtocol.class;
        Set<String> out = new TreeSet<>();
        for (Map.Entry<String, EntryPoint<?>> entry : table.entrySet()) if (base.isAssignableFrom(entry.getValue().type)) out.add(entry.getKey());
        return out;
    }

    private Protocol buildInner(Map<String, Object> attribute, double epsilon, Map<String, EntryPoint<?>> table) {
        Set<String> allowed = allowed(attribute, table);
        String protocol = attribute.get("protocol") != null ? (String) attribute.get("protocol") : defaultProtocol(attribute, epsilon);
        String where = "The 'attributes' parameter of " + display() + ": attribute '" + attribute.get("name") + "'";
        if (!allowed.contains(protocol) || !table.containsKey(protocol)) {
            throw new InvalidParameterError(where + " names protocol '" + protocol + "'; this client randomizes it with one of " + String.join(", ", allowed) + ".");
        }
        Map<String, Object> inner = new LinkedHashMap<>(Json.asObject(attribute.get("options")));
        inner.put("protocol", protocol);
        inner.put("version", (long) Config.CONFIG_VERSION);
        inner.put("epsilon", epsilon);
        if (isNumerical(attribute)) {
            inner.put("bounds", attribute.get("bounds"));
        } else {
            inner.put("domain_size", attribute.get("domain_size"));
            if (attribute.get("labels") != null) inner.put("labels", attribute.get("labels"));
        }
        try {
            return Config.build(inner, table, null);
        } catch (UnsupportedProtocolError error) {
            throw new UnsupportedProtocolError(where + ": " + error.getMessage());
        } catch (InvalidParameterError error) {
            throw new InvalidParameterError(where + ": " + error.getMessage());
        }
    }

    /** The number of outputs of each attribute's exact channel. */
    protected int[] outputCounts() {
        if (outputCounts == null) {
            int[] counts = new int[inners.size()];
            for (int i = 0; i < counts.length; i++) counts[i] = inners.get(i).channelRowChecked(firstInput(inners.get(i))).length;
            outputCounts = counts;
        }
        return outputCounts;
    }

    /** The attributes and their protocols, as a client view's design lists them. */
    protected List<Part> parts() {
        List<Part> out = new ArrayList<>();
        for (int index = 0; index < inners.size(); index++) out.add(new Part((String) attributes().get(index).get("name"), inners.get(index)));
        return out;
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("attributes", null);
    }

    /** Check a collector's client view: the records format, and each attribute's name, protocol, budget, format and design. */
    @Override
    public void checkView(Map<String, Object> view) {
        format.check(view.get("format"), display());
        Map<String, Object> design = Json.asObject(view.get("design"));
        if (design == null) return;
        for (String key : design.keySet()) if (!key.equals("attributes")) throw refuseView("the design constant '" + key + "'");
        checkPartViews(design.get("attributes"), parts(), "attribute");
    }

    /** Per-attribute fields of the inner reports as they are (spl, rsfd). */
    protected RecordFormat attributeFields() {
        List<RecordFormat.Field> fields = new ArrayList<>();
        for (int index = 0; index < inners.size(); index++) {
            Protocol inner = inners.get(index);
            fields.add(new RecordFormat.Field((String) attributes().get(index).get("name"), (String) inner.format().dtype, inner.format().rowShape));
        }
        return new RecordFormat(fields);
    }

    /** The bytes of field {@code index} of one report. */
    protected byte[] fieldBytes(byte[] row, int index) {
        return slice(row, ((RecordFormat) format).offsetOf(index), inners.get(index).rowBytes());
    }

    /** The joint output index of per-attribute output indices (attribute 0 slowest, as Python's {@code _mixed_radix}). */
    protected long mixedRadix(byte[] row) {
        int[] counts = outputCounts();
        long joint = 0;
        for (int index = 0; index < inners.size(); index++) joint = joint * counts[index] + inners.get(index).reportIndex(fieldBytes(row, index));
        return joint;
    }

    @Override
    public long statisticSize() {
        long total = 0;
        for (Protocol inner : inners) total += inner.statisticSize();
        return total;
    }
}
