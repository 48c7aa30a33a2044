package org.dpdist.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Parameter rules of the config, as {@code dpdist._validation} checks them in Python (the JavaScript client's
 * {@code src/params.js}), so that the client accepts exactly the configs the aggregator accepts and normalizes them the
 * same way (floats stay floats, defaults are filled in) before writing them into a record header.
 */
public final class Params {
    private Params() {
    }

    /** Thrown by a rule's check: the value is not allowed (the caller says which parameter). */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Refused() {
            super(null, null, false, false);
        }
    }

    /** A parameter's rule: what it allows ({@link #describe}), its check (the normalized value), whether it is a float. */
    public static final class Rule {
        public final boolean isFloat;
        /** A privacy parameter: refused with {@link InvalidPrivacyParameterError}. */
        public final boolean privacy;
        private final Supplier<String> description;
        private final Function<Object, Object> check;

        public Rule(boolean isFloat, Supplier<String> description, Function<Object, Object> check) {
            this(isFloat, false, description, check);
        }

        public Rule(boolean isFloat, boolean privacy, Supplier<String> description, Function<Object, Object> check) {
            this.isFloat = isFloat;
            this.privacy = privacy;
            this.description = description;
            this.check = check;
        }

        public String describe() {
            return description.get();
        }

        /** The normalized value, or {@link Refused}. */
        public Object check(Object value) {
            return check.apply(value);
        }
    }

    /** A value as a message shows it: a string in single quotes, anything else as JSON. */
    public static String show(Object value) {
        return value instanceof String ? "'" + value + "'" : Json.show(value);
    }

    private static String number(double x) {
        return x == Math.rint(x) && Math.abs(x) < 1e15 ? String.valueOf((long) x) : String.valueOf(x);
    }

    /** A finite float in the open interval (low, high). */
    public static Rule interval(double low, double high) {
        return new Rule(true, () -> {
            String text = "a finite float";
            if (low != Double.NEGATIVE_INFINITY) text += " > " + number(low);
            if (low != Double.NEGATIVE_INFINITY && high != Double.POSITIVE_INFINITY) text += " and";
            if (high != Double.POSITIVE_INFINITY) text += " < " + number(high);
            return text;
        }, value -> {
            if (!Json.isFinite(value)) throw new Refused();
            double x = ((Number) value).doubleValue();
            if (!(x > low && x < high)) throw new Refused();
            return x;
        });
    }

    /** A finite float in the closed interval [low, high]. */
    public static Rule closed(double low, double high) {
        return new Rule(true, () -> "a finite float >= " + number(low) + " and <= " + number(high), value -> {
            if (!Json.isFinite(value)) throw new Refused();
            double x = ((Number) value).doubleValue();
            if (!(x >= low && x <= high)) throw new Refused();
            return x;
        });
    }

    /** An integer in [low, high] (a float with an integer value is accepted, as in Python). */
    public static Rule integer(long low, long high) {
        return new Rule(false, () -> "an int in [" + low + ", " + high + "]", value -> {
            if (!Json.isInteger(value)) throw new Refused();
            double x = ((Number) value).doubleValue();
            if (x < low || x > high) throw new Refused();
            return value instanceof Long || value instanceof Integer ? ((Number) value).longValue() : (long) x;
        });
    }

    public static Rule bool() {
        return new Rule(false, () -> "a bool", value -> {
            if (!(value instanceof Boolean)) throw new Refused();
            return value;
        });
    }

    public static Rule options(String... values) {
        List<String> allowed = Arrays.asList(values);
        return new Rule(false, () -> {
            List<String> shown = new ArrayList<>();
            for (String value : values) shown.add(show(value));
            return "one of " + String.join(", ", shown);
        }, value -> {
            if (!allowed.contains(value)) throw new Refused();
            return value;
        });
    }

    /** A pair [lo, hi] of finite floats with lo &lt; hi. */
    public static Rule bounds() {
        return new Rule(true, () -> "a pair [lo, hi] of finite floats with lo < hi", value -> {
            List<Object> pair = Json.asList(value);
            if (pair == null || pair.size() != 2 || !Json.isFinite(pair.get(0)) || !Json.isFinite(pair.get(1))) throw new Refused();
            double lo = ((Number) pair.get(0)).doubleValue();
            double hi = ((Number) pair.get(1)).doubleValue();
            if (!(lo < hi)) throw new Refused();
            List<Object> out = new ArrayList<>();
            out.add(lo);
            out.add(hi);
            return out;
        });
    }

    /** None (null) or what {@code inner} allows. */
    public static Rule optional(Rule inner) {
        return new Rule(inner.isFloat, () -> "None (null) or " + inner.describe(), value -> value == null ? null : inner.check(value));
    }

    /** A public label domain: a list of at least 2 distinct non-empty strings (item i is labels[i]). */
    public static Rule labels() {
        return new Rule(false, () -> "a list of at least 2 distinct non-empty strings", value -> {
            List<Object> list = Json.asList(value);
            if (list == null || list.size() < 2) throw new Refused();
            List<Object> out = new ArrayList<>();
            for (Object label : list) {
                if (!(label instanceof String) || ((String) label).isEmpty()) throw new Refused();
                out.add(label);
            }
            if (new HashSet<>(out).size() != out.size()) throw new Refused();
            return out;
        });
    }

    /**
     * The supported privacy budget of every local protocol, Python's {@code LOCAL_EPSILON} (docs/explanation/design.md, "Supported
     * epsilon"): 1e-6 &lt;= epsilon &lt;= 30, refused outside with {@link InvalidPrivacyParameterError}.
     */
    public static final Rule EPSILON = privacyBudget(1e-6, "1e-06");

    /** A privacy budget in [low, 30] ({@code lowText}: low as Python's {@code :g} writes it, for the message). */
    public static Rule privacyBudget(double low, String lowText) {
        Rule closed = closed(low, 30.0);
        return new Rule(true, true, () -> "a finite float >= " + lowText + " and <= 30", closed::check);
    }
    public static final Rule DOMAIN_SIZE = integer(2, Integer.MAX_VALUE);

    /** The rules every frequency protocol takes ({@code labels} optional, as in Python), then {@code extra}. */
    public static Map<String, Rule> frequencyRules(Object... extra) {
        Map<String, Rule> rules = rules("epsilon", EPSILON, "domain_size", DOMAIN_SIZE, "labels", optional(labels()));
        rules.putAll(rules(extra));
        return rules;
    }

    /** An ordered map of rules from (name, rule) pairs. */
    public static Map<String, Rule> rules(Object... pairs) {
        Map<String, Rule> rules = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) rules.put((String) pairs[i], (Rule) pairs[i + 1]);
        return rules;
    }

    /** An ordered map of defaults from (name, value) pairs (a value may be null: None). */
    public static Map<String, Object> defaults(Object... pairs) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) defaults.put((String) pairs[i], pairs[i + 1]);
        return defaults;
    }

    /** The normalized parameters (defaults filled in, every rule's key present) and the keys whose numbers are floats. */
    public static final class Checked {
        public final Map<String, Object> params;
        public final Set<String> floatKeys;

        Checked(Map<String, Object> params, Set<String> floatKeys) {
            this.params = params;
            this.floatKeys = floatKeys;
        }
    }

    /** Check {@code config} against {@code rules} (name -&gt; rule) and {@code defaults}; {@code display} names the protocol. */
    public static Checked check(String display, Map<String, Object> config, Map<String, Rule> rules, Map<String, Object> defaults) {
        for (String key : config.keySet()) {
            if (key.equals("protocol") || key.equals("version")) continue;
            if (!rules.containsKey(key)) {
                List<String> names = new ArrayList<>();
                for (String name : rules.keySet()) names.add(show(name));
                throw new InvalidParameterError(display + " got the unknown parameter '" + key + "'; its parameters are " + String.join(", ", names) + ".");
            }
        }
        Map<String, Object> fallback = new LinkedHashMap<>(defaults);
        if (rules.containsKey("labels") && config.get("labels") instanceof List && !config.containsKey("domain_size")) {
            fallback.put("domain_size", (long) ((List<?>) config.get("labels")).size()); // domain_size defaults to the labels' count
        }
        Map<String, Object> params = new LinkedHashMap<>();
        Set<String> floatKeys = new HashSet<>();
        for (Map.Entry<String, Rule> entry : rules.entrySet()) {
            String key = entry.getKey();
            Rule rule = entry.getValue();
            if (!config.containsKey(key) && !fallback.containsKey(key)) {
                throw new InvalidParameterError(display + " needs the parameter '" + key + "'; it must be " + rule.describe() + ".");
            }
            Object value = config.containsKey(key) ? config.get(key) : fallback.get(key);
            try {
                params.put(key, rule.check(value));
            } catch (Refused | ClassCastException refused) {
                String message = "The '" + key + "' parameter of " + display + " must be " + rule.describe() + ". Got " + show(value) + " instead.";
                throw rule.privacy ? new InvalidPrivacyParameterError(message) : new InvalidParameterError(message);
            }
            if (rule.isFloat) floatKeys.add(key);
        }
        if (params.containsKey("labels") && params.get("labels") == null) params.remove("labels"); // only given labels are in the config
        Object labels = params.get("labels");
        if (labels != null && ((List<?>) labels).size() != ((Number) params.get("domain_size")).longValue()) {
            throw new InvalidParameterError("The 'labels' parameter of " + display + " must hold domain_size=" + params.get("domain_size")
                + " labels. Got " + ((List<?>) labels).size() + " label(s) instead.");
        }
        return new Checked(params, floatKeys);
    }
}
