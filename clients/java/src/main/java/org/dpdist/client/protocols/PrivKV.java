package org.dpdist.client.protocols;

import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * PrivKV, "privkv" (Ye, Hu, Meng, Zheng, IEEE S&amp;P 2019; {@code dpdist.local.keyvalue.privkv}): one key j uniform on the
 * domain; holding j with value v, v* = +-1 (+1 w.p. (1 + v)/2) is kept w.p. p2 else flipped, and &lt;1, v'&gt; is
 * reported w.p. p1, else &lt;0, 0&gt;; not holding j, &lt;0, 0&gt; w.p. p1, else &lt;1, v'&gt; of a fair sign through the
 * same perturbation.  p1 = p2 is the largest multiple of 2^-53 with odds at most e^(eps/2) (as Python).  Reports: the
 * item 3j + o, o = 0 for &lt;0, 0&gt;, 1 for &lt;1, 1&gt;, 2 for &lt;1, -1&gt; (items below 3d).
 */
public final class PrivKV extends KeyValueProtocol {
    public static final String PROTOCOL = "privkv";

    public final double p1;
    public final double p2;

    public PrivKV(Map<String, Object> config) {
        super(PROTOCOL, config, new Object[0], Params.defaults());
        this.p1 = Grid.oddsProbability(Grid.expLower(epsilon() / 2));
        this.p2 = p1;
        this.format = ReportFormat.itemReports(3L * domainSize());
    }

    @Override
    protected String displayName(String name) {
        return "PrivKV";
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("p1", p1, "p2", p2);
    }

    @Override
    public void writeReport(KeyValueSet set, RandomSource source, byte[] bytes, int offset) {
        int key = (int) source.uniformInt(domainSize());
        int at = set.indexOf(key);
        boolean held = at >= 0;
        boolean up = discretize(held ? set.values[at] : 0, source); // a fair sign where the key is not held
        boolean kept = source.bernoulli(p2);
        boolean truthful = source.bernoulli(p1);
        int pair = (kept ? up : !up) ? 1 : 2;
        int outcome = held ? (truthful ? pair : 0) : truthful ? 0 : pair;
        format.write(bytes, offset, 0, 3L * key + outcome);
    }

    /** Exact law of the report for a checked set, indexed by the reported item (Python's channel). */
    @Override
    public double[] channelRow(KeyValueSet set) {
        int d = domainSize();
        double[] row = new double[3 * d];
        for (int j = 0; j < d; j++) {
            row[3 * j] = p1 / d;
            row[3 * j + 1] = (1 - p1) / 2 / d;
            row[3 * j + 2] = (1 - p1) / 2 / d;
        }
        for (int at = 0; at < set.keys.length; at++) {
            int key = set.keys[at];
            double up = up(set.values[at]);
            double positive = up * p2 + (1 - up) * (1 - p2);
            row[3 * key] = (1 - p1) / d;
            row[3 * key + 1] = (p1 * positive) / d;
            row[3 * key + 2] = (p1 * (1 - positive)) / d;
        }
        return row;
    }

    @Override
    public long statisticSize() {
        return 3L * domainSize();
    }
}
