package org.dpdist.client;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * JSON text exactly as Python's {@code json.dumps(..., sort_keys=True)} writes it, so that a record header written here
 * is byte for byte the one the Python writer produces (and the JavaScript client's {@code src/pyjson.js}).
 *
 * <p>Python separates with ", " and ": ", escapes every non-ASCII character as \\uXXXX, and writes floats with
 * {@code repr()}: the shortest digits that read back as the same double (and, among those, the closest), but "1.0"
 * rather than "1", and exponent notation "1e-05" / "1e+16" outside 1e-4 &lt;= |x| &lt; 1e16.  The JDK's
 * {@code Double.toString} is not always shortest (before JDK 19, and on Android), so the digits are found here.  As in
 * the JavaScript client, the caller names the keys whose numbers are floats ({@code floatKeys}: a number under such a
 * key, at any depth, is written as a float); a {@code Double} elsewhere must have an integer value.
 */
public final class PyJson {
    private PyJson() {
    }

    /** {@code repr(x)} of a Python float. */
    public static String floatRepr(double x) {
        if (!Double.isFinite(x)) throw new IllegalArgumentException("JSON has no representation of " + x);
        if (x == 0) return (1 / x < 0) ? "-0.0" : "0.0";
        String sign = x < 0 ? "-" : "";
        BigDecimal shortest = shortestDigits(Math.abs(x));
        String digits = shortest.unscaledValue().toString();
        int point = digits.length() - shortest.scale(); // x = 0.digits * 10^point
        int exponent = point - 1;
        if (point > 16 || point < -3) {
            String head = digits.length() > 1 ? digits.charAt(0) + "." + digits.substring(1) : digits;
            String magnitude = String.valueOf(Math.abs(exponent));
            if (magnitude.length() < 2) magnitude = "0" + magnitude;
            return sign + head + "e" + (exponent < 0 ? "-" : "+") + magnitude;
        }
        if (point <= 0) return sign + "0." + zeros(-point) + digits;
        if (point >= digits.length()) return sign + digits + zeros(point - digits.length()) + ".0";
        return sign + digits.substring(0, point) + "." + digits.substring(point);
    }

    static String zeros(int count) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < count; i++) out.append('0');
        return out.toString();
    }

    /**
     * The shortest decimal that reads back as {@code x} (&gt; 0), and of those the closest to it (David Gay's shortest
     * mode, Python's repr), without trailing zeros: at each precision the nearest decimal, else the one on the other
     * side (a power of two has a narrower interval below it than above).
     */
    static BigDecimal shortestDigits(double x) {
        BigDecimal exact = new BigDecimal(x);
        for (int precision = 1; precision <= 17; precision++) {
            BigDecimal nearest = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
            if (readsBack(nearest, x)) return nearest.stripTrailingZeros();
            for (RoundingMode mode : new RoundingMode[] {RoundingMode.FLOOR, RoundingMode.CEILING}) {
                BigDecimal other = exact.round(new MathContext(precision, mode));
                if (readsBack(other, x)) return other.stripTrailingZeros();
            }
        }
        return exact.round(new MathContext(17, RoundingMode.HALF_EVEN)).stripTrailingZeros();
    }

    private static boolean readsBack(BigDecimal decimal, double x) {
        return Double.parseDouble(decimal.toString()) == x;
    }

    /** Append {@code text} as a JSON string: escaped as Python does, and with {@code ascii} every non-ASCII unit as \\uXXXX. */
    static void appendString(String text, StringBuilder out, boolean ascii) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20 || (ascii && c > 0x7f) || Character.isSurrogate(c) && !ascii && !pairedAt(text, i)) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /** Whether the surrogate at {@code i} is half of a pair (a lone one is escaped, as JSON.stringify does). */
    private static boolean pairedAt(String text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c)) return i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1));
        return i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
    }

    /** {@code json.dumps(value, sort_keys=True)}; numbers under a key of {@code floatKeys} (at any depth) are floats. */
    public static String dumps(Object value, Set<String> floatKeys) {
        StringBuilder out = new StringBuilder();
        dump(value, floatKeys == null ? Collections.<String>emptySet() : floatKeys, false, out);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    private static void dump(Object value, Set<String> floatKeys, boolean asFloat, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Boolean) {
            out.append(((Boolean) value) ? "true" : "false");
        } else if (value instanceof Number) {
            dumpNumber((Number) value, asFloat, out);
        } else if (value instanceof CharSequence) {
            appendString(value.toString(), out, true);
        } else if (value instanceof Map) {
            Map<Object, Object> map = (Map<Object, Object>) value;
            List<String> keys = new ArrayList<>();
            for (Object key : map.keySet()) keys.add(String.valueOf(key));
            Collections.sort(keys); // UTF-16 order, as the JavaScript client sorts
            out.append('{');
            for (int i = 0; i < keys.size(); i++) {
                if (i > 0) out.append(", ");
                String key = keys.get(i);
                appendString(key, out, true);
                out.append(": ");
                dump(map.get(key), floatKeys, floatKeys.contains(key), out);
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            boolean first = true;
            for (Object item : (Collection<Object>) value) {
                if (!first) out.append(", ");
                first = false;
                dump(item, floatKeys, asFloat, out);
            }
            out.append(']');
        } else if (value instanceof int[]) {
            List<Object> items = new ArrayList<>();
            for (int item : (int[]) value) items.add((long) item);
            dump(items, floatKeys, asFloat, out);
        } else {
            throw new IllegalArgumentException("no JSON form for " + value.getClass().getName());
        }
    }

    private static void dumpNumber(Number number, boolean asFloat, StringBuilder out) {
        if (asFloat) {
            out.append(floatRepr(number.doubleValue()));
            return;
        }
        if (!Json.isSafeInteger(number)) throw new IllegalArgumentException("expected an integer, got " + number);
        out.append(number instanceof Double || number instanceof Float ? String.valueOf((long) number.doubleValue()) : number.toString());
    }
}
