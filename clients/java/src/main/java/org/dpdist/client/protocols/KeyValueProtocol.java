package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.dpdist.client.InvalidValueTypeError;
import org.dpdist.client.Json;
import org.dpdist.client.OutOfDomainError;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;

/**
 * Key-value protocols, "privkv", "pckv-ue" and "pckv-grr", as {@code dpdist.local.keyvalue} (the JavaScript client's
 * {@code src/protocols/_keyvalue.js}): a user holds a set of (key, value) pairs, keys in [0, domain_size), each at most
 * once, values in [-1, 1]; the batch privatized is one set per user.  A set is a map {key: value} (integer keys, or a
 * JSON object's canonical decimal keys) or a list of [key, value] pairs; it is checked as Python's check_sets checks it
 * (the same refusals).  The draws are the same whatever the set, its size included; the discretization of a value (+1
 * w.p. (1 + v)/2) draws Bernoulli at Python's realized threshold ceil(t 2^53) 2^-53 (NumPy's U &lt; t).
 */
public abstract class KeyValueProtocol extends Protocol {
    /** An integer's canonical decimal form (what a JSON object's key for an integer key is). */
    private static final Pattern CANONICAL_INTEGER = Pattern.compile("0|-?[1-9][0-9]*");

    /** One user's checked set: the keys and their values, in the order given. */
    public static final class KeyValueSet {
        public final int[] keys;
        public final double[] values;

        public KeyValueSet(int[] keys, double[] values) {
            this.keys = keys;
            this.values = values;
        }

        /** The place of {@code key} in the set, -1 if it is not held. */
        public int indexOf(int key) {
            for (int at = 0; at < keys.length; at++) if (keys[at] == key) return at;
            return -1;
        }
    }

    protected KeyValueProtocol(String name, Map<String, Object> config, Object[] extra, Map<String, Object> defaults) {
        super(name, config, keyValueRules(extra), defaults);
    }

    private static Map<String, Params.Rule> keyValueRules(Object[] extra) {
        Map<String, Params.Rule> rules = Params.rules("epsilon", Params.EPSILON, "domain_size", Params.DOMAIN_SIZE);
        rules.putAll(Params.rules(extra));
        return rules;
    }

    @Override
    public String kind() {
        return "key_value";
    }

    public int domainSize() {
        return ((Number) params.get("domain_size")).intValue();
    }

    /** Python's {@code realized(t)}: the probability of {@code Generator.random() < t}, ceil(t 2^53) 2^-53 (exact). */
    public static double realized(double threshold) {
        double t = Math.min(Math.max(threshold, 0), 1);
        return Math.ceil(t * 9007199254740992.0) / 9007199254740992.0;
    }

    /** Pr[v* = +1] for {@code value} (Python's channel). */
    public static double up(double value) {
        return realized((1.0 + value) / 2.0);
    }

    /** {@code v* = +1} with probability (1 + v)/2 as Python draws it ({@code discretize}). */
    protected boolean discretize(double value, RandomSource source) {
        return source.bernoulli(realized((1.0 + value) / 2.0));
    }

    /** One user's set, checked (Python's {@code check_sets}): a {@link KeyValueSet}. */
    @Override
    public Object checkValue(Object set, int index) {
        String owner = "The 'values' argument of " + display() + ".privatize";
        List<Object[]> pairs = new ArrayList<>();
        boolean objectKeys = false; // a JSON object's keys are strings: only there is a canonical decimal string a key
        if (set instanceof Map) {
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) set).entrySet()) pairs.add(new Object[] {entry.getKey(), entry.getValue()});
            objectKeys = true;
        } else if (set instanceof List) {
            for (Object pair : (List<?>) set) {
                List<Object> two = Json.asList(pair);
                if (two == null || two.size() != 2) {
                    throw new InvalidValueTypeError(owner + " must hold (key, value) pairs. Got " + ValueDomain.typeOf(pair) + " for user " + index + ".");
                }
                pairs.add(new Object[] {two.get(0), two.get(1)});
            }
        } else {
            throw new InvalidValueTypeError(owner + " must hold one set of (key, value) pairs per user (a map {key: value} or a list of [key, value]). Got "
                + ValueDomain.typeOf(set) + " for user " + index + " instead.");
        }
        int[] keys = new int[pairs.size()];
        double[] values = new double[pairs.size()];
        Set<Integer> seen = new HashSet<>();
        int d = domainSize();
        for (int at = 0; at < keys.length; at++) {
            Object rawKey = pairs.get(at)[0];
            Object value = pairs.get(at)[1];
            // Python's check_sets takes int keys only: a string key is refused, except a map's canonical decimal one
            Object key = objectKeys && rawKey instanceof String && CANONICAL_INTEGER.matcher((String) rawKey).matches() ? Double.valueOf((String) rawKey) : rawKey;
            if (!Json.isInteger(key)) {
                throw new InvalidValueTypeError(owner + ": keys must be whole numbers (a map's keys may be their canonical decimal text). Got "
                    + ValueDomain.typeOf(rawKey) + " for user " + index + ".");
            }
            if (!(value instanceof Number)) {
                throw new InvalidValueTypeError(owner + ": values must be numbers. Got " + ValueDomain.typeOf(value) + " for user " + index + ".");
            }
            double k = ((Number) key).doubleValue();
            double v = ((Number) value).doubleValue();
            if (k < 0 || k >= d) throw new OutOfDomainError(owner + " must hold keys in [0, " + d + "); a key of user " + index + " is outside it (not shown: a user's keys are private).");
            if (!(Math.abs(v) <= 1)) throw new OutOfDomainError(owner + " must hold values in [-1, 1] (scale them first); a value of user " + index + " is outside it (not shown: private).");
            if (!seen.add((int) k)) {
                throw new OutOfDomainError(owner + " must hold each key at most once per user. A key appears twice for user " + index + " (not shown: private).");
            }
            keys[at] = (int) k;
            values[at] = v;
        }
        return new KeyValueSet(keys, values);
    }

    /** Write one report of a checked set at {@code offset}. */
    public abstract void writeReport(KeyValueSet set, RandomSource source, byte[] bytes, int offset);

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        writeReport((KeyValueSet) checked, source, bytes, offset);
    }

    /** Exact law of the report of a checked set. */
    public abstract double[] channelRow(KeyValueSet set);

    @Override
    public double[] channelRowChecked(Object checked) {
        return channelRow((KeyValueSet) checked);
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }
}
