package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.RecordFormat;

/**
 * Split budget over records, "spl" (Arcolezi et al., CIKM 2021 "Spl"; {@code dpdist.local.multi.spl}): every attribute
 * randomized by its own protocol at epsilon / k, one field per attribute; the law is the product of the attributes'
 * laws (the records and their attributes: {@link MultiAttribute}).
 */
public final class SplitBudget extends MultiAttribute {
    public static final String PROTOCOL = "spl";
    /** Python's SPL epsilon: at least 1e-6 per attribute of the largest schema (64), at most 30. */
    private static final Params.Rule EPSILON = Params.privacyBudget(1e-6 * 64, "6.4e-05");

    public SplitBudget(Map<String, Object> config) {
        super(PROTOCOL, config, ProtocolIndex.attributeProtocols(), new Object[] {"epsilon", EPSILON}, Params.defaults());
        this.format = attributeFields();
    }

    @Override
    protected double[] budgets(int k) {
        double[] out = new double[k];
        for (int i = 0; i < k; i++) out[i] = (epsilon() * 1.0) / k; // privacy.split: epsilon * w / fsum(weights)
        return out;
    }

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        Object[] record = (Object[]) checked;
        for (int index = 0; index < inners.size(); index++) {
            inners.get(index).writeChecked(record[index], source, bytes, offset + ((RecordFormat) format).offsetOf(index));
        }
    }

    @Override
    public double[] channelRowChecked(Object checked) {
        Object[] record = (Object[]) checked;
        List<double[]> rows = new ArrayList<>();
        for (int index = 0; index < inners.size(); index++) rows.add(inners.get(index).channelRowChecked(record[index]));
        return kron(rows);
    }

    @Override
    public long reportIndex(byte[] row) {
        return mixedRadix(row);
    }
}
