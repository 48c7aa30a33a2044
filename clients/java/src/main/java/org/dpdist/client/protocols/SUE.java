package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Libm;

/**
 * Symmetric unary encoding, "sue" (basic one-time RAPPOR, Erlingsson, Pihur, Korolova, CCS 2014;
 * {@code dpdist.local.frequency.sue}): the item's bit is 1 w.p. e^(eps/2)/(e^(eps/2) + 1), every other bit w.p.
 * 1/(e^(eps/2) + 1) (the bits and their 2^-32 grid: {@link UnaryEncoding}).
 */
public final class SUE extends UnaryEncoding {
    public static final String PROTOCOL = "sue";

    public SUE(Map<String, Object> config) {
        super(PROTOCOL, config, (epsilon, d) -> {
            double half = Libm.exp(epsilon / 2.0);
            return new double[] {half / (half + 1.0), 1.0 / (half + 1.0)};
        });
    }
}
