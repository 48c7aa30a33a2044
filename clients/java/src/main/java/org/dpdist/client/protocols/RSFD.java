package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;

/**
 * Random sampling plus fake data, "rsfd" (Arcolezi et al., CIKM 2021 "RS+FD"; {@code dpdist.local.multi.rsfd}): one
 * attribute randomized at epsilon, a fake report for every other one (GRR: a uniform item; OUE/SUE with fake
 * "auto"/"zero": the all-zero vector's bits at q; otherwise the attribute's randomizer applied to a uniform item), so the
 * index is hidden ({@link RandomSampling}).
 */
public final class RSFD extends RandomSampling {
    public static final String PROTOCOL = "rsfd";

    public RSFD(Map<String, Object> config) {
        super(PROTOCOL, config, ProtocolIndex.attributeProtocols(), new Object[] {"fake", Params.options("auto", "zero", "random")}, Params.defaults("fake", "auto"));
    }

    @Override
    protected FakeData fakeData(FrequencyProtocol inner, int index) {
        String mode = (String) params.get("fake");
        boolean unary = inner.name.equals("oue") || inner.name.equals("sue");
        if (mode.equals("zero") && !unary) {
            throw new InvalidParameterError("The 'fake' parameter of RSFD is 'zero' (unary encoding of the zero vector), but attribute '"
                + attributes().get(index).get("name") + "' uses " + inner.name + ". Use 'random' or 'auto'.");
        }
        String kind = unary && (mode.equals("auto") || mode.equals("zero")) ? "zero" : inner.name.equals("grr") ? "uniform" : "randomized";
        return new FakeData(inner, kind, null);
    }
}
