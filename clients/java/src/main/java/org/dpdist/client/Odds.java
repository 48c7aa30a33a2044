package org.dpdist.client;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.dpdist.client.protocols.FrequencyProtocol;
import org.dpdist.client.protocols.Longitudinal;
import org.dpdist.client.protocols.Protocol;

/**
 * What someone who sees this device's reports can guess of its value, in words a person reads, beside chance (the
 * JavaScript client's {@code src/odds.js}; Python's {@code dpdist.accounting.guess_bound}).
 *
 * <p>Computed from the protocol's public parameters only (its name, epsilon, domain), never from a value.  With m
 * values equally likely before a report, nobody who sees it guesses the value with a probability above
 * {@code e^eps / (e^eps + m - 1)}, whatever else they know; GRR reaches it (the exact figure), every other protocol
 * stays below it ("at most").  A numerical value is guessed among equal ranges of its bounds, a record one answer at a
 * time (the question with the fewest answers), a word among every word; a longitudinal protocol's one report at
 * epsilon_1, all of its reports of an unchanged value at epsilon_inf.
 */
public final class Odds {
    /** Below this chance a probability reads as a multiple of a blind guess, not as a percentage. */
    static final double TINY = 1e-4;
    private static final BigDecimal HUNDRED = BigDecimal.valueOf(100);

    private Odds() {}

    /** The bound of any (epsilon, 0) guarantee on guessing a value whose likeliest candidate has probability {@code chance}. */
    public static double guessBound(double epsilon, double chance) {
        double odds = Math.exp(epsilon) * chance; // Infinity past e^709: the bound is 1
        return Math.min(1.0, Math.max(chance, 1.0 - (1.0 - chance) / (odds + 1.0 - chance)));
    }

    /**
     * One sentence a person reads before taking part: how likely their answer is guessed from what they send, with the
     * chance baseline; null for a protocol of key-value pairs.
     */
    public static String consentText(Protocol protocol) {
        String target;
        double values;
        switch (protocol.kind()) {
            case "frequency":
                target = "your value";
                values = ((FrequencyProtocol) protocol).domainSize();
                break;
            case "numerical": {
                List<?> bounds = (List<?>) protocol.param("bounds");
                int groups = ranges(protocol);
                target = "which of " + groups + " equal ranges of [" + number(bounds.get(0)) + ", " + number(bounds.get(1))
                    + "] your value lies in";
                values = groups;
                break;
            }
            case "multi":
                target = "your answer to one question";
                values = fewestAnswers(protocol);
                break;
            case "heavy_hitters": {
                Object alphabet = protocol.param("alphabet");
                target = "your word";
                values = alphabet != null
                    ? Math.pow(((String) alphabet).codePointCount(0, ((String) alphabet).length()), ((Number) protocol.param("max_chars")).doubleValue())
                    : Math.pow(2, ((Number) protocol.param("bits")).doubleValue());
                break;
            }
            default:
                return null;
        }
        double chance = 1.0 / values;
        String baseline = (chance >= TINY ? "against " + percent(chance, false) + " by chance"
            : "a blind guess being right once in " + String.format(Locale.ROOT, "%,d", significant(1.0 / chance, false, 3).longValue()))
            + ", if every answer is equally likely; whatever else they know, at most " + times(protocol instanceof Longitudinal
                ? ((Longitudinal) protocol).losses().epsilonInf : protocol.epsilon(), values) + " times a blind guess";
        if (!(protocol instanceof Longitudinal)) {
            double probability = guessBound(protocol.epsilon(), chance);
            return "Someone who sees your report can guess " + target + " with a probability of "
                + odds(probability, chance, "grr".equals(protocol.name)) + ", " + baseline + ".";
        }
        Longitudinal.Losses losses = ((Longitudinal) protocol).losses();
        return "Someone who sees one of your reports can guess " + target + " with a probability of "
            + odds(guessBound(losses.epsilon1, chance), chance, false) + "; all of your reports of a value that does not change, "
            + odds(guessBound(losses.epsilonInf, chance), chance, false) + "; " + baseline + ".";
    }

    /**
     * At most how many times a blind guess the best guess is right, whatever the attacker's prior (whatever else it
     * knows): min(e^epsilon, values), as success is at most e^epsilon times the likeliest value's probability, and at
     * most 1; rounded up to three significant digits (Python's {@code GuessOdds.times}, in words).
     */
    static String times(double epsilon, double values) {
        BigDecimal shown = significant(epsilon >= Math.log(values) ? values : Math.exp(epsilon), true, 3).stripTrailingZeros();
        return String.format(Locale.ROOT, "%,." + Math.max(0, shown.scale()) + "f", shown);
    }

    /**
     * A probability as a percentage of three significant digits ({@link #significant}), or of as many more as keep a
     * probability below 1 from reading 100%, to the nearest (Python's {@code dpdist.accounting._odds.percent}).
     */
    public static String percent(double value) {
        return percent(value, false);
    }

    /** {@link #percent(double)}, rounded up where {@code bound}: an attacker's success, never shown below it. */
    public static String percent(double value, boolean bound) {
        int digits = 3;
        while (significant(100.0 * value, bound, digits).compareTo(HUNDRED) >= 0 && value < 1.0 && digits < 12) digits += 1;
        return significant(100.0 * value, bound, digits).stripTrailingZeros().toPlainString() + "%";
    }

    /**
     * {@code value} (at least 0) to {@code digits} significant digits, read from its 12 (the float noise below them is
     * no figure's own: an exact 28% stays 28%): rounded up where it is a bound a person reads ("at most", an attacker's
     * success: never shown below it), else to the nearest, half up (Python's {@code dpdist.accounting._odds.significant}).
     */
    static BigDecimal significant(double value, boolean bound, int digits) {
        BigDecimal clean = new BigDecimal(value).round(new MathContext(12, RoundingMode.HALF_UP));
        return clean.round(new MathContext(digits, bound ? RoundingMode.CEILING : RoundingMode.HALF_UP));
    }

    private static String odds(double probability, double chance, boolean exact) {
        String atMost = exact ? "" : "at most ";
        if (chance >= TINY) return atMost + percent(probability, true);
        return atMost + significant(probability / chance, true, 3).stripTrailingZeros().toPlainString() + " times that of a blind guess";
    }

    /** Equal ranges of a numerical protocol's bounds: as many of its bins as divide them, at most 10. */
    private static int ranges(Protocol protocol) {
        Object bins = protocol.param("bins");
        int count = bins == null ? 10 : ((Number) bins).intValue();
        int groups = Math.min(count, 10);
        while (count % groups != 0) groups -= 1;
        return Math.max(groups, 2);
    }

    @SuppressWarnings("unchecked")
    private static double fewestAnswers(Protocol protocol) {
        double fewest = Double.POSITIVE_INFINITY;
        for (Object attribute : (List<Object>) protocol.param("attributes")) {
            Map<String, Object> entry = (Map<String, Object>) attribute;
            double size = entry.containsKey("bounds") ? 10 : ((Number) entry.get("domain_size")).doubleValue();
            fewest = Math.min(fewest, size);
        }
        return fewest;
    }

    private static String number(Object value) {
        double x = ((Number) value).doubleValue();
        return x == Math.rint(x) && Math.abs(x) < 1e15 ? String.valueOf((long) x) : String.valueOf(x);
    }
}
