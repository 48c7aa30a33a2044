"""Cost of the privacy accounting added by issues 27 and 34, one process, CPU seconds.

* ``dpdist.amplification.numerical_epsilon``: CPU per (epsilon0, n) at delta = 1e-8 (target: < 1 s);
* a device's reports through ``PrivacyLedger.report`` against the bare ``MemoizedClient.report``
  (the ledger's charge and scope bookkeeping per report);
* the exact over-time check of the conformance kit (``check_reports_over_time``) per protocol example.

Run: ``uv run python benchmarks/bench_privacy_accounting.py``
"""

from __future__ import annotations

import math
import time

from dpdist import amplification, local, testing
from dpdist.local.ledger import PrivacyLedger


def cpu(call, repeat: int = 1) -> float:
    start = time.process_time()
    for _ in range(repeat):
        call()
    return (time.process_time() - start) / repeat


def main() -> None:
    amplification.numerical_epsilon(1.0, 1000, 1e-8)  # scipy imported once
    print("| eps0 | n | closed form | numerical (any randomizer) | numerical (GRR clone prob.) | CPU s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for epsilon0 in (0.5, 2.0, 4.0, 8.0):
        for n in (10**5, 10**6, 10**7, 10**8):
            seconds = cpu(lambda: amplification.numerical_epsilon(epsilon0, n, 1e-8))
            general = amplification.numerical_epsilon(epsilon0, n, 1e-8)
            grr = amplification.numerical_epsilon(epsilon0, n, 1e-8, 2 / (math.exp(epsilon0) + 1))
            closed = amplification.closed_form_epsilon(epsilon0, n, 1e-8)
            print(f"| {epsilon0:g} | {n:.0e} | {closed:.4g} | {general:.4g} | {grr:.4g} | {seconds:.2f} |")

    protocol = local.make("l-grr", epsilon=4.0, epsilon_1=1.0, domain_size=8)
    client = protocol.client()
    bare = cpu(lambda: client.report(3), repeat=2000)
    ledger = PrivacyLedger(budget=1e9)
    charged = cpu(lambda: ledger.report(protocol, [3]), repeat=2000)
    print(f"\nl-grr report: bare client {bare * 1e6:.0f} us, through the ledger {charged * 1e6:.0f} us")

    for name, params in [("l-grr", {"epsilon": 4.0, "epsilon_1": 0.5, "domain_size": 2}),
                         ("l-osue", {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}),
                         ("loloha", {"epsilon": 4.0, "epsilon_1": 1.5, "domain_size": 4, "variant": "binary",
                                     "hash_prime": 5})]:
        seconds = cpu(lambda: testing.check_reports_over_time(local.make(name, **params)))
        print(f"check_reports_over_time {name} {params}: {seconds:.2f} s")


if __name__ == "__main__":
    main()
