package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;

/**
 * General wave, "gw" (paper 003, Li et al. SIGMOD 2020, sec. 5; {@code dpdist.local.numerical.general_wave}): R-B with a
 * trapezoid bump (top/bottom {@code ratio}, 0.5 unless given) or a triangle (the grid: {@link WaveProtocol}).
 */
public final class GeneralWave extends WaveProtocol {
    public static final String PROTOCOL = "gw";

    public GeneralWave(Map<String, Object> config) {
        super(PROTOCOL, config, new Object[] {"shape", Params.options("trapezoid", "triangle"), "ratio", Params.optional(Params.interval(0, 1))},
            new Object[] {"shape", "trapezoid", "ratio", null});
        String shape = (String) params.get("shape");
        Object ratio = params.get("ratio");
        if (shape.equals("triangle") && ratio != null) {
            throw new InvalidParameterError("The 'ratio' parameter of GW must be None (null) when shape='triangle' (a triangle has ratio 0). Got "
                + ratio + " instead.");
        }
        double r = shape.equals("triangle") ? 0.0 : ratio == null ? 0.5 : ((Number) ratio).doubleValue();
        double chosen = params.get("b") == null ? mutualInformationB(epsilon()) : ((Number) params.get("b")).doubleValue();
        if (!(chosen > 0)) {
            throw new InvalidParameterError("The 'epsilon' parameter of GW gives b = 0 by the mutual-information rule; pass b > 0 explicitly. Got epsilon="
                + epsilon() + ".");
        }
        setupGrid(chosen, r);
    }
}
