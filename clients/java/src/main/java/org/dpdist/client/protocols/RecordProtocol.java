package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.InvalidValueTypeError;
import org.dpdist.client.Json;
import org.dpdist.client.OutOfDomainError;
import org.dpdist.client.Params;

/**
 * Records of several attributes per user (the JavaScript client's {@code src/records.js}): the public schema
 * ({@code attributes}, as Python's {@code dpdist.local.multi._schema}), a user's record checked against it, and the check
 * of the per-part entries a collector's client view publishes (each attribute's or group's protocol, budget, format and
 * design constants).  The base of every protocol over records: spl, smp, rsfd, rsrfd ({@link MultiAttribute}), calm and
 * hdg ({@link GroupedCells}).  A record is a list in the schema's order or a map by attribute name.
 */
public abstract class RecordProtocol extends Protocol {
    private static final int MAX_ATTRIBUTES = 64;
    private static final int MAX_NAME_LENGTH = 64;
    private static final Set<String> RESERVED = new HashSet<>(Arrays.asList("attribute", "payload"));
    private static final Set<String> ENTRY_KEYS = new HashSet<>(Arrays.asList("name", "domain_size", "labels", "bounds", "protocol", "options"));
    private static final List<String> SCHEMA_OPTIONS_TAKEN = Arrays.asList("epsilon", "domain_size", "labels", "bounds");
    private static final String ATTRIBUTES_RULE = "a list of 1 to " + MAX_ATTRIBUTES + " attributes with distinct names, each with a 'name' (1 to "
        + MAX_NAME_LENGTH + " printable characters, not 'attribute' or 'payload') and either 'domain_size' (an int >= 2) and/or 'labels' "
        + "(distinct non-empty strings) or 'bounds' [lo, hi]; optionally 'protocol' and 'options'";

    /** Each attribute's value check (its protocol's, or a {@link ValueDomain}); set by the subclass. */
    protected List<BiFunction<Object, Integer, Object>> checkers;

    protected RecordProtocol(String name, Map<String, Object> config, Object[] rules, Map<String, Object> defaults) {
        super(name, config, recordRules(rules), defaults);
        floatKeys.add("bounds");
    }

    private static Map<String, Params.Rule> recordRules(Object[] extra) {
        Map<String, Params.Rule> rules = Params.rules("epsilon", Params.EPSILON, "attributes", attributesRule()); // Python's order
        rules.putAll(Params.rules(extra));
        return rules;
    }

    @Override
    public String kind() {
        return "multi";
    }

    /** The normalized schema entries (maps: name, domain_size [, labels] or bounds, protocol, options). */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> attributes() {
        return (List<Map<String, Object>>) params.get("attributes");
    }

    /** Whether a schema entry is numerical (it has bounds). */
    static boolean isNumerical(Map<String, Object> attribute) {
        return attribute.containsKey("bounds");
    }

    /** The parameter rule of {@code attributes} (Python's {@code Attributes}). */
    static Params.Rule attributesRule() {
        return new Params.Rule(false, () -> ATTRIBUTES_RULE, value -> {
            List<Object> list = Json.asList(value);
            if (list == null || list.isEmpty() || list.size() > MAX_ATTRIBUTES) throw new Params.Refused();
            List<Object> entries = new ArrayList<>();
            Set<Object> names = new HashSet<>();
            for (Object spec : list) {
                Map<String, Object> entry = schemaEntry(spec);
                entries.add(entry);
                names.add(entry.get("name"));
            }
            if (names.size() != entries.size()) throw new Params.Refused();
            return entries;
        });
    }

