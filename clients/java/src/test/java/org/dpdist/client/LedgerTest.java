package org.dpdist.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
