package org.dpdist.client;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON (RFC 8259) without a dependency: {@link #parse} reads text into {@code Map<String, Object>} (keys in their
 * order), {@code List<Object>}, {@code String}, {@code Long} (an integer literal that fits), {@code Double} (any other
 * number), {@code Boolean} and {@code null}; {@link #write} writes such values back compactly (a {@code Double} with
 * digits that read back as the same double, and a point, so a float stays a float for a Python reader).  The client's configs, client views, memos,
 * ledgers and token stores are this JSON; the record headers are written by {@link PyJson}, byte for byte as Python.
 */
public final class Json {
    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /**
     * The value of the JSON {@code text}.
     *
     * @throws IllegalArgumentException naming the offset of the first error
     */
    public static Object parse(String text) {
        Json parser = new Json(text);
        parser.space();
        Object value = parser.value(0);
        parser.space();
        if (parser.at != text.length()) throw parser.error("unexpected text after the value");
        return value;
    }

    /**
     * The value of the JSON {@code body} (UTF-8) of an answer read within {@code limit} bytes, unless it may hold more values
     * or containers than {@link #mostValuesWithin} allows (16 MiB of {@code [{},{},...]} held ~460 MB on
     * the heap, parsed): then an IllegalArgumentException saying so, nothing parsed.
     */
    public static Object parseAnswer(byte[] body, int limit) {
        String heavy = tooManyValues(body, limit);
        if (heavy != null) throw new IllegalArgumentException(heavy + " within " + limit + " bytes, not parsed");
        return parse(new String(body, StandardCharsets.UTF_8));
    }

    /** Why the JSON {@code body} of an answer read within {@code limit} bytes is not parsed (too many values), or null. */
    static String tooManyValues(byte[] body, int limit) {
        long[] most = mostValuesWithin(limit);
        long[] counted = valuesUpperBound(body);
        if (counted[0] > most[1]) return "JSON of more than " + most[1] + " arrays and objects";
        if (counted[1] > most[0]) return "JSON of more than " + most[0] + " values";
        return null;
    }

    /**
     * At least the arrays and objects, and the values (containers, keys, scalars), the JSON {@code body} (UTF-8) holds:
     * {@code {containers, values}}, the bytes {@code [} and <code>{</code>, and those plus {@code ,} and {@code :}, plus one
     * (those inside strings count too: an upper bound; as Python's {@code dpdist._json.values_upper_bound}).
     */
    public static long[] valuesUpperBound(byte[] body) {
        long containers = 0;
        long separators = 0;
        for (byte at : body) {
            if (at == '[' || at == '{') containers++;
            else if (at == ',' || at == ':') separators++;
        }
        return new long[] {containers, containers + separators + 1};
    }

    /**
     * The most values, and the most arrays and objects, JSON within {@code limit} bytes may hold before it is parsed:
     * one value per 8 bytes, at least 65,536, at most 2^20 containers (Python's {@code dpdist._json.most_values_within}).
     */
    public static long[] mostValuesWithin(long limit) {
        long values = Math.max(1L << 16, limit / 8);
        return new long[] {values, Math.min(values, 1L << 20)};
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("invalid JSON at offset " + at + ": " + what);
    }

