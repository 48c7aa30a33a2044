package org.dpdist.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.dpdist.client.protocols.GRR;
import org.dpdist.client.protocols.Longitudinal;
import org.dpdist.client.protocols.Memo;
import org.dpdist.client.protocols.Protocol;
import org.dpdist.client.protocols.SS;
import org.dpdist.client.protocols.UnaryEncoding;
import org.dpdist.client.protocols.ValueDomain;

/**
 * A device's privacy ledger (Python's {@code dpdist.local.ledger.PrivacyLedger}, the same JSON; the JavaScript client's
 * {@code src/ledger.js}): what each collector has spent on this device, the memos it keeps, and the budget its owner set.
 *
 * <ul>
 * <li>Memos are kept per scope: the collector and the config without its budgets (epsilon, epsilon_1).  A collector that
 * changes a budget, even by 1e-12, cannot make the device draw its permanent responses again: the report is refused.</li>
 * <li>Every report is charged before it is drawn, and refused ({@link PrivacyBudgetError}, with the reason and the budget
 * left) if it would spend more than the budget within the window.  Charges depend only on public quantities (the
 * config and how many reports the scope has had), never on the values, so a refusal reveals nothing.</li>
 * <li>A question asked once per device ({@code once}) is answered at most once: a campaign in rounds states epsilon
 * per user by parallel composition, which holds only if each device answers one round.</li>
 * <li>accounting "history" (default): the T-th report through a memo costs eps_T - eps_{T-1} (Python's
 * epsilon_over_changes); "stable": eps_inf for each of a memo's first K reports (K keys), nothing after.</li>
 * </ul>
 * The ledger calls {@code onChange} (which persists it) before any report it charged or memoized leaves {@link #report}.
 */
public final class Ledger {
    public static final String LEDGER_FORMAT = "dpdist-ledger";
    /** The total epsilon a device spends, over every collector, unless its owner sets another (as Python). */
    public static final double DEFAULT_BUDGET = 10.0;
    public static final List<String> ACCOUNTINGS = Collections.unmodifiableList(Arrays.asList("history", "stable"));
    private static final Set<String> BUDGET_KEYS = new HashSet<>(Arrays.asList("epsilon", "epsilon_1"));
    private static final Pattern URL = Pattern.compile("(?i)(https?)://([^/@?#]+)(/[^?#]*)?");
    private static final Pattern HOST_PORT = Pattern.compile("(\\[[^\\]]*\\]|[^:\\[\\]]*)(?::([0-9]*))?");

    /** One scope's memo and the reports sent through it. */
    private static final class Stream {
        final String collector;
        final Memo memo;
        long reports;

        Stream(String collector, Memo memo, long reports) {
            this.collector = collector;
            this.memo = memo;
            this.reports = reports;
        }
    }

    private final double budget;
    private final Double window;
    private final String accounting;
    private final Consumer<Ledger> onChange;
    private final Map<String, Stream> streams = new TreeMap<>();
    private final List<Map<String, Object>> charges = new ArrayList<>();
    private final Map<String, Map<String, Object>> answered = new TreeMap<>();
    private final Map<String, Long> rounds = new TreeMap<>();

    /**
     * @param budget     the total epsilon (within the window), finite and &gt; 0
     * @param window     seconds the budget is counted over (null: all time)
     * @param accounting "history" or "stable"
     * @param onChange   persists the ledger (null: none); called before any report it charged leaves
     */
    public Ledger(double budget, Double window, String accounting, Consumer<Ledger> onChange) {
        if (!(budget > 0) || Double.isInfinite(budget)) {
            throw new InvalidParameterError("The 'budget' of a privacy ledger must be a finite epsilon > 0. Got " + budget + ".");
        }
        if (window != null && (!(window > 0) || Double.isInfinite(window))) {
            throw new InvalidParameterError("The 'window' of a privacy ledger must be null (all time) or seconds > 0. Got " + window + ".");
        }
        if (!ACCOUNTINGS.contains(accounting)) {
            throw new InvalidParameterError("The 'accounting' of a privacy ledger must be one of history, stable. Got " + Json.show(accounting) + ".");
        }
        this.budget = budget;
        this.window = window;
        this.accounting = accounting;
        this.onChange = onChange;
    }

