package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Libm;

/**
 * Optimized unary encoding, "oue" (Wang, Blocki, Li, Jha, USENIX Security 2017, sec. 4.3;
 * {@code dpdist.local.frequency.oue}): the item's bit is 1 w.p. 1/2, every other bit w.p. 1/(e^eps + 1) (the bits and
 * their 2^-32 grid: {@link UnaryEncoding}).
 */
public final class OUE extends UnaryEncoding {
    public static final String PROTOCOL = "oue";

    public OUE(Map<String, Object> config) {
        super(PROTOCOL, config, (epsilon, d) -> new double[] {0.5, 1.0 / (Libm.exp(epsilon) + 1.0)});
    }
}