    private void space() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
            at++;
        }
    }

    private Object value(int depth) {
        if (depth > 512) throw error("nested too deep");
        if (at >= text.length()) throw error("unexpected end");
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return number();
                throw error("unexpected character '" + c + "'");
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) throw error("expected " + word);
        at += word.length();
        return value;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> out = new LinkedHashMap<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == '}') {
            at++;
            return out;
        }
        while (true) {
            space();
            if (at >= text.length() || text.charAt(at) != '"') throw error("expected a string key");
            String key = string();
            space();
            if (at >= text.length() || text.charAt(at) != ':') throw error("expected ':'");
            at++;
            space();
            out.put(key, value(depth + 1));
            space();
            if (at >= text.length()) throw error("unexpected end of an object");
            char c = text.charAt(at++);
            if (c == '}') return out;
            if (c != ',') throw error("expected ',' or '}'");
        }
    }

    private List<Object> array(int depth) {
        List<Object> out = new ArrayList<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == ']') {
            at++;
            return out;
        }
        while (true) {
            space();
            out.add(value(depth + 1));
            space();
            if (at >= text.length()) throw error("unexpected end of an array");
            char c = text.charAt(at++);
            if (c == ']') return out;
            if (c != ',') throw error("expected ',' or ']'");
        }
    }

    private String string() {
        at++; // the opening quote
        StringBuilder out = new StringBuilder();
        while (true) {
            if (at >= text.length()) throw error("unterminated string");
            char c = text.charAt(at++);
            if (c == '"') return out.toString();
            if (c < 0x20) throw error("control character in a string");
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (at >= text.length()) throw error("unterminated escape");
            char e = text.charAt(at++);
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u':
                    if (at + 4 > text.length()) throw error("short \\u escape");
                    try {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    } catch (NumberFormatException bad) {
                        throw error("bad \\u escape");
                    }
                    at += 4;
                    break;
                default:
                    throw error("bad escape \\" + e);
            }
        }
    }

    private Object number() {
        int start = at;
        if (text.charAt(at) == '-') at++;
        int digits = at;
        while (at < text.length() && Character.isDigit(text.charAt(at)) && text.charAt(at) < 128) at++;
        if (at == digits) throw error("a number needs digits");
        if (text.charAt(digits) == '0' && at - digits > 1) throw error("leading zero");
        boolean integral = true;
        if (at < text.length() && text.charAt(at) == '.') {
            integral = false;
            at++;
            int fraction = at;
            while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') at++;
            if (at == fraction) throw error("a fraction needs digits");
        }
        if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
            integral = false;
            at++;
            if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) at++;
            int exponent = at;
            while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') at++;
            if (at == exponent) throw error("an exponent needs digits");
        }
        String literal = text.substring(start, at);
        if (integral) {
            try {
                return Long.parseLong(literal);
            } catch (NumberFormatException tooLarge) {
                return Double.parseDouble(literal); // as JavaScript reads it
            }
        }
        return Double.parseDouble(literal);
    }

    /** Compact JSON text of {@code value} (maps in their order; a {@code Double} as a float, ints as ints). */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Boolean) {
            out.append(value.toString());
        } else if (value instanceof Double || value instanceof Float) {
            double x = ((Number) value).doubleValue();
            if (!Double.isFinite(x)) throw new IllegalArgumentException("JSON has no representation of " + x);
            out.append(Double.toString(x)); // round-trips, and a float stays a float ("3.0") for a Python reader
        } else if (value instanceof Number) {
            out.append(value.toString());
        } else if (value instanceof CharSequence) {
            PyJson.appendString(value.toString(), out, false);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<Object, Object> entry : ((Map<Object, Object>) value).entrySet()) {
                if (!first) out.append(',');
                first = false;
                PyJson.appendString(String.valueOf(entry.getKey()), out, false);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            boolean first = true;
            for (Object item : (Collection<Object>) value) {
                if (!first) out.append(',');
                first = false;
                write(item, out);
            }
            out.append(']');
        } else if (value instanceof int[]) {
            out.append('[');
            int[] items = (int[]) value;
            for (int i = 0; i < items.length; i++) out.append(i == 0 ? "" : ",").append(items[i]);
            out.append(']');
        } else if (value instanceof double[]) {
            out.append('[');
            double[] items = (double[]) value;
            for (int i = 0; i < items.length; i++) {
                if (!Double.isFinite(items[i])) throw new IllegalArgumentException("JSON has no representation of " + items[i]);
                out.append(i == 0 ? "" : ",").append(Double.toString(items[i]));
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("no JSON form for " + value.getClass().getName());
        }
    }

    // ---------------------------------------------------------------- reading parsed values

    /** Whether {@code value} is a parsed JSON object. */
    public static boolean isObject(Object value) {
        return value instanceof Map;
    }

    /** {@code value} as a JSON object (a map), or null when it is not one. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> asObject(Object value) {
        return value instanceof Map ? (Map<String, Object>) value : null;
    }

    /** {@code value} as a JSON array (a list), or null when it is not one. */
    @SuppressWarnings("unchecked")
    public static List<Object> asList(Object value) {
        return value instanceof List ? (List<Object>) value : null;
    }

    /** Whether {@code value} is a number with an integer value (as JavaScript's Number.isInteger: 3.0 is one). */
    public static boolean isInteger(Object value) {
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) return true;
        if (value instanceof Double || value instanceof Float) {
            double x = ((Number) value).doubleValue();
            return !Double.isInfinite(x) && x == Math.floor(x);
        }
        return false;
    }

    /** Whether {@code value} is an integer in [-(2^53 - 1), 2^53 - 1] (JavaScript's Number.isSafeInteger). */
    public static boolean isSafeInteger(Object value) {
        if (!isInteger(value)) return false;
        double x = ((Number) value).doubleValue();
        if (value instanceof Long) return Math.abs((Long) value) <= 9007199254740991L;
        return Math.abs(x) <= 9007199254740991.0;
    }

    /** Whether {@code value} is a finite number. */
    public static boolean isFinite(Object value) {
        return value instanceof Number && Double.isFinite(((Number) value).doubleValue());
    }

    /** The text of {@code value} as messages show it: JSON, or its string form when it has none. */
    public static String show(Object value) {
        try {
            return write(value);
        } catch (IllegalArgumentException none) {
            return String.valueOf(value);
        }
    }

    /** {@code x} to 6 significant digits, as a message shows it (JavaScript's {@code Number(x.toPrecision(6))}). */
    public static String sixDigits(double x) {
        if (!Double.isFinite(x) || x == 0) return x == 0 ? "0" : String.valueOf(x);
        double rounded = new java.math.BigDecimal(x).round(new java.math.MathContext(6)).doubleValue();
        String text = PyJson.floatRepr(rounded);
        return text.endsWith(".0") ? text.substring(0, text.length() - 2) : text;
    }

    /** Two parsed values equal as JSON (numbers by value, so that 2 and 2.0 are equal). */
    public static boolean same(Object a, Object b) {
        if (a == null || b == null) return a == b;
        if (a instanceof Number && b instanceof Number) return ((Number) a).doubleValue() == ((Number) b).doubleValue();
        if (a instanceof List && b instanceof List) {
            List<?> x = (List<?>) a;
            List<?> y = (List<?>) b;
            if (x.size() != y.size()) return false;
            for (int i = 0; i < x.size(); i++) if (!same(x.get(i), y.get(i))) return false;
            return true;
        }
        if (a instanceof Map && b instanceof Map) {
            Map<?, ?> x = (Map<?, ?>) a;
            Map<?, ?> y = (Map<?, ?>) b;
            if (!x.keySet().equals(y.keySet())) return false;
            for (Object key : x.keySet()) if (!same(x.get(key), y.get(key))) return false;
            return true;
        }
        return a.equals(b);
    }
}
