package org.dpdist.client.protocols;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportBatch;

/** Base of categorical protocols over items 0 .. domain_size - 1 (or the config's public labels). */
public abstract class FrequencyProtocol extends Protocol {
    private ValueDomain domain;

    /**
     * The largest single array (bytes) a protocol's aggregate may need, Python's {@code MAX_ALLOCATION_BYTES} (2 GiB): a
     * domain whose aggregate would need more is refused when the protocol is built, as Python's {@code check_allocation}.
     */
    public static final long MAX_ALLOCATION_BYTES = 1L << 31;

    protected FrequencyProtocol(String name, Map<String, Object> config, Map<String, Params.Rule> rules, Map<String, Object> defaults) {
        super(name, config, rules, defaults);
        checkMemory(display(), domainSize(), bytesPerItem());
    }

    /** Bytes per item of Python's largest array of this protocol ({@code _item_bytes}: int64 counts, 16 for HR's two outputs, 0 for sketches). */
    protected int bytesPerItem() {
        return 8;
    }

    /** Refuse a domain_size whose largest array would exceed {@link #MAX_ALLOCATION_BYTES} (Python's check_allocation). */
    static void checkMemory(String display, long domainSize, int bytesPerItem) {
        long need = domainSize * bytesPerItem;
        if (bytesPerItem > 0 && need > MAX_ALLOCATION_BYTES) {
            throw new InvalidParameterError(String.format(Locale.ROOT, "The 'domain_size' parameter of %s is %,d: its aggregate would need %.1f GiB in one "
                + "array (%d bytes per item), over dpdist's limit of 2.0 GiB per allocation (dpdist.local.MAX_ALLOCATION_BYTES). The largest allowed "
                + "domain_size is %,d.", display, domainSize, need / (double) (1L << 30), bytesPerItem, MAX_ALLOCATION_BYTES / bytesPerItem));
        }
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

    @Override
    public long statisticSize() {
        return domainSize(); // a frequency oracle: one count per item
    }
}
