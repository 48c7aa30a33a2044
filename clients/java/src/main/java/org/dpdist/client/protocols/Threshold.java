package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Grid;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;
import org.dpdist.client.ReportFormat;

/**
 * One threshold question per user, "threshold" ({@code dpdist.local.numerical.threshold}): the per-round randomizer of
 * adaptive LDP quantiles (Aamand et al., ICML 2025, arXiv:2502.02990).  The bounds are cut into grid_size equal cells;
 * the round publishes {@code cuts} (grid indices).  The device picks one cut j uniformly (a public coin), computes
 * s = [cell(x) &lt; cuts[j]] and reports the output 2j + b, b = s with probability keep, else 1 - s: binary randomized
 * response, keep the largest 2^-53 grid probability with keep / (1 - keep) &lt;= e^eps.
 */
public final class Threshold extends NumericalProtocol {
    public static final String PROTOCOL = "threshold";
    private static final int MAX_CUTS = 4096;

    public final double keep;
    private final long[] cuts;
    private final long gridSize;

    public Threshold(Map<String, Object> config) {
        super(PROTOCOL, config, Params.rules("epsilon", Params.EPSILON, "bounds", Params.bounds(), "cuts", Params.optional(cutsRule()),
            "grid_size", Params.integer(2, 1L << 30), "round", Params.integer(0, Integer.MAX_VALUE)),
            Params.defaults("bounds", java.util.Arrays.asList(0.0, 1.0), "cuts", null, "grid_size", 1024L, "round", 0L));
        this.gridSize = ((Number) params.get("grid_size")).longValue();
        if (params.get("cuts") == null) params.put("cuts", new ArrayList<Object>(java.util.Collections.singletonList(Math.max(gridSize / 2, 1))));
        this.config.put("cuts", params.get("cuts"));
        List<?> given = (List<?>) params.get("cuts");
        this.cuts = new long[given.size()];
        for (int i = 0; i < cuts.length; i++) cuts[i] = ((Number) given.get(i)).longValue();
        if (cuts[cuts.length - 1] >= gridSize) {
            throw new InvalidParameterError("The 'cuts' parameter of THRESHOLD must lie in [1, grid_size - 1] = [1, " + (gridSize - 1)
                + "]. Got a largest cut of " + cuts[cuts.length - 1] + ".");
        }
        this.keep = Grid.oddsProbability(Grid.expLower(epsilon()));
        this.format = ReportFormat.itemReports(2L * cuts.length);
    }

    /** A list of 1 to 4096 increasing distinct integers &gt;= 1 (as dpdist's {@code Cuts} constraint). */
    private static Params.Rule cutsRule() {
        return new Params.Rule(false, () -> "a list of 1 to " + MAX_CUTS + " increasing distinct integers >= 1 (grid indices of the thresholds)", value -> {
            List<Object> list = Json.asList(value);
            if (list == null || list.isEmpty() || list.size() > MAX_CUTS) throw new Params.Refused();
            List<Object> out = new ArrayList<>();
            double previous = 0;
            for (Object cut : list) {
                if (!Json.isInteger(cut)) throw new Params.Refused();
                double x = ((Number) cut).doubleValue();
                if (x < 1 || x <= previous) throw new Params.Refused();
                previous = x;
                out.add((long) x);
            }
            return out;
        });
    }

    @Override
    public Map<String, Object> design() {
        return mapOf("keep", keep);
    }

    /** The grid cell of the unit-interval value u (Python's unit_bin_index). */
    private long cell(double u) {
        return (long) Math.min((double) (long) (u * gridSize), gridSize - 1);
    }

    @Override
    public void writeReport(double u, RandomSource source, byte[] bytes, int offset) {
        int j = (int) source.uniformInt(cuts.length);
        boolean below = cell(u) < cuts[j];
        int bit = below == source.bernoulli(keep) ? 1 : 0; // the truth when kept, its negation otherwise
        format.write(bytes, offset, 0, 2L * j + bit);
    }

    /** Exact law of the report for the unit-interval input u: 1/T times keep or 1 - keep. */
    @Override
    public double[] channelRow(double u) {
        int count = cuts.length;
        double[] row = new double[2 * count];
        long cell = cell(u);
        for (int j = 0; j < count; j++) {
            boolean below = cell < cuts[j];
            row[2 * j + 1] = (below ? keep : 1 - keep) / count;
            row[2 * j] = (below ? 1 - keep : keep) / count;
        }
        return row;
    }

    @Override
    public long reportIndex(byte[] row) {
        return format.read(row, 0, 0);
    }

    @Override
    public long statisticSize() {
        return 2L * cuts.length;
    }
}
