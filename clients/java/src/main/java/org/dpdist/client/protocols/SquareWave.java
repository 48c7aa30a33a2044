package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;

/**
 * Square wave, "sw" (paper 003, Li et al. SIGMOD 2020, sec. 5; {@code dpdist.local.numerical.square_wave}): R-B with a
 * square bump of half-width b (the mutual-information rule unless given), or B-R ({@code discrete}) with a window of
 * 2 floor(b bins) + 1 buckets (the grids and their exact laws: {@link WaveProtocol}).
 */
public final class SquareWave extends WaveProtocol {
    public static final String PROTOCOL = "sw";

    public SquareWave(Map<String, Object> config) {
        super(PROTOCOL, config, new Object[] {"discrete", Params.bool()}, new Object[] {"discrete", false});
        int bins = bins();
        double chosen = params.get("b") == null ? mutualInformationB(epsilon()) : ((Number) params.get("b")).doubleValue();
        if (Boolean.TRUE.equals(params.get("discrete"))) {
            if (params.get("output_bins") != null) {
                throw new InvalidParameterError("The 'output_bins' parameter of SW must be None (null) when discrete=true (the discrete square wave has "
                    + "bins + 2*floor(b*bins) outputs). Got " + params.get("output_bins") + " instead.");
            }
            double halfWidth = Math.floor(chosen * bins);
            if (bins + 2 * halfWidth > MAX_BINS) {
                throw new InvalidParameterError("The 'b' parameter of SW with discrete=true gives bins + 2*floor(b*bins) = " + (long) (bins + 2 * halfWidth)
                    + " output buckets; at most " + MAX_BINS + " are allowed. Got b=" + chosen + ".");
            }
            setupWindow((int) halfWidth);
            return;
        }
        if (!(chosen > 0)) {
            throw new InvalidParameterError("The 'epsilon' parameter of SW gives b = 0 by the mutual-information rule; pass b > 0 explicitly. Got epsilon="
                + epsilon() + ".");
        }
        setupGrid(chosen, 1.0);
    }
}