    /**
     * This ledger's state under the owner's settings (Python's {@code PrivacyLedger.restore}): a given budget, window
     * ({@code windowGiven}) or accounting replaces the stored one; null keeps it.  A ledger with charges under another
     * accounting is refused rather than re-read (its charges would be under- or over-counted).
     */
    public Ledger restoredWith(Double budget, Double window, boolean windowGiven, String accounting) {
        if (accounting != null && !accounting.equals(this.accounting) && !charges.isEmpty()) {
            throw new IncompatibleStateError("The stored ledger charges under '" + this.accounting + "' accounting; its charges cannot be re-read as '"
                + accounting + "' (they would under- or over-count). Keep the accounting, or start a new ledger.");
        }
        if (budget == null && !windowGiven && accounting == null) return this;
        Ledger owned = new Ledger(budget == null ? this.budget : budget, windowGiven ? window : this.window,
            accounting == null ? this.accounting : accounting, onChange);
        owned.streams.putAll(streams);
        owned.charges.addAll(charges);
        owned.answered.putAll(answered);
        owned.rounds.putAll(rounds);
        return owned;
    }

    /** A ledger with the default budget (epsilon 10 in all), all time, history accounting. */
    public Ledger(Consumer<Ledger> onChange) {
        this(DEFAULT_BUDGET, null, "history", onChange);
    }

    public double budget() {
        return budget;
    }

    public Double window() {
        return window;
    }

    public String accounting() {
        return accounting;
    }

    // ---------------------------------------------------------------- names and scopes

    /**
     * A collector's name as the ledger keeps it (Python's normal_collector): an http(s) URL's origin (scheme and host in
     * lower case, no default port) and its path without trailing slashes; any other name with its trailing slashes dropped.
     */
    public static String normalCollector(String collector) {
        if (collector == null) throw new InvalidParameterError("The 'collector' of a ledger report must be a string. Got null.");
        String plain = collector.replaceAll("/+$", "");
        if (plain.isEmpty()) plain = collector;
        Matcher url = URL.matcher(collector);
        if (!url.matches()) return plain; // user info, a query or a fragment: as given
        Matcher hostPort = HOST_PORT.matcher(url.group(2));
        if (!hostPort.matches() || hostPort.group(1).isEmpty()) return plain;
        String scheme = url.group(1).toLowerCase(java.util.Locale.ROOT);
        String host = hostPort.group(1).toLowerCase(java.util.Locale.ROOT);
        String port = hostPort.group(2);
        Integer number = null;
        if (port != null && !port.isEmpty()) {
            try {
                number = Integer.valueOf(port);
            } catch (NumberFormatException tooLarge) {
                return plain;
            }
            if (number > 65535) return plain;
        }
        int standard = scheme.equals("http") ? 80 : 443;
        String origin = scheme + "://" + host + (number == null || number == standard ? "" : ":" + number);
        String path = url.group(3) == null ? "" : url.group(3).replaceAll("/+$", "");
        return origin + path;
    }

    /** A ledger key "&lt;collector&gt; &lt;rest&gt;" written under an earlier normalization, under this one. */
    private static String renormalized(String key) {
        int space = key.indexOf(' ');
        return space < 0 ? key : normalCollector(key.substring(0, space)) + key.substring(space);
    }

    /** The memo scope of {@code config} at {@code collector} (Python's budget_scope: canonical JSON without budgets). */
    public static String budgetScope(String collector, Map<String, Object> config) {
        Map<String, Object> open = new TreeMap<>();
        for (Map.Entry<String, Object> entry : config.entrySet()) if (!BUDGET_KEYS.contains(entry.getKey())) open.put(entry.getKey(), entry.getValue());
        StringBuilder out = new StringBuilder();
        canonical(open, out);
        return normalCollector(collector) + " " + out;
    }

