package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.dpdist.client.protocols.Protocol;
import org.junit.jupiter.api.Test;

/** The ledger's sums, as Python's (math.fsum): a budget refuses where Python's ledger does. */
class LedgerTest {
    @Test
    void aBudgetOf36point5TakesAYearOfDailyReportsOf0point1() {
        Protocol grr = DpDist.fromConfig(Map.of("protocol", "grr", "version", 1, "epsilon", 0.1, "domain_size", 16));
        Ledger ledger = new Ledger(36.5, null, "history", null);
        for (int day = 0; day < 365; day++) {
            ledger.report(grr, List.of(day % 16), "https://c.example", new SeededSource(day), 86400.0 * day, null);
        }
        assertEquals(36.5, ledger.spent(86400.0 * 365));
        assertEquals(0.6, Ledger.fsum(List.of(0.1, 0.2, 0.3)));
        assertEquals(1.0, Ledger.fsum(List.of(1e100, 1.0, -1e100)));
    }

    /** BudgetSession(1000, 1e-8).campaign(make(name, epsilon=0.1, domain_size=16), reports=R).spent.epsilon, in Python. */
    private static final Object[][] SESSION = {
        {"grr", 1, 0.09999985427437512}, {"grr", 20, 0.9189957624548346}, {"grr", 365, 3.8974784485162126},
        {"oue", 1, 0.09999996162063401}, {"oue", 20, 1.5609646229502865}, {"oue", 365, 8.062049637835258},
        {"ss", 1, 0.0999999642842965}, {"ss", 20, 1.5907886087725964}, {"ss", 365, 8.358448359144152},
    };

    @Test
    void aCampaignsReportsAreChargedAsTheBudgetSessionChargesThem() {
        for (Object[] row : SESSION) {
            String name = (String) row[0];
            int reports = (Integer) row[1];
            double session = (Double) row[2];
            Protocol protocol = DpDist.fromConfig(Map.of("protocol", name, "version", 1, "epsilon", 0.1, "domain_size", 16));
            Ledger ledger = new Ledger(1000, null, "history", null);
            for (int day = 0; day < reports; day++) {
                ledger.report(protocol, List.of(day % 16), "https://c.example", new SeededSource(day), 1000.0 + day, null);
            }
            double stated = ledger.epsilonAt(1e-8, 5000);
            // at or above the session's figure (never below exact: the ledger's unary probabilities are rounded), within 1e-7
            assertTrue(stated >= session * (1 - 1e-12) && stated <= session * (1 + 1e-7), name + " " + reports + ": " + stated + " " + session);
            assertEquals(ledger.spent(5000), ledger.epsilonAt(0, 5000)); // pure: the sum, exact
        }
    }
}
