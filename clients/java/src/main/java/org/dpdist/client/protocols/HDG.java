package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;

/**
 * Hybrid grids, "hdg" (Yang, Wang, Li, Cheng, Su, PVLDB 2020; {@code dpdist.local.multi.hdg}): numerical attributes cut
 * into {@code resolution} fine bins; a 2-D grid of g2 x g2 cells per pair of attributes, then ({@code hybrid}, HDG; not
 * TDG) a 1-D grid of g1 cells per attribute; g1 and g2 follow the paper's guideline (sec. 5.3) at
 * {@code expected_reports} users unless given; each grid's cells reported through GRR, OUE or SUE ({@link GroupedCells}).
 */
public final class HDG extends GroupedCells {
    public static final String PROTOCOL = "hdg";
    /** The constants of HDG's granularity guideline (sec. 4.3 and 5.3). */
    private static final double ALPHA_1 = 0.7;
    private static final double ALPHA_2 = 0.03;

    public final int g1;
    public final int g2;
    private final List<int[]> grids = new ArrayList<>();

    public HDG(Map<String, Object> config) {
        super(PROTOCOL, config, new Object[] {"resolution", powerOfTwo(4, 1024), "g1", Params.optional(powerOfTwo(1, 1024)),
            "g2", Params.optional(powerOfTwo(1, 1024)), "expected_reports", Params.integer(1, 9007199254740991L), "hybrid", Params.bool()},
            Params.defaults("resolution", 64L, "g1", null, "g2", null, "expected_reports", 1000000L, "hybrid", true));
        int k = attributes().size();
        if (k < 2) {
            throw new InvalidParameterError("The 'attributes' parameter of " + display() + " must hold at least two numerical attributes (a range over one "
                + "attribute is answered by hh or haar-hrr). Got " + k + ".");
        }
        checkAttributes(true);
        int[] granularities = granularities();
        this.g1 = granularities[0];
        this.g2 = granularities[1];
        grids.addAll(combinations(k, 2));
        if (hybrid()) for (int a = 0; a < k; a++) grids.add(new int[] {a});
        List<String> names = new ArrayList<>();
        List<Integer> cells = new ArrayList<>();
        for (int[] grid : grids) {
            List<String> members = new ArrayList<>();
            for (int a : grid) members.add((String) attributes().get(a).get("name"));
            names.add(String.join(",", members));
            cells.add(grid.length == 2 ? g2 * g2 : g1);
        }
        setGroups(names, cells);
    }

    private boolean hybrid() {
        return Boolean.TRUE.equals(params.get("hybrid"));
    }

    private int resolution() {
        return ((Number) params.get("resolution")).intValue();
    }

    /**
     * HDG's (g1, g2) for {@code n} users (TDG: g1 = g2), powers of two in [2, resolution]: Python's
     * {@code guideline_granularities}, operation for operation.
     */
    public static int[] guidelineGranularities(double n, double epsilon, int k, boolean hybrid, int resolution) {
        double grids = (k * (k - 1)) / 2.0 + (hybrid ? k : 0);
        double e = Libm.exp(epsilon);
        int g2 = rounded(Math.sqrt(2 * ALPHA_2 * (e - 1) * Math.sqrt(n / (grids * e))), resolution);
        if (!hybrid) return new int[] {g2, g2};
        double g1 = Libm.pow((n * Libm.pow(e - 1, 2) * Libm.pow(ALPHA_1, 2)) / (2 * grids * e), 1.0 / 3);
        return new int[] {Math.max(rounded(g1, resolution), g2), g2};
    }

    private static int rounded(double value, int resolution) {
        double power = Math.scalb(1.0, (int) Libm.roundHalfEven(Libm.log2(Math.max(value, 1.0))));
        return (int) Math.min(Math.max(power, 2), resolution);
    }

    private int[] granularities() {
        int resolution = resolution();
        int[] planned = guidelineGranularities(((Number) params.get("expected_reports")).doubleValue(), epsilon(), attributes().size(), hybrid(), resolution);
        int second = params.get("g2") != null ? ((Number) params.get("g2")).intValue() : planned[1];
        int first = !hybrid() ? second : params.get("g1") != null ? ((Number) params.get("g1")).intValue() : planned[0];
        if (!(second <= first && first <= resolution)) {
            throw new InvalidParameterError("The 'g1' and 'g2' parameters of " + display() + " must satisfy g2 <= g1 <= resolution (" + resolution + "). Got g1="
                + first + ", g2=" + second + ".");
        }
        if (Math.max((long) second * second, first) > MAX_CELLS) {
            throw new InvalidParameterError("The 'g2' parameter of " + display() + ": a 2-D grid has at most " + MAX_CELLS + " cells. Got " + second + ".");
        }
        return new int[] {first, second};
    }

    @Override
    protected String groupField() {
        return "grid";
    }

    @Override
    protected Map<String, Object> extraDesign() {
        return mapOf("g1", (long) g1, "g2", (long) g2);
    }

    /** The fine bin of a value on [0, 1] (Python's {@code GridGeometry.fine}). */
    private int fine(double unit) {
        return (int) Math.min(Math.floor(unit * resolution()), resolution() - 1);
    }

    /** The cell of a (checked: values on [0, 1]) record in grid {@code group}: C order, the first attribute slowest. */
    @Override
    protected int cellOf(Object[] record, int group) {
        int[] grid = grids.get(group);
        if (grid.length == 1) return (int) Math.floor(fine((Double) record[grid[0]]) / (resolution() / (double) g1));
        double width = resolution() / (double) g2;
        return (int) Math.floor(fine((Double) record[grid[0]]) / width) * g2 + (int) Math.floor(fine((Double) record[grid[1]]) / width);
    }
}