    /** Canonical JSON as the JavaScript client writes it: keys sorted, no spaces, numbers as JavaScript prints them. */
    private static void canonical(Object value, StringBuilder out) {
        if (value instanceof Map) {
            Map<String, Object> sorted = new TreeMap<>();
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) sorted.put(String.valueOf(entry.getKey()), entry.getValue());
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> entry : sorted.entrySet()) {
                if (!first) out.append(',');
                first = false;
                PyJson.appendString(entry.getKey(), out, false);
                out.append(':');
                canonical(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
                if (!first) out.append(',');
                first = false;
                canonical(item, out);
            }
            out.append(']');
        } else if (value instanceof Double || value instanceof Float) {
            out.append(javaScriptNumber(((Number) value).doubleValue()));
        } else {
            out.append(Json.write(value));
        }
    }

    /** A double as JavaScript's JSON.stringify prints it: integers without a point, shortest digits, exponents past 1e21 and below 1e-6. */
    static String javaScriptNumber(double x) {
        if (!Double.isFinite(x)) return "null";
        if (x == 0) return "0";
        java.math.BigDecimal digits = PyJson.shortestDigits(Math.abs(x));
        String text = digits.unscaledValue().toString();
        int point = text.length() - digits.scale();
        String sign = x < 0 ? "-" : "";
        if (point > 21 || point < -5) {
            String head = text.length() > 1 ? text.charAt(0) + "." + text.substring(1) : text;
            int exponent = point - 1;
            return sign + head + "e" + (exponent < 0 ? "-" : "+") + Math.abs(exponent);
        }
        if (point <= 0) return sign + "0." + PyJson.zeros(-point) + text;
        if (point >= text.length()) return sign + text + PyJson.zeros(point - text.length());
        return sign + text.substring(0, point) + "." + text.substring(point);
    }

    /**
     * eps_T of T reports through one memo against every other history (Python's history_epsilon): the smaller of the
     * chain bound eps_1 + (T-1) eps_I and the relabelling bound min(T, K) eps_inf + (T - ceil(T/K)) eps_I.
     */
    public static double historyEpsilon(long reports, Longitudinal.Losses losses) {
        if (reports == 1) return losses.epsilon1;
        if (Double.isInfinite(losses.epsilonI)) return Double.POSITIVE_INFINITY;
        double chainBound = losses.epsilon1 + (reports - 1) * losses.epsilonI;
        double relabelled = Math.min(reports, losses.keys) * losses.epsilonInf + (reports - Math.ceil((double) reports / losses.keys)) * losses.epsilonI;
        return Math.min(chainBound, relabelled);
    }

    private static String onceKey(String collector, String once) {
        return normalCollector(collector) + " " + once;
    }

    // ---------------------------------------------------------------- spending

    /** The clock in seconds since 1970. */
    public static double now() {
        return System.currentTimeMillis() / 1000.0;
    }

    /** Epsilon charged within the window ending {@code now} (seconds since 1970). */
    public double spent(double now) {
        double since = window == null ? Double.NEGATIVE_INFINITY : now - window;
        java.util.List<Double> epsilons = new java.util.ArrayList<>();
        for (Map<String, Object> charge : charges) {
            if (((Number) charge.get("at")).doubleValue() > since) epsilons.add(((Number) charge.get("epsilon")).doubleValue());
        }
        return fsum(epsilons);
    }

    /**
     * The correctly rounded sum of {@code values}, as Python's {@code math.fsum}: the ledger's spent sum, so that a
     * budget refuses exactly where Python's ledger does (a plain sum of 365 charges of 0.1 was 36.50000000000025 and
     * refused the 365th report under a budget of 36.5).  The exact sum of doubles, rounded once.
     */
    static double fsum(java.util.List<Double> values) {
        java.math.BigDecimal total = java.math.BigDecimal.ZERO;
        for (double value : values) total = total.add(new java.math.BigDecimal(value));
        return total.doubleValue();
    }

    /** The protocols that report through a memo (Python's tags.memoized; the JavaScript ledger's MEMOIZED_PROTOCOLS). */
    public static final Set<String> MEMOIZED_PROTOCOLS = Collections.unmodifiableSet(new HashSet<>(Arrays.asList("dbitflippm", "l-grr", "l-osue", "loloha")));
    /** The lattice step of composed randomized responses (Python's dpdist.accounting._randomized_response.STEP). */
    static final double LATTICE_STEP = 1e-4;

    /**
     * The chance one report of {@code protocol} is a randomized response of its epsilon (Python's
     * randomized_response_share; the JavaScript ledger's responseShare): GRR p + q, SS (pIn (d - k) + (1 - pIn) k) / (d - 1),
     * the unary encodings p (1 - q) + q (1 - p); 1 for every other protocol.
     */
    public static double responseShare(Protocol protocol) {
        if (protocol instanceof GRR) {
            GRR grr = (GRR) protocol;
            return Math.min(1, grr.keep + 2 * (1 - grr.keep) / grr.domainSize());
        }
        if (protocol instanceof SS) {
            SS ss = (SS) protocol;
            int d = ss.domainSize(), k = ss.subsetSize;
            return Math.min(1, (ss.pIn * (d - k) + (1 - ss.pIn) * k) / (d - 1));
        }
        if (protocol instanceof UnaryEncoding && (protocol.name.equals("oue") || protocol.name.equals("sue"))) {
            UnaryEncoding unary = (UnaryEncoding) protocol;
            return Math.min(1, unary.p() * (1 - unary.q()) + unary.q() * (1 - unary.p()));
        }
        return 1;
    }

    /**
     * The epsilon the charges within the window ending {@code now} spend at {@code delta}: Python's
     * {@code PrivacyLedger.statement(delta).epsilon} (the tightest accountant) and the JavaScript ledger's, by the same
     * steps: each fresh report a randomized response of its epsilon with its charge's share, a memo's charges at one
     * collector one randomized response of their sum, composed on the lattice; never above {@link #spent}, which it
     * is at delta 0.
     */
    public double epsilonAt(double delta, double now) {
        if (!(delta >= 0 && delta < 1)) throw new InvalidParameterError("The 'delta' of Ledger.epsilonAt must be a number in [0, 1). Got " + delta + ".");
        double since = window == null ? Double.NEGATIVE_INFINITY : now - window;
        List<double[]> responses = new ArrayList<>();
        Map<String, Double> memos = new TreeMap<>();
        for (Map<String, Object> charge : charges) {
            double epsilon = ((Number) charge.get("epsilon")).doubleValue();
            if (((Number) charge.get("at")).doubleValue() <= since || !(epsilon > 0)) continue;
            String name = (String) charge.get("protocol");
            if (MEMOIZED_PROTOCOLS.contains(name) || !org.dpdist.client.protocols.ProtocolIndex.protocols().containsKey(name)) { // unknown: gathered, as Python
                memos.merge(charge.get("collector") + " " + name, epsilon, (a, b) -> a + b);
            } else {
                long reports = ((Number) charge.get("reports")).longValue();
                responses.add(new double[] {epsilon / reports, reports, ((Number) charge.getOrDefault("share", 1.0)).doubleValue()});
            }
        }
        for (double epsilon : memos.values()) responses.add(new double[] {epsilon, 1, 1});
        double basic = spent(now);
        if (responses.isEmpty() || delta == 0) return basic;
        return Math.min(composedRandomizedResponse(responses, delta), basic);
    }

    /** {@code [epsilon, count, share]} fresh reports composed on the lattice: Python's composed_randomized_response. */
    static double composedRandomizedResponse(List<double[]> responses, double delta) {
        Map<List<Double>, Long> groups = new TreeMap<>((a, b) -> a.get(0).doubleValue() == b.get(0).doubleValue()
            ? Double.compare(a.get(1), b.get(1)) : Double.compare(a.get(0), b.get(0)));
        for (double[] response : responses) {
            double share = Math.min(response[2], 1);
            if (!(response[1] > 0) || !(response[0] > 0) || !(share > 0)) continue;
            long m = (long) Math.ceil(response[0] / LATTICE_STEP);
            if (m > 0) groups.merge(Arrays.asList((double) m, share), (long) response[1], (a, b) -> a + b);
        }
        if (groups.isEmpty()) return 0;
        double[] law = {1};
        long total = 0;
        for (Map.Entry<List<Double>, Long> group : groups.entrySet()) {
            int m = (int) (double) group.getKey().get(0), k = (int) (long) group.getValue();
            double[] masses = groupLaw(k, m * LATTICE_STEP, group.getKey().get(1));
            double[] wider = new double[law.length + 2 * m * k];
            for (int t = 0; t < masses.length; t++) {
                if (masses[t] == 0) continue;
                for (int i = 0, at = m * t; i < law.length; i++, at++) wider[at] += masses[t] * law[i];
            }
            law = wider;
            total += (long) m * k;
        }
        double above = 0, weighted = 0, shrink = Libm.exp(-LATTICE_STEP);
        for (int j = law.length - 1; j > 0; j--) {
            above += law[j];
            weighted = (weighted + law[j]) * shrink; // now at x = L_(j-1)
            double point = LATTICE_STEP * (j - 1 - total);
            if (above - weighted > delta) return Math.max(point + Math.log((above - delta) / weighted), 0);
            if (point <= 0) return 0;
        }
        return 0;
    }

    /** The law of T = 2A + Z on 0..2k: A of k reports answer +epsilon, Z nothing (Python's _group_law). */
    private static double[] groupLaw(int k, double epsilon, double share) {
        double[] law = new double[2 * k + 1];
        double none = -Math.log1p(Libm.exp(epsilon));
        if (share >= 1) {
            double[] masses = binomial(k, epsilon, none);
            for (int b = 0; b <= k; b++) law[2 * b] = masses[b];
            return law;
        }
        double[] answered = binomial(k, Math.log(share / (1 - share)), Math.log1p(-share));
        for (int count = 0; count <= k; count++) {
            double[] inner = binomial(count, epsilon, none);
            for (int b = 0; b <= count; b++) law[k - count + 2 * b] += answered[count] * inner[b];
        }
        return law;
    }

    private static double[] binomial(int k, double logOdds, double logNone) {
        double[] masses = new double[k + 1];
        double logMass = k * logNone;
        for (int b = 0; b <= k; b++) {
            masses[b] = Libm.exp(logMass);
            if (b < k) logMass += Math.log((double) (k - b) / (b + 1)) + logOdds;
        }
        return masses;
    }

    /** The budget left within the window ending {@code now}. */
    public double remaining(double now) {
        return Math.max(0, budget - spent(now));
    }

    /** The budget left now. */
    public double remaining() {
        return remaining(now());
    }

    /** Reports the device has sent through {@code protocol}'s scope at {@code collector}. */
    public long reportsSent(Protocol protocol, String collector) {
        Stream stream = streams.get(budgetScope(collector, protocol.config()));
        return stream == null ? 0 : stream.reports;
    }

    /** Epsilon the next {@code reports} reports of {@code protocol} at {@code collector} would be charged (public inputs only). */
    public double cost(Protocol protocol, long reports, String collector) {
        if (!(reports > 0)) return 0;
        if (!(protocol instanceof Longitudinal)) return reports * protocol.epsilon();
        long sent = reportsSent(protocol, collector);
        Longitudinal.Losses losses = ((Longitudinal) protocol).losses();
        // stable: eps_inf for each of a scope's first K reports (per new key would make the refusal depend on the values)
        if (accounting.equals("stable")) return Math.max(0, Math.min(sent + reports, losses.keys) - sent) * losses.epsilonInf;
        double after = historyEpsilon(sent + reports, losses);
        if (Double.isInfinite(after)) return Double.POSITIVE_INFINITY;
        return after - (sent == 0 ? 0 : historyEpsilon(sent, losses));
    }

    /** The Memo of {@code protocol}'s scope at {@code collector}, or null before its first report. */
    public Memo memoOf(Protocol protocol, String collector) {
        Stream stream = streams.get(budgetScope(collector, protocol.config()));
        return stream == null ? null : stream.memo;
    }

    /** Whether the device has answered the question {@code once} of {@code collector}. */
    public boolean answered(String once, String collector) {
        return answered.containsKey(onceKey(collector, once));
    }

    /**
     * The round (1-based) this device answers of the campaign in rounds {@code once} at {@code collector} (Python's
     * PrivacyLedger.round_for): drawn on first call, round k with probability sizes[k-1] / sum(sizes) (the rounds' public
     * group sizes), and kept ({@code onChange}) before it is returned.
     */
    public long roundFor(String once, String collector, List<?> sizes, RandomSource source) {
        if (once == null || once.isEmpty()) throw new InvalidParameterError("The 'once' of Ledger.roundFor must be a non-empty string. Got " + Json.show(once) + ".");
        String key = onceKey(collector, once);
        Long kept = rounds.get(key);
        if (kept != null) return kept;
        long total = 0;
        boolean ok = sizes != null && !sizes.isEmpty();
        for (int i = 0; ok && i < sizes.size(); i++) {
            ok = Json.isSafeInteger(sizes.get(i)) && ((Number) sizes.get(i)).longValue() >= 0;
            if (ok) total += ((Number) sizes.get(i)).longValue();
        }
        if (!ok || total <= 0 || total > 9007199254740991L) {
            throw new InvalidParameterError("The 'sizes' of Ledger.roundFor must be the rounds' group sizes, integers >= 0 with a positive sum. Got "
                + Json.show(sizes) + ".");
        }
        long draw = source.uniformInt(total);
        long round = 1;
        while (draw >= ((Number) sizes.get((int) round - 1)).longValue()) {
            draw -= ((Number) sizes.get((int) round - 1)).longValue();
            round += 1;
        }
        rounds.put(key, round);
        if (onChange != null) onChange.accept(this); // kept before anyone learns whether its round is open
        return round;
    }

    /** Every charge {at, epsilon, collector, protocol, reports} (copies). */
    public List<Map<String, Object>> charges() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> charge : charges) out.add(new LinkedHashMap<>(charge));
        return out;
    }

    /**
     * Reports of {@code values} (all of this one device) as one ReportBatch, charged first and refused whole if over
     * budget.  Memoized protocols report through the scope's memo; others draw fresh reports.  {@code once}: the name of
     * a question the device answers at most once at {@code collector} (null: none); one value, and never a second time.
     */
    public ReportBatch report(Protocol protocol, List<?> values, String named, RandomSource source, double now, String once) {
        String collector = normalCollector(named);
        if (once != null) checkOnce(once, collector, values.size());
        Stream stream = protocol instanceof Longitudinal ? stream(protocol, collector) : null;
        double cost = cost(protocol, values.size(), collector);
        double left = budget - spent(now);
        if (!(cost <= left * (1 + 1e-12))) { // NaN-safe: anything not clearly within the budget is refused
            String within = window == null ? "" : " within " + window + " s";
            throw new PrivacyBudgetError("Refused: " + values.size() + " report(s) of " + protocol.name + " to '" + collector + "' would spend epsilon "
                + Json.sixDigits(cost) + ", and this device has " + Json.sixDigits(Math.max(left, 0)) + " left of its budget of " + Json.sixDigits(budget)
                + within + " (" + accounting + " accounting). Nothing was sent; the device's owner may raise the budget.", Math.max(left, 0));
        }
        ReportBatch batch;
        if (stream == null) {
            batch = protocol.privatize(values, source);
        } else {
            Object[] checked = protocol.checkValues(values); // every value checked before the memo draws anything
            byte[] bytes = new byte[values.size() * protocol.rowBytes()];
            for (int i = 0; i < checked.length; i++) {
                ReportBatch row = stream.memo.report(values.get(i), source);
                System.arraycopy(row.bytes, 0, bytes, i * protocol.rowBytes(), protocol.rowBytes());
            }
            batch = protocol.batchOf(values.size(), bytes);
            stream.reports += values.size();
        }
        if (!values.isEmpty()) {
            Map<String, Object> charge = new LinkedHashMap<>();
            charge.put("at", now);
            charge.put("epsilon", cost);
            charge.put("collector", collector);
            charge.put("protocol", protocol.name);
            charge.put("reports", (long) values.size());
            double share = stream == null ? responseShare(protocol) : 1.0;
            if (share < 1) charge.put("share", share);
            charges.add(charge);
        }
        if (once != null) {
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("at", now);
            answer.put("protocol", protocol.name);
            answered.put(onceKey(collector, once), answer);
        }
        if (onChange != null) onChange.accept(this); // persisted before the reports leave
        return batch;
    }

    /** {@link #report(Protocol, List, String, RandomSource, double, String)} now, from the CSPRNG, without {@code once}. */
    public ReportBatch report(Protocol protocol, List<?> values, String collector) {
        return report(protocol, values, collector, RandomSource.secureSource(), now(), null);
    }

    private void checkOnce(String once, String collector, int size) {
        if (once.isEmpty()) throw new InvalidParameterError("The 'once' option of Ledger.report must be a non-empty string. Got \"\".");
        if (size != 1) {
            throw new InvalidParameterError("A question asked once per device ('once'=" + Json.show(once) + ") takes one value. Got " + size + " values.");
        }
        Map<String, Object> earlier = answered.get(onceKey(collector, once));
        if (earlier != null) {
            throw new PrivacyBudgetError("Refused: this device already answered '" + once + "' of '" + collector + "' (with " + earlier.get("protocol")
                + "). Its guarantee holds for one answer per device (a campaign in rounds: one round per user, by parallel composition); a second "
                + "answer would spend epsilon again. Nothing was sent.", remaining());
        }
    }

    private Stream stream(Protocol protocol, String collector) {
        String scope = budgetScope(collector, protocol.config());
        Stream stream = streams.get(scope);
        if (stream == null) {
            stream = new Stream(collector, new Memo(protocol), 0);
            streams.put(scope, stream);
            return stream;
        }
        Map<String, Object> kept = stream.memo.protocol().config();
        Map<String, Object> asked = protocol.config();
        List<String> changed = new ArrayList<>();
        for (String key : Arrays.asList("epsilon", "epsilon_1")) {
            if (kept.containsKey(key) && !Json.same(kept.get(key), asked.get(key))) changed.add(key);
        }
        if (!changed.isEmpty()) {
            throw new PrivacyBudgetError("Refused: '" + collector + "' now asks for " + protocol.name + " with " + describe(asked, changed)
                + ", but this device keeps permanent responses drawn for " + describe(kept, changed) + " under the same collector, protocol and domain. "
                + "A changed privacy parameter would make the device draw them again (a fresh epsilon_inf each time), so the device keeps its memo and "
                + "does not report under the new parameters.", remaining());
        }
        return stream;
    }

    private static String describe(Map<String, Object> config, List<String> keys) {
        List<String> parts = new ArrayList<>();
        for (String key : keys) parts.add(key + "=" + config.get(key));
        return String.join(", ", parts);
    }

    // ---------------------------------------------------------------- JSON

    /** The JSON form (Python's PrivacyLedger.to_dict). */
    public Map<String, Object> toJson() {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("format", LEDGER_FORMAT);
        // version 2 once the device answered a question asked once: readers of version 1 would drop "answered"
        state.put("version", answered.isEmpty() && rounds.isEmpty() ? 1L : 2L);
        state.put("budget", budget);
        state.put("window", window);
        state.put("accounting", accounting);
        Map<String, Object> scopes = new LinkedHashMap<>();
        for (Map.Entry<String, Stream> entry : streams.entrySet()) {
            Map<String, Object> stream = new LinkedHashMap<>();
            stream.put("collector", entry.getValue().collector);
            stream.put("reports", entry.getValue().reports);
            stream.putAll(entry.getValue().memo.toJson());
            scopes.put(entry.getKey(), stream);
        }
        state.put("streams", scopes);
        state.put("charges", charges());
        Map<String, Object> answers = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, Object>> entry : answered.entrySet()) answers.put(entry.getKey(), new LinkedHashMap<>(entry.getValue()));
        state.put("answered", answers);
        if (!rounds.isEmpty()) state.put("rounds", new LinkedHashMap<String, Object>(rounds));
        return state;
    }

    /**
     * The ledger of {@link #toJson()} (or of Python's to_dict, or the JavaScript client's), persisting through
     * {@code onChange}; refused (IncompatibleStateError) when damaged, never dropped.
     */
    public static Ledger fromJson(Object json, Consumer<Ledger> onChange) {
        Map<String, Object> state = Json.asObject(json);
        if (state == null || !LEDGER_FORMAT.equals(state.get("format")) || !(Json.same(state.get("version"), 1) || Json.same(state.get("version"), 2))) {
            throw new IncompatibleStateError("Not a dpdist privacy ledger (format '" + LEDGER_FORMAT + "', version 1 or 2).");
        }
        Ledger ledger;
        try {
            Object window = state.get("window");
            ledger = new Ledger(((Number) state.get("budget")).doubleValue(), window == null ? null : ((Number) window).doubleValue(),
                (String) state.get("accounting"), onChange);
        } catch (InvalidParameterError | ClassCastException | NullPointerException error) {
            throw new IncompatibleStateError("A privacy ledger's settings are damaged: " + error.getMessage());
        }
        Map<String, Object> scopes = Json.asObject(state.get("streams"));
        List<Object> charges = Json.asList(state.get("charges"));
        if (scopes == null || charges == null) throw new IncompatibleStateError("A privacy ledger needs 'streams' (an object) and 'charges' (a list).");
        for (Map.Entry<String, Object> entry : scopes.entrySet()) ledger.loadStream(entry.getKey(), entry.getValue());
        for (Object charge : charges) ledger.charges.add(checkCharge(charge));
        ledger.loadAnswers(state.containsKey("answered") ? state.get("answered") : new LinkedHashMap<String, Object>());
        ledger.loadRounds(state.containsKey("rounds") ? state.get("rounds") : new LinkedHashMap<String, Object>());
        return ledger;
    }

    private void loadStream(String scope, Object value) {
        Map<String, Object> stream = Json.asObject(value);
        if (stream == null || !(stream.get("collector") instanceof String) || !Json.isSafeInteger(stream.get("reports"))
            || ((Number) stream.get("reports")).longValue() < 0) {
            throw new IncompatibleStateError("Ledger stream " + Json.show(scope) + " is damaged.");
        }
        String owner = (String) stream.get("collector");
        long reports = ((Number) stream.get("reports")).longValue();
        Map<String, Object> memoState = new LinkedHashMap<>(stream);
        memoState.remove("collector");
        memoState.remove("reports");
        Memo memo;
        try {
            memo = new Memo(DpDist.fromConfig(memoState.get("config")), memoState, null);
        } catch (DPDistError error) {
            throw new IncompatibleStateError("Ledger stream " + Json.show(scope) + ": " + error.getMessage());
        }
        String current = budgetScope(owner, memo.protocol().config());
        if (!renormalized(scope).equals(current)) throw new IncompatibleStateError("Ledger stream " + Json.show(scope) + " holds a memo of another scope.");
        Stream kept = streams.get(current); // two spellings of one collector (an earlier normalization)
        if (kept != null) {
            kept.reports += reports; // keep one memo; every report through either counts
            return;
        }
        streams.put(current, new Stream(normalCollector(owner), memo, reports));
    }

    private static Map<String, Object> checkCharge(Object value) {
        Map<String, Object> charge = Json.asObject(value);
        Set<String> keys = charge == null ? null : new java.util.TreeSet<>(charge.keySet());
        if (keys != null) keys.remove("share");
        Object share = charge == null ? null : charge.getOrDefault("share", 1.0);
        boolean ok = charge != null && keys.equals(new java.util.TreeSet<>(Arrays.asList("at", "collector", "epsilon", "protocol", "reports")))
            && Json.isFinite(share) && ((Number) share).doubleValue() > 0 && ((Number) share).doubleValue() <= 1
            && Json.isFinite(charge.get("at")) && Json.isFinite(charge.get("epsilon")) && ((Number) charge.get("epsilon")).doubleValue() >= 0
            && charge.get("collector") instanceof String && charge.get("protocol") instanceof String
            && Json.isSafeInteger(charge.get("reports")) && ((Number) charge.get("reports")).longValue() >= 1;
        if (!ok) throw new IncompatibleStateError("A privacy ledger's charge is damaged: not an object with a time and an epsilon.");
        return new LinkedHashMap<>(charge);
    }

    private void loadAnswers(Object value) {
        Map<String, Object> answers = Json.asObject(value);
        if (answers == null) throw new IncompatibleStateError("A privacy ledger's 'answered' must be an object. Got " + ValueDomain.typeOf(value) + ".");
        for (Map.Entry<String, Object> entry : answers.entrySet()) {
            Map<String, Object> answer = Json.asObject(entry.getValue());
            boolean ok = entry.getKey().contains(" ") && answer != null && answer.size() == 2 && Json.isFinite(answer.get("at"))
                && answer.get("protocol") instanceof String;
            if (!ok) throw new IncompatibleStateError("A privacy ledger's answer " + Json.show(entry.getKey()) + " is damaged: not an object of 'at' and 'protocol'.");
            Map<String, Object> kept = new LinkedHashMap<>();
            kept.put("at", ((Number) answer.get("at")).doubleValue());
            kept.put("protocol", answer.get("protocol"));
            answered.put(renormalized(entry.getKey()), kept);
        }
    }

    private void loadRounds(Object value) {
        Map<String, Object> kept = Json.asObject(value);
        if (kept == null) throw new IncompatibleStateError("A privacy ledger's 'rounds' is damaged: not an object of round numbers.");
        for (Map.Entry<String, Object> entry : kept.entrySet()) {
            Object round = entry.getValue();
            if (!entry.getKey().contains(" ") || !Json.isSafeInteger(round) || ((Number) round).longValue() < 1) {
                throw new IncompatibleStateError("A privacy ledger's 'rounds' is damaged: not an object of round numbers.");
            }
            rounds.put(renormalized(entry.getKey()), ((Number) round).longValue());
        }
    }
}
