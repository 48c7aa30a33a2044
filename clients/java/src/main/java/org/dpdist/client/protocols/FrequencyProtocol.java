package org.dpdist.client.protocols;

import java.util.List;
import java.util.Map;

import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportBatch;

/** Base of categorical protocols over items 0 .. domain_size - 1 (or the config's public labels). */
public abstract class FrequencyProtocol extends Protocol {
    private ValueDomain domain;

    protected FrequencyProtocol(String name, Map<String, Object> config, Map<String, Params.Rule> rules, Map<String, Object> defaults) {
        super(name, config, rules, defaults);
    }

    @Override
    public String kind() {
        return "frequency";
    }

    public int domainSize() {
        return ((Number) params.get("domain_size")).intValue();
    }

    /** The public label domain (null: items are 0 .. d-1). */
    @SuppressWarnings("unchecked")
    public List<String> labels() {
        return (List<String>) params.get("labels");
    }

    /** An item (an integer in [0, d)) or one of the config's labels, as the item it names (an Integer). */
    @Override
    public Object checkValue(Object value, int index) {
        return checkItem(value, index);
    }

    /** {@link #checkValue} as an int. */
    public int checkItem(Object value, int index) {
        if (domain == null) domain = ValueDomain.categorical(display(), domainSize(), labels());
        return domain.item(value, index);
    }

    /** Write one report of {@code item} at {@code offset}. */
    public abstract void writeReport(int item, RandomSource source, byte[] bytes, int offset);

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        writeReport((Integer) checked, source, bytes, offset);
    }

    /** Randomize items (ints in [0, d), all checked before anything is drawn): one report per item. */
    public ReportBatch privatizeItems(int[] items, RandomSource source) {
        int d = domainSize();
        for (int i = 0; i < items.length; i++) {
            if (items[i] < 0 || items[i] >= d) {
                throw ValueDomain.outsideDomain(display(), d, i);
            }
        }
        int rowBytes = rowBytes();
        byte[] bytes = new byte[items.length * rowBytes];
        for (int i = 0; i < items.length; i++) writeReport(items[i], source, bytes, i * rowBytes);
        return batchOf(items.length, bytes);
    }

    @Override
    public ReportBatch privatize(List<?> values, RandomSource source) {
        if (values == null) return super.privatize(values, source);
        int[] items = new int[values.size()];
        for (int i = 0; i < items.length; i++) items[i] = checkItem(values.get(i), i);
        return privatizeItems(items, source);
    }

    /** Exact law of the report of {@code item} over Python's columns. */
    public abstract double[] channelRow(int item);

    @Override
    public double[] channelRowChecked(Object checked) {
        return channelRow((int) (Integer) checked);
    }

    /** The label of an item, or its number. */
    public String labelOf(int item) {
        return labels() == null ? String.valueOf(item) : labels().get(item);
    }
}
