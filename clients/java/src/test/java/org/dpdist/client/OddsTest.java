package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The consent sentence: the bound of the protocol's epsilon beside chance, in the words of the JavaScript client. */
class OddsTest {
    /** The prior the figures assume, and what holds whatever the attacker knows (e^epsilon, at most the values). */
    private static String prior(String times) {
        return ", if every answer is equally likely; whatever else they know, at most " + times + " times a blind guess.";
    }

    @Test
    void grrStatesItsExactOddsAndTheOthersAnUpperBound() {
        assertEquals(Math.E / (Math.E + 7), Odds.guessBound(1.0, 1.0 / 8), 1e-15);
        assertEquals("Someone who sees your report can guess your value with a probability of 28%, against 12.5% by chance"
            + prior("2.72"), Odds.consentText(DpDist.fromConfig(Map.of("protocol", "grr", "version", 1, "epsilon", 1.0, "domain_size", 8))));
        assertEquals("Someone who sees your report can guess your value with a probability of 74.2%, against 12.5% by chance"
            + prior("8"), Odds.consentText(DpDist.fromConfig(Map.of("protocol", "grr", "version", 1, "epsilon", 3.0, "domain_size", 8))));
        assertEquals("Someone who sees your report can guess your value with a probability of at most 28%, against 12.5% by chance"
            + prior("2.72"),
            Odds.consentText(DpDist.fromConfig(Map.of("protocol", "oue", "version", 1, "epsilon", 1.0, "domain_size", 8))));
    }

    @Test
    void aLongitudinalProtocolStatesOneReportAndAnUnchangedValuesReports() {
        assertEquals("Someone who sees one of your reports can guess your value with a probability of at most 28%; all of your "
                + "reports of a value that does not change, at most 51.4%; against 12.5% by chance" + prior("7.39"),
            Odds.consentText(DpDist.fromConfig(Map.of("protocol", "l-grr", "version", 1, "epsilon", 2.0, "epsilon_1", 1.0,
                "domain_size", 8))));
    }

    @Test
    void numbersRecordsAndWordsAreGuessedAmongRangesAnswersAndWords() {
        assertEquals("Someone who sees your report can guess which of 10 equal ranges of [0, 100] your value lies in with a "
                + "probability of at most 23.2%, against 10% by chance" + prior("2.72"),
            Odds.consentText(DpDist.fromConfig(Map.of("protocol", "sw", "version", 1, "epsilon", 1.0, "bounds", List.of(0.0, 100.0),
                "bins", 20))));
        assertEquals("Someone who sees your report can guess your answer to one question with a probability of at most 78.7%, "
                + "against 33.3% by chance" + prior("3"),
            Odds.consentText(DpDist.fromConfig(Map.of("protocol", "spl", "version", 1, "epsilon", 2.0, "attributes",
                List.of(Map.of("name", "a", "domain_size", 3), Map.of("name", "b", "bounds", List.of(0.0, 1.0)))))));
        assertEquals("Someone who sees your report can guess your word with a probability of at most 7.39 times that of a blind "
                + "guess, a blind guess being right once in 4,290,000,000" + prior("7.39"),
            Odds.consentText(DpDist.fromConfig(Map.of("protocol", "pem", "version", 1, "epsilon", 2.0, "bits", 32))));
        assertNull(Odds.consentText(DpDist.fromConfig(Map.of("protocol", "privkv", "version", 1, "epsilon", 1.0, "domain_size", 4))));
    }

    @Test
    void aPercentageIsNeverRoundedUpToCertainty() {
        assertEquals("99.999995%", Odds.percent(0.99999995));
        assertEquals("99.999995%", Odds.percent(0.99999995, true));
        assertEquals("100%", Odds.percent(1.0));
        assertEquals("51.4%", Odds.percent(0.51351916));
    }

    @Test
    void aBoundIsRoundedUpAndChanceToTheNearestInDecimalFromTwelveDigits() {
        assertEquals("28.1%", Odds.percent(0.28049, true));
        assertEquals("28%", Odds.percent(0.28, true));
        assertEquals("28%", Odds.percent(0.2800000000001, true));
        assertEquals("0%", Odds.percent(0.0, true));
        assertEquals("28%", Odds.percent(0.28049));
        assertEquals("3.13%", Odds.percent(1.0 / 32));
        assertEquals("31.5%", Odds.percent(0.3145));
    }
}
