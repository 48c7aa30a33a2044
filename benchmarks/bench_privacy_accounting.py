"""Cost and tightness of the privacy accounting added by issues 27 and 34, one process, CPU seconds.

* ``dpdist.amplification.account``: the central epsilon of n shuffled reports at delta = 1e-8, per
  (protocol, epsilon0, n), against the published numerical bounds reimplemented here from their
  definitions: Wang et al.'s variation-ratio bound (VLDB 2024; p = q = e^eps0, beta the pair's total
  variation, every other user a clone with probability beta/(e^eps0 - 1) per side and otherwise carrying
  the victim's common part) and FMT21's clone bound for any eps0-LDP randomizer; CPU per (protocol, n)
  (target: < 1 s; accuracy target: within 10% of the best published bound);
* a device's reports through ``PrivacyLedger.report`` against the bare ``MemoizedClient.report``
  (the ledger's charge and scope bookkeeping per report);
* the exact over-time check of the conformance kit (``check_reports_over_time``) per protocol example.

Run: ``uv run python benchmarks/bench_privacy_accounting.py`` (writes ``results/amplification.json``)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from dpdist import amplification, local, testing
from dpdist.amplification._reference import variation_ratio_epsilon
from dpdist.local.ledger import PrivacyLedger

DELTA = 1e-8
PROTOCOLS = [("grr", 2), ("grr", 64), ("grr", 1024), ("ss", 64), ("oue", 64), ("sue", 64)]


def cpu(call, repeat: int = 1) -> float:
    start = time.process_time()
    for _ in range(repeat):
        call()
    return (time.process_time() - start) / repeat


def amplification_table() -> list[dict]:
    rows = []
    print("| protocol | d | eps0 | n | dpdist | variation-ratio (Wang et al.) | ratio | FMT21 numerical (any) | closed form | CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, d in PROTOCOLS:
        for epsilon0 in (0.5, 1.0, 2.0, 4.0, 8.0):
            protocol = local.make(name, epsilon=epsilon0, domain_size=d)
            for n in (10**5, 10**6, 10**7, 10**8):
                seconds = cpu(lambda: amplification.account(protocol, n, DELTA))
                ours = amplification.account(protocol, n, DELTA).epsilon
                published = variation_ratio_epsilon(protocol, n, DELTA)
                generic = amplification.numerical_epsilon(protocol.guarantee.epsilon, n, DELTA)
                closed = amplification.closed_form_epsilon(protocol.guarantee.epsilon, n, DELTA)
                rows.append({"protocol": name, "d": d, "epsilon0": epsilon0, "n": n, "dpdist": ours,
                             "variation_ratio": published, "fmt21_generic": generic, "closed_form": closed,
                             "cpu_s": seconds})
                print(f"| {name} | {d} | {epsilon0:g} | {n:.0e} | {ours:.4g} | {published:.4g} | {ours / published:.3f} "
                      f"| {generic:.4g} | {closed:.4g} | {seconds:.2f} |", flush=True)
    return rows


def main() -> None:
    import sys

    amplification.numerical_epsilon(1.0, 1000, 1e-8)  # scipy imported once
    rows = amplification_table()
    ratios = [row["dpdist"] / row["variation_ratio"] for row in rows]
    print(f"\nratio to the variation-ratio bound: max {max(ratios):.3f}, median {np.median(ratios):.4f}; "
          f"CPU max {max(row['cpu_s'] for row in rows):.2f} s")
    out = Path(__file__).parent / "results" / "amplification.json"
    out.write_text(json.dumps({"delta": DELTA, "rows": rows}, indent=1))
    if "--amplification-only" in sys.argv:
        return

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
