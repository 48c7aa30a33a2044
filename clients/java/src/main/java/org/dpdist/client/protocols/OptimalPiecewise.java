package org.dpdist.client.protocols;

import java.util.Map;

/**
 * The optimal piecewise mechanism on an interval, "opm" (Zheng, Mishra and Hu, arXiv 2505.15483;
 * {@code dpdist.local.numerical.opm}): the window's centre clipped to [w/2, 1 - w/2] (the mechanism: {@link WindowProtocol}).
 */
public final class OptimalPiecewise extends WindowProtocol {
    public static final String PROTOCOL = "opm";

    public OptimalPiecewise(Map<String, Object> config) {
        super(PROTOCOL, config, false);
    }
}
