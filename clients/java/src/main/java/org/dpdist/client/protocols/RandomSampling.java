package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.dpdist.client.EntryPoint;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.RandomSource;
import org.dpdist.client.RecordFormat;

/**
 * Random sampling plus fake data, the base of "rsfd" (RS+FD, CIKM 2021) and "rsrfd" (RS+RFD, PVLDB 2023): one attribute
 * j drawn uniformly and randomized at epsilon, a fake report in the same field for every other attribute
 * ({@link FakeData}), so the index is hidden; law (1/k) sum_j M_j(y_j | x_j) prod_{i != j} F_i(y_i).
 */
public abstract class RandomSampling extends MultiAttribute {
    /** RS+FD's oracles (pure oracles whose support of an item is one Bernoulli per report). */
    private static final Set<String> ORACLES = new HashSet<>(Arrays.asList("grr", "oue", "sue", "olh", "ss"));

    protected final List<FakeData> fakes = new ArrayList<>();

    protected RandomSampling(String name, Map<String, Object> config, Map<String, EntryPoint<?>> table, Object[] extraRules, Map<String, Object> defaults) {
        super(name, config, table, extraRules, defaults);
        for (int index = 0; index < inners.size(); index++) fakes.add(fakeData((FrequencyProtocol) inners.get(index), index));
        this.format = attributeFields();
    }

    /** The fake data of attribute {@code index}, randomized by {@code inner}. */
    protected abstract FakeData fakeData(FrequencyProtocol inner, int index);

    @Override
    protected Set<String> allowed(Map<String, Object> attribute, Map<String, EntryPoint<?>> table) {
        if (isNumerical(attribute)) {
            throw new InvalidParameterError("The 'attributes' parameter of " + display() + " must hold categorical attributes (random sampling plus fake data "
                + "estimates frequencies). Attribute '" + attribute.get("name") + "' has bounds: use spl or smp for numerical attributes.");
        }
        return ORACLES;
    }

    @Override
    protected String defaultProtocol(Map<String, Object> attribute, double epsilon) {
        throw new InvalidParameterError("The 'attributes' parameter of " + display() + ": attribute '" + attribute.get("name") + "' names no protocol. This "
            + "client takes the config Python's proto.config() writes (every attribute's protocol chosen); name one of grr, oue, sue, olh, ss.");
    }

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        Object[] record = (Object[]) checked;
        int chosen = (int) source.uniformInt(inners.size());
        for (int index = 0; index < inners.size(); index++) {
            int at = offset + ((RecordFormat) format).offsetOf(index);
            if (index == chosen) inners.get(index).writeChecked(record[index], source, bytes, at);
            else fakes.get(index).write(source, bytes, at);
        }
    }

    @Override
    public double[] channelRowChecked(Object checked) {
        Object[] record = (Object[]) checked;
        int k = inners.size();
        double[] total = null;
        for (int chosen = 0; chosen < k; chosen++) {
            List<double[]> rows = new ArrayList<>();
            for (int index = 0; index < k; index++) rows.add(index == chosen ? inners.get(index).channelRowChecked(record[index]) : fakes.get(index).row());
            double[] joint = kron(rows);
            if (total == null) total = joint;
            else for (int y = 0; y < joint.length; y++) total[y] += joint[y];
        }
        for (int y = 0; y < total.length; y++) total[y] /= k;
        return total;
    }

    @Override
    public long reportIndex(byte[] row) {
        return mixedRadix(row);
    }
}
