package org.dpdist.client.protocols;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.dpdist.client.Config;
import org.dpdist.client.EntryPoint;
import org.dpdist.client.InvalidParameterError;
import org.dpdist.client.Json;
import org.dpdist.client.Libm;
import org.dpdist.client.Params;
import org.dpdist.client.RandomSource;

/**
 * Marginals and grids over records, the base of "calm" (Zhang, Wang, Li, He, Chen, CCS 2018) and "hdg" (Yang, Wang,
 * Li, Cheng, Su, PVLDB 2020), as {@code dpdist.local.multi.calm} and {@code .hdg} randomize on a device (the JavaScript
 * client's {@code src/protocols/_marginals.js}).  Both divide the users at random among groups ({@link SampledGroups}): a
 * user draws one group uniformly, independently of their record, and reports the group's index and the cell of their
 * record in it through the group's frequency oracle at the whole budget (GRR, OUE or SUE: "grr" below 3 e^eps + 2 cells,
 * else "oue", with {@code oracle: "auto"}, or the one named), so a report is epsilon-LDP for any two records; its law
 * is M_g(y | cell_g(x)) / (groups).
 */
public abstract class GroupedCells extends RecordProtocol {
    /** The most cells of one marginal or grid (Python's MAX_CELLS). */
    static final int MAX_CELLS = 1 << 16;

    protected SampledGroups groups;

    protected GroupedCells(String name, Map<String, Object> config, Object[] rules, Map<String, Object> defaults) {
        super(name, config, withOracle(rules), withAuto(defaults));
        this.checkers = new ArrayList<>();
        for (Map<String, Object> attribute : attributes()) checkers.add(attributeDomain(attribute)::check);
    }

    private static Object[] withOracle(Object[] rules) {
        Object[] out = java.util.Arrays.copyOf(rules, rules.length + 2);
        out[rules.length] = "oracle";
        out[rules.length + 1] = Params.options("auto", "grr", "oue", "sue");
        return out;
    }

    private static Map<String, Object> withAuto(Map<String, Object> defaults) {
        Map<String, Object> out = new LinkedHashMap<>(defaults);
        out.put("oracle", "auto");
        return out;
    }

    /** The name of a group's field ("marginal", "grid"). */
    protected abstract String groupField();

    /** The cell of a (checked) record in group {@code group}. */
    protected abstract int cellOf(Object[] record, int group);

    /** The oracles a group may use: this client's GRR, OUE and SUE. */
    private static Map<String, EntryPoint<?>> oracles() {
        Map<String, EntryPoint<?>> table = new LinkedHashMap<>();
        table.put(GRR.PROTOCOL, new EntryPoint<>(GRR.PROTOCOL, GRR.class, GRR::new));
        table.put(OUE.PROTOCOL, new EntryPoint<>(OUE.PROTOCOL, OUE.class, OUE::new));
        table.put(SUE.PROTOCOL, new EntryPoint<>(SUE.PROTOCOL, SUE.class, SUE::new));
        return table;
    }

    /** Refuse an attribute of the wrong kind, or one naming a protocol or options (the oracle is set by 'oracle'). */
    protected void checkAttributes(boolean numerical) {
        for (Map<String, Object> attribute : attributes()) {
            boolean hasBounds = isNumerical(attribute);
            if (hasBounds != numerical || attribute.get("protocol") != null || !Json.asObject(attribute.get("options")).isEmpty()) {
                throw new InvalidParameterError("The 'attributes' parameter of " + display() + " must hold "
                    + (numerical ? "numerical attributes ('bounds')" : "categorical attributes") + " without 'protocol' or 'options' (each " + groupField()
                    + "'s oracle is set by 'oracle'). Attribute '" + attribute.get("name") + "' is " + (hasBounds ? "numerical" : "categorical")
                    + (attribute.get("protocol") != null ? " with a protocol" : "") + ".");
            }
        }
    }

    /** The oracle of a group of {@code cells} cells, at the whole budget. */
    private Protocol oracle(int cells) {
        String name = (String) params.get("oracle");
        if (name.equals("auto")) name = cells < 3.0 * Libm.exp(epsilon()) + 2.0 ? "grr" : "oue";
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("protocol", name);
        config.put("version", (long) Config.CONFIG_VERSION);
        config.put("epsilon", epsilon());
        config.put("domain_size", (long) cells);
        return Config.build(config, oracles(), null);
    }

    /** Build the groups ({@code names}, each with its number of cells). */
    protected void setGroups(List<String> names, List<Integer> cells) {
        List<Protocol> inners = new ArrayList<>();
        for (int count : cells) inners.add(oracle(count));
        this.groups = new SampledGroups(inners, groupField(), names);
        this.format = groups.format;
    }

    @Override
    public void writeChecked(Object checked, RandomSource source, byte[] bytes, int offset) {
        Object[] record = (Object[]) checked;
        groups.writeReport(group -> cellOf(record, group), source, bytes, offset);
    }

    @Override
    public double[] channelRowChecked(Object checked) {
        Object[] record = (Object[]) checked;
        return groups.channelRow(group -> cellOf(record, group));
    }

    @Override
    public long reportIndex(byte[] row) {
        return groups.reportIndex(row);
    }

    /** Design constants beyond the groups (hdg's g1, g2). */
    protected Map<String, Object> extraDesign() {
        return new LinkedHashMap<>();
    }

    @Override
    public Map<String, Object> design() {
        Map<String, Object> out = extraDesign();
        out.put("groups", null);
        return out;
    }

    /** Check a collector's client view: the format, each group's oracle, and the further design constants. */
    @Override
    public void checkView(Map<String, Object> view) {
        format.check(view.get("format"), display());
        Map<String, Object> design = Json.asObject(view.get("design"));
        if (design == null) return;
        Map<String, Object> extra = extraDesign();
        for (Map.Entry<String, Object> entry : design.entrySet()) {
            if (entry.getKey().equals("groups")) continue;
            if (!extra.containsKey(entry.getKey()) || !Json.same(extra.get(entry.getKey()), entry.getValue())) {
                throw refuseView("the design constant " + entry.getKey() + " = " + Json.show(entry.getValue()) + " (this client derives "
                    + Json.show(extra.get(entry.getKey())) + ")");
            }
        }
        checkPartViews(design.get("groups"), groups.parts(), groupField());
    }

    /** Every {@code size}-subset of 0 .. k-1 in lexicographic order (Python's itertools.combinations). */
    static List<int[]> combinations(int k, int size) {
        List<int[]> out = new ArrayList<>();
        visit(out, k, size, 0, new int[size], 0);
        return out;
    }

    private static void visit(List<int[]> out, int k, int size, int start, int[] chosen, int count) {
        if (count == size) {
            out.add(chosen.clone());
            return;
        }
        for (int i = start; i < k; i++) {
            chosen[count] = i;
            visit(out, k, size, i + 1, chosen, count + 1);
        }
    }

    /** An int power of two in [low, high] (Python's {@code _PowerOfTwo}). */
    static Params.Rule powerOfTwo(long low, long high) {
        Params.Rule base = Params.integer(low, high);
        return new Params.Rule(false, () -> "a power of two from " + low + " to " + high, value -> {
            long checked = (Long) base.check(value);
            if ((checked & (checked - 1)) != 0) throw new Params.Refused();
            return checked;
        });
    }

    @Override
    public long statisticSize() {
        return groups.statisticSize();
    }
}
