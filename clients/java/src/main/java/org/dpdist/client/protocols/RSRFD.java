package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.Params;

/**
 * Random sampling plus realistic fake data, "rsrfd" (Arcolezi, Gambs, Couchot, Palamidessi, PVLDB 2023 "RS+RFD",
 * Alg. 1; {@code dpdist.local.multi.rsrfd}): rsfd with fake data drawn from public priors ({@code priors}: GRR sends an
 * item drawn from the prior as it is, the other oracles randomize one; no prior (null) is a uniform one).  The
 * record-level guarantee is the oracle's epsilon, as for rsfd: the fake data do not depend on the record.
 */
public final class RSRFD extends RandomSampling {
    public static final String PROTOCOL = "rsrfd";

    public RSRFD(Map<String, Object> config) {
        super(PROTOCOL, config, ProtocolIndex.attributeProtocols(), new Object[] {"priors", Params.optional(priorsRule())}, Params.defaults("priors", null));
    }

    /** Neumaier's compensated sum (within an ulp or so of Python's exact math.fsum). */
    private static double compensatedSum(List<Object> values) {
        double sum = 0;
        double compensation = 0;
        for (Object value : values) {
            double x = ((Number) value).doubleValue();
            double total = sum + x;
            compensation += Math.abs(sum) >= Math.abs(x) ? (sum - total) + x : (x - total) + sum;
            sum = total;
        }
        return sum + compensation;
    }

    /** The parameter rule of {@code priors} (Python's {@code Priors}): per attribute null or a list summing to 1. */
    private static Params.Rule priorsRule() {
        return new Params.Rule(true, () -> "a list with one prior per attribute: None (uniform) or a list of non-negative floats summing to 1", value -> {
            List<Object> list = Json.asList(value);
            if (list == null) throw new Params.Refused();
            List<Object> out = new ArrayList<>();
            for (Object prior : list) {
                if (prior == null) {
                    out.add(null);
                    continue;
                }
                List<Object> entries = Json.asList(prior);
                if (entries == null || entries.size() < 2) throw new Params.Refused();
                for (Object p : entries) if (!Json.isFinite(p) || ((Number) p).doubleValue() < 0) throw new Params.Refused();
                if (Math.abs(compensatedSum(entries) - 1) > 1e-6) throw new Params.Refused();
                out.add(new ArrayList<>(entries));
            }
            return out;
        });
    }

    @Override
    protected FakeData fakeData(FrequencyProtocol inner, int index) {
        List<Object> priors = Json.asList(params.get("priors"));
        int k = attributes().size();
        if (priors != null && priors.size() != k) {
            throw new InvalidParameterError("The 'priors' parameter of " + display() + " must hold one prior per attribute (" + k + "). Got " + priors.size() + " instead.");
        }
        Map<String, Object> attribute = attributes().get(index);
        List<Object> prior = priors == null ? null : Json.asList(priors.get(index));
        int size = ((Number) attribute.get("domain_size")).intValue();
        if (prior != null && prior.size() != size) {
            throw new InvalidParameterError("The 'priors' parameter of " + display() + ": the prior of attribute '" + attribute.get("name")
                + "' must hold domain_size=" + size + " probabilities. Got " + prior.size() + " instead.");
        }
        double[] values = new double[size];
        if (prior == null) Arrays.fill(values, 1.0);
        else for (int i = 0; i < size; i++) values[i] = ((Number) prior.get(i)).doubleValue();
        long[] weights = FakeData.quantizePrior(values);
        if (inner.name.equals("grr")) return new FakeData(inner, "prior", weights);
        return new FakeData(inner, "randomized", prior == null ? null : weights);
    }
}
