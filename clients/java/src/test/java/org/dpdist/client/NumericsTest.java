package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

import org.dpdist.client.protocols.FakeData;
import org.dpdist.client.protocols.HDG;
import org.dpdist.client.protocols.HashFamily;
import org.dpdist.client.protocols.PEM;
import org.junit.jupiter.api.Test;

/**
 * The numerics the randomizers' constants come from, against Python's values in the fixture: the correctly rounded exp
 * (where the platform's may differ in the last bit), ceil(log2 x), HDG's guideline granularities, the realized priors of
 * RS+RFD, PEM's word encoding and public hash family; and Python's float repr, which record headers are written with.
 */
class NumericsTest {
    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value) {
        return (List<Object>) value;
    }

    @Test
    void expIsCorrectlyRoundedWhereStrictMathIsNot() {
        Map<String, Object> exp = Json.asObject(Fixtures.python().get("exp"));
        List<Object> xs = list(exp.get("x"));
        List<Object> rounded = list(exp.get("correctly_rounded"));
        int strictDiffers = 0;
        for (int i = 0; i < xs.size(); i++) {
            double x = ((Number) xs.get(i)).doubleValue();
            double expected = ((Number) rounded.get(i)).doubleValue();
            assertEquals(expected, Libm.exp(x), "exp(" + x + ")");
            if (StrictMath.exp(x) != expected) strictDiffers += 1;
        }
        assertTrue(xs.size() > 100);
        assertTrue(strictDiffers > 0, "the fixture holds no input where fdlibm's exp is off by an ulp: the test would not catch a plain exp");
    }

    @Test
    void ceilLog2IsPythonsMathCeilOfMathLog2() {
        for (Object pair : list(Fixtures.python().get("ceil_log2"))) {
            double x = ((Number) list(pair).get(0)).doubleValue();
            assertEquals(((Number) list(pair).get(1)).intValue(), Libm.ceilLog2(x), "ceil(log2(" + x + "))");
        }
    }

    @Test
    void hdgGranularitiesArePythonsGuideline() {
        List<Object> cases = list(Fixtures.python().get("granularities"));
        assertTrue(cases.size() > 1000);
        for (Object entry : cases) {
            List<Object> c = list(entry);
            int[] got = HDG.guidelineGranularities(((Number) c.get(0)).doubleValue(), ((Number) c.get(1)).doubleValue(), ((Number) c.get(2)).intValue(),
                (Boolean) c.get(3), ((Number) c.get(4)).intValue());
            assertArrayEquals(new int[] {((Number) c.get(5)).intValue(), ((Number) c.get(6)).intValue()}, got, Json.write(c));
        }
    }

    @Test
    void priorsAreRealizedAsPythonRealizesThem() {
        for (Map<String, Object> entry : Fixtures.entries("priors")) {
            List<Object> prior = list(entry.get("prior"));
            double[] values = new double[prior.size()];
            for (int i = 0; i < values.length; i++) values[i] = ((Number) prior.get(i)).doubleValue();
            long[] weights = FakeData.quantizePrior(values);
            List<Object> expected = list(entry.get("weights"));
            long total = 0;
            for (int i = 0; i < weights.length; i++) {
                assertEquals(((Number) expected.get(i)).longValue(), weights[i], Json.write(prior));
                total += weights[i];
            }
            assertEquals(1L << 32, total);
        }
    }

    @Test
    void pemEncodesWordsAndHashesPrefixesAsPython() {
        Map<String, Object> pem = Json.asObject(Fixtures.python().get("pem"));
        Map<String, Object> config = Json.asObject(Json.parse("{\"protocol\": \"pem\", \"epsilon\": 1.0}"));
        config.put("alphabet", pem.get("alphabet"));
        config.put("max_chars", pem.get("max_chars"));
        PEM protocol = (PEM) DpDist.fromConfig(config);
        List<Object> words = list(pem.get("words"));
        List<Object> items = list(pem.get("items"));
        for (int i = 0; i < words.size(); i++) {
            assertEquals(new BigInteger((String) items.get(i)).longValue(), protocol.encodeWord((String) words.get(i), i), (String) words.get(i));
        }
        List<Object> prefixes = list(pem.get("prefixes"));
        List<Object> mixes = list(pem.get("mixes"));
        for (int i = 0; i < prefixes.size(); i++) {
            assertEquals(((Number) mixes.get(i)).longValue(), HashFamily.mixPrefix(new BigInteger(String.valueOf(prefixes.get(i))).longValue()));
        }
        long familySeed = ((Number) pem.get("family_seed")).longValue();
        List<Object> seeds = list(pem.get("seeds"));
        long[][] coefficients = HashFamily.coefficients(familySeed, seeds.size(), HashFamily.P);
        for (int j = 0; j < seeds.size(); j++) {
            long seed = new BigInteger(String.valueOf(seeds.get(j))).longValue();
            assertArrayEquals(new long[] {seed / HashFamily.P + 1, seed % HashFamily.P}, coefficients[j]);
        }
        assertThrows(OutOfDomainError.class, () -> protocol.checkValue("ABC", 0));
    }

    @Test
    void floatsAreWrittenAsPythonsRepr() {
        Object[][] cases = {
            {0.1, "0.1"}, {1.0, "1.0"}, {-0.0, "-0.0"}, {0.0, "0.0"}, {1e-5, "1e-05"}, {0.0001, "0.0001"}, {1e16, "1e+16"},
            {9999999999999998.0, "9999999999999998.0"}, {123456789012345678.0, "1.2345678901234568e+17"}, {5e-324, "5e-324"},
            {2.82879384806159e17, "2.82879384806159e+17"}, {1e23, "1e+23"}, {0.3333333333333333, "0.3333333333333333"},
            {2.0 / 3, "0.6666666666666666"}, {1.7976931348623157e308, "1.7976931348623157e+308"}, {-1.5e-7, "-1.5e-07"},
            {Math.scalb(1.0, -1074) * 3, "1.5e-323"}, {100.0, "100.0"}, {1e15, "1000000000000000.0"},
        };
        for (Object[] entry : cases) assertEquals(entry[1], PyJson.floatRepr((Double) entry[0]), String.valueOf(entry[0]));
        assertThrows(IllegalArgumentException.class, () -> PyJson.floatRepr(Double.NaN));
    }

    @Test
    void headersAreSortedAsciiJsonWithPythonsSeparators() {
        Map<String, Object> value = Json.asObject(Json.parse("{\"b\": [1, 2.5], \"a\": \"\u00fcber\\n\", \"c\": {\"z\": null, \"epsilon\": 2}}"));
        assertThrows(IllegalArgumentException.class, () -> PyJson.dumps(value, null)); // 2.5 is no integer, and not under a float key
        assertEquals("{\"a\": \"\\u00fcber\\n\", \"b\": [1.0, 2.5], \"c\": {\"epsilon\": 2.0, \"z\": null}}",
            PyJson.dumps(value, new java.util.HashSet<>(java.util.Arrays.asList("b", "epsilon"))));
    }
}
