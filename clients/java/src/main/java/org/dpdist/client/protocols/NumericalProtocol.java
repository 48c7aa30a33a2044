package org.dpdist.client.protocols;

import java.util.List;
import java.util.Map;

import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportBatch;

/** Base of numerical protocols over reals in bounds = [lo, hi], rescaled to [0, 1] inside. */
public abstract class NumericalProtocol extends Protocol {
    private ValueDomain domain;

    protected NumericalProtocol(String name, Map<String, Object> config, Map<String, Params.Rule> rules, Map<String, Object> defaults) {
        super(name, config, rules, defaults);
    }

    @Override
    public String kind() {
        return "numerical";
    }

    public double low() {
        return ((Number) ((List<?>) params.get("bounds")).get(0)).doubleValue();
    }

    public double high() {
        return ((Number) ((List<?>) params.get("bounds")).get(1)).doubleValue();
    }

    /** Whether the bounds are one period of a circle (a value outside is wrapped around, not clipped). */
    protected boolean circular() {
        return false;
    }

    /** A real, clipped into the bounds (wrapped on a circle), as its place in [0, 1] (a Double). */
    @Override
    public Object checkValue(Object value, int index) {
        return checkReal(value, index);
    }

    /** {@link #checkValue} as a double. */
    public double checkReal(Object value, int index) {
        return domain().real(value, index);
    }

    private ValueDomain domain() {
        if (domain == null) domain = circular() ? ValueDomain.circle(display(), low(), high()) : ValueDomain.numerical(display(), low(), high());
        return domain;
    }

    /** Write one report of the unit-interval value {@code u} at {@code offset}. */
    public abstract void writeReport(double u, RandomSource source, byte[] bytes, int offset);

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        writeReport((Double) checked, source, bytes, offset);
    }

    /** Randomize reals, clipped into the bounds (all checked before anything is drawn): one report per value. */
    public ReportBatch privatizeValues(double[] values, RandomSource source) {
        double[] units = new double[values.length];
        for (int i = 0; i < values.length; i++) units[i] = domain().real(values[i], i);
        int rowBytes = rowBytes();
        byte[] bytes = new byte[values.length * rowBytes];
        for (int i = 0; i < values.length; i++) writeReport(units[i], source, bytes, i * rowBytes);
        return batchOf(values.length, bytes);
    }

    /** Exact law of the report of the unit-interval value {@code u} over Python's columns. */
    public abstract double[] channelRow(double u);

    @Override
    public double[] channelRowChecked(Object checked) {
        return channelRow((double) (Double) checked);
    }
}
