package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;

/**
 * One sampled attribute per record, "smp" (Arcolezi et al., CIKM 2021 "Smp"; {@code dpdist.local.multi.smp}): one
 * attribute j drawn uniformly, reported at epsilon with its index ({@link SampledGroups}: a group per attribute).
 */
public final class SampleOne extends MultiAttribute {
    public static final String PROTOCOL = "smp";

    private final SampledGroups groups;

    public SampleOne(Map<String, Object> config) {
        super(PROTOCOL, config, ProtocolIndex.attributeProtocols(), new Object[0], Params.defaults());
        List<String> names = new ArrayList<>();
        for (Map<String, Object> attribute : attributes()) names.add((String) attribute.get("name"));
        this.groups = new SampledGroups(inners, "attribute", names);
        this.format = groups.format;
    }

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        Object[] record = (Object[]) checked;
        groups.writeReport(chosen -> record[chosen], source, bytes, offset);
    }

    @Override
    public double[] channelRowChecked(Object checked) {
        Object[] record = (Object[]) checked;
        return groups.channelRow(group -> record[group]);
    }

    @Override
    public long reportIndex(byte[] row) {
        return groups.reportIndex(row);
    }

    @Override
    public long statisticSize() {
        return groups.statisticSize();
    }
}
