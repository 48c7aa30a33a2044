package org.dpdist.client.protocols;

import java.util.Map;

/**
 * The optimal piecewise mechanism on a circle, "opm-circular" (Zheng, Mishra and Hu, arXiv 2505.15483;
 * {@code dpdist.local.numerical.opm}): the window wraps around the bounds, one period (the mechanism: {@link WindowProtocol}).
 */
public final class CircularOptimalPiecewise extends WindowProtocol {
    public static final String PROTOCOL = "opm-circular";

    public CircularOptimalPiecewise(Map<String, Object> config) {
        super(PROTOCOL, config, true);
    }

    @Override
    protected boolean circular() {
        return true;
    }
}
