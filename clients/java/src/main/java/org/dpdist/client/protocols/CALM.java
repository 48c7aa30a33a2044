package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Params;

/**
 * Consistent marginals, "calm" (Zhang, Wang, Li, He, Chen, CCS 2018; {@code dpdist.local.multi.calm}): a group per
 * {@code order}-subset of the categorical attributes (itertools.combinations order), its cells the product of their
 * domains in C order (the first attribute slowest), each group's cells reported through GRR, OUE or SUE
 * ({@link GroupedCells}).
 */
public final class CALM extends GroupedCells {
    public static final String PROTOCOL = "calm";

    private final List<int[]> sets;

    public CALM(Map<String, Object> config) {
        super(PROTOCOL, config, new Object[] {"order", Params.integer(1, 4)}, Params.defaults("order", 2L));
        checkAttributes(false);
        int k = attributes().size();
        int order = ((Number) params.get("order")).intValue();
        if (order > k) {
            throw new InvalidParameterError("The 'order' parameter of " + display() + " must be at most the number of attributes (" + k + "). Got " + order + ".");
        }
        this.sets = combinations(k, order);
        List<String> names = new ArrayList<>();
        List<Integer> cells = new ArrayList<>();
        for (int[] set : sets) {
            long count = 1;
            List<String> members = new ArrayList<>();
            for (int a : set) {
                count *= size(a);
                members.add((String) attributes().get(a).get("name"));
            }
            if (count > MAX_CELLS) {
                throw new InvalidParameterError("The 'attributes' parameter of " + display() + ": the marginal of " + org.dpdist.client.Json.show(members)
                    + " has " + count + " cells; at most " + MAX_CELLS + " (lower 'order' or coarsen the attributes).");
            }
            names.add(String.join(",", members));
            cells.add((int) count);
        }
        setGroups(names, cells);
    }

    private int size(int attribute) {
        return ((Number) attributes().get(attribute).get("domain_size")).intValue();
    }

    @Override
    protected String groupField() {
        return "marginal";
    }

    /** The cell of a (checked) record in marginal {@code group}: C order, the first attribute slowest. */
    @Override
    protected int cellOf(Object[] record, int group) {
        int cell = 0;
        for (int a : sets.get(group)) cell = cell * size(a) + (Integer) record[a];
        return cell;
    }
}
