package org.dpdist.client.protocols;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.InvalidValueTypeError;
import org.dpdist.client.Json;
import org.dpdist.client.OutOfDomainError;

/**
 * The values of one dimension and their check: items of a categorical domain (integers in [0, d), or its public labels),
 * or reals in bounds (rescaled to [0, 1]).  A 1-D protocol checks its values with its own; a record of calm or hdg checks
 * each attribute's with one ({@code attributeDomain} of the JavaScript client's records.js), naming the protocol.
 */
public final class ValueDomain {
    private final String display;
    private final boolean categorical;
    private final int size;
    private final List<String> labels;
    private final Map<String, Integer> itemOfLabel;
    private final double low;
    private final double high;
    private final boolean circular;

    private ValueDomain(String display, boolean categorical, int size, List<String> labels, double low, double high, boolean circular) {
        this.display = display;
        this.circular = circular;
        this.categorical = categorical;
        this.size = size;
        this.labels = labels;
        this.low = low;
        this.high = high;
        Map<String, Integer> items = new HashMap<>();
        if (labels != null) for (int item = 0; item < labels.size(); item++) items.put(labels.get(item), item);
        this.itemOfLabel = items;
    }

    /** Items 0 .. d-1, or the labels (null: none). */
    public static ValueDomain categorical(String display, int size, List<String> labels) {
        return new ValueDomain(display, true, size, labels, 0, 0, false);
    }

    /** Reals in [low, high]: a value outside is clipped to the nearest bound (Python's {@code clip=True}). */
    public static ValueDomain numerical(String display, double low, double high) {
        return new ValueDomain(display, false, 0, null, low, high, false);
    }

    /**
     * One period [low, high] of a circle (opm-circular): a finite value outside is wrapped around,
     * {@code low + (x - low) mod (high - low)} (Python's {@code wrap_real_values}); an infinite one is clipped.
     */
    public static ValueDomain circle(String display, double low, double high) {
        return new ValueDomain(display, false, 0, null, low, high, true);
    }

    public boolean isCategorical() {
        return categorical;
    }

    /** The checked value: an item (Integer) or a place in [0, 1] (Double). */
    public Object check(Object value, int index) {
        return categorical ? (Object) item(value, index) : (Object) real(value, index);
    }

    /** An item (an integer in [0, d)) or one of the labels, as the item it names. */
    public int item(Object value, int index) {
        if (value instanceof String && labels != null) {
            Integer item = itemOfLabel.get(value);
            if (item == null) {
                throw new OutOfDomainError("The 'values' argument of " + display + ".privatize must hold labels of the campaign's domain (or items in [0, "
                    + size + ")). The string at position " + index + " is not a label (not shown: a user's value is private).");
            }
            return item;
        }
        if (!Json.isInteger(value)) {
            throw new InvalidValueTypeError("The 'values' argument of " + display + ".privatize must hold integers in [0, " + size + "). Got "
                + typeOf(value) + " at position " + index + " instead.");
        }
        double x = ((Number) value).doubleValue();
        if (x < 0 || x >= size) {
            throw outsideDomain(display, size, index);
        }
        return (int) x;
    }

    /** A real in the bounds, as its place in [0, 1]. */
    public double real(Object value, int index) {
        if (!(value instanceof Number)) {
            throw new InvalidValueTypeError("The 'values' argument of " + display + ".privatize must hold real numbers in [" + low + ", " + high
                + "]. Got " + typeOf(value) + " at position " + index + " instead.");
        }
        return real(((Number) value).doubleValue(), index);
    }

    /**
     * {@link #real(Object, int)} of a double: a value below the bounds ({@code -Infinity} included) is randomized as
     * {@code low}, one above as {@code high}, on a circle a finite one outside is wrapped around, so that whether a
     * report is made never depends on the value; a missing value (NaN) is refused, naming its position only.
     */
    public double real(double x, int index) {
        if (Double.isNaN(x)) {
            throw new OutOfDomainError("The 'values' argument of " + display + ".privatize must hold numbers; the value at position " + index
                + " is missing (NaN). Map a missing value to a number before reporting.");
        }
        if (circular && Double.isFinite(x) && (x < low || x > high)) {
            double period = high - low;
            double r = (x - low) % period;
            if (r < 0) r += period; // Python's float modulo: the sign of the period
            x = low + r;
        }
        double clipped = Math.min(Math.max(x, low), high);
        return Math.min(Math.max((clipped - low) / (high - low), 0), 1); // as NumericalProtocol.to_unit + clip
    }

    /** The refusal of an item outside [0, size) at {@code index}: the value itself is not in the message (it is private). */
    public static OutOfDomainError outsideDomain(String display, long size, int index) {
        return new OutOfDomainError("The 'values' argument of " + display + ".privatize must hold integers in [0, " + size + "). The item at position "
            + index + " is outside it (not shown: a user's value is private). Map every value into the campaign's domain before reporting: "
            + "a refusal is the app's error, raised before anything is drawn or sent.");
    }

    /** The type of a value a message may name instead of the value. */
    public static String typeOf(Object value) {
        return value == null ? "null" : "a " + value.getClass().getSimpleName();
    }

    /** The label of an item, or its number. */
    public String labelOf(int item) {
        return labels == null ? String.valueOf(item) : labels.get(item);
    }
}
