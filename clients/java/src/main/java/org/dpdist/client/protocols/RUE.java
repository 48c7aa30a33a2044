package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Libm;

/**
 * Re-optimized unary encoding, "rue" (Fang, Chen &amp; Liu, USENIX Security 2025; {@code dpdist.local.frequency.rue}):
 * the item's bit is 1 w.p. p = 1/(h + 1), every other bit w.p. q = 1/(h e^eps + 1), with
 * h = sqrt((d - 1 + e^-eps)/(d - 1 + e^eps)) (the bits and their 2^-32 grid: {@link UnaryEncoding}).  Math.sqrt is
 * correctly rounded and exp is Python's ({@link Libm}), so p and q are Python's bit for bit.
 */
public final class RUE extends UnaryEncoding {
    public static final String PROTOCOL = "rue";

    public RUE(Map<String, Object> config) {
        super(PROTOCOL, config, (epsilon, d) -> {
            double e = Libm.exp(epsilon);
            double h = Math.sqrt((d - 1 + 1.0 / e) / (d - 1 + e));
            return new double[] {1.0 / (h + 1.0), 1.0 / (h * e + 1.0)};
        });
    }
}
