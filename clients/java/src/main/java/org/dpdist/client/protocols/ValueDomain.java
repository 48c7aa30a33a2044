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

    private ValueDomain(String display, boolean categorical, int size, List<String> labels, double low, double high) {
        this.display = display;
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
        return new ValueDomain(display, true, size, labels, 0, 0);
    }

    /** Reals in [low, high]. */
    public static ValueDomain numerical(String display, double low, double high) {
        return new ValueDomain(display, false, 0, null, low, high);
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
                    + size + ")). Got " + Json.show(value) + " at position " + index + ", not a label.");
            }
            return item;
        }
        if (!Json.isInteger(value)) {
            throw new InvalidValueTypeError("The 'values' argument of " + display + ".privatize must hold integers in [0, " + size + "). Got "
                + Json.show(value) + " at position " + index + " instead.");
        }
        double x = ((Number) value).doubleValue();
        if (x < 0 || x >= size) {
            throw new OutOfDomainError("The 'values' argument of " + display + ".privatize must hold integers in [0, " + size + "). Got "
                + Json.show(value) + " at position " + index + ", outside it.");
        }
        return (int) x;
    }

    /** A real in the bounds, as its place in [0, 1]. */
    public double real(Object value, int index) {
        if (!(value instanceof Number)) {
            throw new InvalidValueTypeError("The 'values' argument of " + display + ".privatize must hold real numbers in [" + low + ", " + high
                + "]. Got " + Json.show(value) + " at position " + index + " instead.");
        }
        return real(((Number) value).doubleValue(), index);
    }

    /** {@link #real(Object, int)} of a double. */
    public double real(double x, int index) {
        if (!Double.isFinite(x)) {
            throw new OutOfDomainError("The 'values' argument of " + display + ".privatize must hold finite values. Got " + x + " at position " + index + ".");
        }
        if (x < low || x > high) {
            throw new OutOfDomainError("The 'values' argument of " + display + ".privatize must lie in bounds [" + low + ", " + high + "]. Got " + x
                + " at position " + index + ", outside.");
        }
        return Math.min(Math.max((x - low) / (high - low), 0), 1); // as NumericalProtocol.to_unit + clip
    }

    /** The label of an item, or its number. */
    public String labelOf(int item) {
        return labels == null ? String.valueOf(item) : labels.get(item);
    }
}