    /** One schema entry normalized as Python's {@code Attribute.to_dict} (only the keys that apply), or Refused. */
    private static Map<String, Object> schemaEntry(Object raw) {
        Map<String, Object> spec = Json.asObject(raw);
        if (spec == null || !ENTRY_KEYS.containsAll(spec.keySet())) throw new Params.Refused();
        Object name = spec.get("name");
        if (!(name instanceof String) || ((String) name).isEmpty() || ((String) name).length() > MAX_NAME_LENGTH || padded((String) name)) {
            throw new Params.Refused();
        }
        for (char c : ((String) name).toCharArray()) if (c < 32 || c == 127) throw new Params.Refused();
        if (RESERVED.contains(name)) throw new Params.Refused();
        boolean categorical = spec.containsKey("domain_size") || spec.containsKey("labels");
        if (categorical == spec.containsKey("bounds")) throw new Params.Refused();
        Object protocol = spec.get("protocol");
        if (protocol != null && (!(protocol instanceof String) || ((String) protocol).isEmpty())) throw new Params.Refused();
        Map<String, Object> extra = spec.containsKey("options") && spec.get("options") != null ? Json.asObject(spec.get("options")) : new LinkedHashMap<>();
        if (extra == null) throw new Params.Refused();
        for (String taken : SCHEMA_OPTIONS_TAKEN) if (extra.containsKey(taken)) throw new Params.Refused();
        Map<String, Object> options = new LinkedHashMap<>(new TreeMap<>(extra));
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("name", name);
        if (!categorical) {
            entry.put("bounds", Params.bounds().check(spec.get("bounds")));
        } else {
            Object labels = spec.get("labels");
            if (labels != null) labels = Params.labels().check(labels);
            Object size = spec.containsKey("domain_size") && spec.get("domain_size") != null ? spec.get("domain_size")
                : labels == null ? null : (long) ((List<?>) labels).size();
            if (!Json.isInteger(size) || ((Number) size).doubleValue() < 2 || ((Number) size).doubleValue() > Integer.MAX_VALUE) throw new Params.Refused();
            if (labels != null && ((List<?>) labels).size() != ((Number) size).longValue()) throw new Params.Refused();
            entry.put("domain_size", ((Number) size).longValue());
            if (labels != null) entry.put("labels", labels);
        }
        entry.put("protocol", protocol);
        entry.put("options", options);
        return entry;
    }

    /** Whether a name starts or ends with white space (JavaScript's trim would change it). */
    private static boolean padded(String name) {
        char first = name.charAt(0);
        char last = name.charAt(name.length() - 1);
        return Character.isWhitespace(first) || Character.isSpaceChar(first) || first == '\uFEFF'
            || Character.isWhitespace(last) || Character.isSpaceChar(last) || last == '\uFEFF';
    }

    /** The value check of one attribute without a protocol of its own (calm, hdg), naming this protocol. */
    @SuppressWarnings("unchecked")
    protected ValueDomain attributeDomain(Map<String, Object> attribute) {
        if (isNumerical(attribute)) {
            List<?> bounds = (List<?>) attribute.get("bounds");
            return ValueDomain.numerical(display(), ((Number) bounds.get(0)).doubleValue(), ((Number) bounds.get(1)).doubleValue());
        }
        return ValueDomain.categorical(display(), ((Number) attribute.get("domain_size")).intValue(), (List<String>) attribute.get("labels"));
    }

    private List<String> names() {
        List<String> names = new ArrayList<>();
        for (Map<String, Object> attribute : attributes()) names.add((String) attribute.get("name"));
        return names;
    }

    /** A record (a list in the schema's order, or a map by attribute name) as each attribute's checked value. */
    @Override
    public Object checkValue(Object record, int index) {
        List<String> names = names();
        List<?> values;
        if (record instanceof List) {
            values = (List<?>) record;
            if (values.size() != names.size()) {
                throw new InvalidValueTypeError("The 'values' argument of " + display() + ".privatize must hold records of " + names.size() + " attributes ("
                    + String.join(", ", names) + "). Got a list of " + values.size() + " at position " + index + ".");
            }
        } else if (record instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) record;
            List<String> missing = new ArrayList<>();
            List<Object> ordered = new ArrayList<>();
            for (String name : names) {
                if (!map.containsKey(name)) missing.add("'" + name + "'");
                ordered.add(map.get(name));
            }
            if (!missing.isEmpty()) {
                throw new InvalidValueTypeError("The 'values' argument of " + display() + ".privatize must hold records with every attribute ("
                    + String.join(", ", names) + "). The record at position " + index + " has no " + String.join(", ", missing) + ".");
            }
            values = ordered;
        } else {
            throw new InvalidValueTypeError("The 'values' argument of " + display() + ".privatize must hold records (lists in the schema's order, or maps by "
                + "attribute name). Got " + ValueDomain.typeOf(record) + " at position " + index + ".");
        }
        Object[] out = new Object[names.size()];
        for (int attribute = 0; attribute < out.length; attribute++) {
            try {
                out[attribute] = checkers.get(attribute).apply(values.get(attribute), index);
            } catch (OutOfDomainError error) {
                throw new OutOfDomainError(display() + ".privatize: attribute '" + names.get(attribute) + "': " + error.getMessage());
            } catch (InvalidValueTypeError error) {
                throw new InvalidValueTypeError(display() + ".privatize: attribute '" + names.get(attribute) + "': " + error.getMessage());
            }
        }
        return out;
    }

    /** Refuse a client view: it states {@code what} (this client derives otherwise). */
    protected InvalidParameterError refuseView(String what) {
        return new InvalidParameterError("The collector's client view states " + what + " for " + display() + ". The view is refused.");
    }

    /** One part of a record protocol: an attribute or a group, with its 1-D protocol. */
    public static final class Part {
        public final String name;
        public final Protocol inner;

        public Part(String name, Protocol inner) {
            this.name = name;
            this.inner = inner;
        }
    }

    /**
     * Check the per-part entries of a client view's design ({@code published}: Python's list of {@code {name, protocol,
     * epsilon, format, design}}) against this client's parts; {@code what} names a part ("attribute", "marginal", "grid").
     */
    protected void checkPartViews(Object published, List<Part> parts, String what) {
        if (published == null) return;
        List<Object> entries = Json.asList(published);
        if (entries == null || entries.size() != parts.size()) throw refuseView(Json.show(published) + " as its " + what + "s");
        for (int index = 0; index < entries.size(); index++) {
            Part part = parts.get(index);
            Map<String, Object> entry = Json.asObject(entries.get(index));
            if (entry == null || !part.name.equals(entry.get("name")) || !part.inner.name.equals(entry.get("protocol"))
                || !Json.same(entry.get("epsilon"), part.inner.epsilon())) {
                throw refuseView(what + " " + index + " as " + Json.show(entries.get(index)) + " (this client derives '" + part.name + "', " + part.inner.name
                    + " at epsilon " + part.inner.epsilon() + ")");
            }
            Map<String, Object> view = new LinkedHashMap<>();
            view.put("format", entry.get("format"));
            view.put("design", entry.get("design") == null ? new LinkedHashMap<String, Object>() : entry.get("design"));
            try {
                part.inner.checkView(view);
            } catch (InvalidParameterError error) {
                throw new InvalidParameterError(Character.toUpperCase(what.charAt(0)) + what.substring(1) + " '" + part.name + "': " + error.getMessage());
            }
        }
    }

    /** The checked value of an attribute or a group with which {@code inner}'s law has all its outputs (item 0, or 0.0). */
    static Object firstInput(Protocol inner) {
        return inner instanceof NumericalProtocol ? (Object) 0.0 : (Object) 0;
    }

    /** Row-wise Kronecker product of channel rows (attribute 0 slowest, as Python's {@code _kron_rows}). */
    static double[] kron(List<double[]> rows) {
        double[] out = rows.get(0).clone();
        for (int r = 1; r < rows.size(); r++) {
            double[] row = rows.get(r);
            double[] next = new double[out.length * row.length];
            for (int i = 0; i < out.length; i++) for (int j = 0; j < row.length; j++) next[i * row.length + j] = out[i] * row[j];
            out = next;
        }
        return out;
    }
}
