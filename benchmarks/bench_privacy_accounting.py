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

* ``--accountants``: the accountants of :mod:`dpdist.accounting` on k campaigns of GRR against the exact
  composition in closed form (the privacy loss of k-fold randomized response is a scaled binomial, trinomial for
  d > 2), with their CPU; dp_accounting against dpdist's composition on the relay's rounds; a budget session's
  cost per charge over a year of daily charges; one campaign of R = 10^4 .. 10^9 GRR reports charged, CPU and
  peak RSS of a fresh process each, against dp_accounting's ``self_compose`` of the same pair.

Run: ``uv run python benchmarks/bench_privacy_accounting.py`` (writes ``results/amplification.json``);
``--accountants`` runs only the accountants' tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dpdist import amplification, local, testing
from dpdist.amplification._reference import variation_ratio_epsilon
from dpdist.local.ledger import PrivacyLedger

DELTA = 1e-8
PROTOCOLS = [("grr", 2), ("grr", 64), ("grr", 1024), ("ss", 64), ("oue", 64), ("sue", 64)]
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
SIZES = (10**5, 10**6, 10**7, 10**8)


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
        for epsilon0 in EPSILONS:
            protocol = local.make(name, epsilon=epsilon0, domain_size=d)
            for n in SIZES:
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


def exact_grr_epsilon(epsilon: float, d: int, k: int, delta: float) -> float:
    """The exact epsilon of k reports of GRR's pair (closed form: loss eps (A - B), (A, B) multinomial)."""
    from scipy import special

    e = np.exp(epsilon)
    p, q = e / (e + d - 1), 1 / (e + d - 1)
    a, b = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    ok = (a + b <= k) & ((a + b == k) | (d > 2))
    rest = np.where(a + b <= k, k - a - b, 0)
    log_mass = (special.gammaln(k + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(rest + 1)
                + a * np.log(p) + b * np.log(q) + rest * (np.log1p(-p - q) if d > 2 else 0.0))
    mass, loss = np.where(ok, np.exp(log_mass), 0.0), epsilon * (a - b)

    def delta_at(t: float) -> float:
        return float(np.sum(mass * np.maximum(-np.expm1(np.minimum(t - loss, 700.0)), 0.0)))

    low, high = 0.0, k * epsilon
    while high - low > 1e-9 * high:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if delta_at(middle) > delta else (low, middle)
    return high


def accountants_table() -> None:
    from dpdist import accounting
    from dpdist.accounting import _pld

    accounting.epsilon_at(accounting.protocol_loss(local.make("grr", epsilon=1.0, domain_size=2)).distribution, 1e-6)
    print("| d | eps | k | delta | exact | basic | zcdp | pld | pld / exact | pld CPU s | zcdp CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for d, epsilon, k, delta in [(2, 0.1, 365, 1e-8), (16, 0.1, 365, 1e-8), (2, 0.1, 52, 1e-8), (16, 1.0, 365, 1e-8),
                                 (2, 1.0, 100, 1e-6), (1024, 1.0, 365, 1e-8), (3, 4.0, 30, 1e-8)]:
        daily = accounting.protocol_loss(local.make("grr", epsilon=epsilon, domain_size=d))
        year = accounting.sequential([daily] * k)
        _pld.read_epsilon.cache_clear()
        _pld._plan.cache_clear()
        pld_cpu = cpu(lambda: accounting.state(year, delta, "pld"))
        zcdp_cpu = cpu(lambda: accounting.state(year, delta, "zcdp"))
        values = {name: accounting.state(year, delta, name).epsilon for name in accounting.ACCOUNTANTS}
        exact = exact_grr_epsilon(epsilon, d, k, delta)
        print(f"| {d} | {epsilon:g} | {k} | {delta:g} | {exact:.4f} | {values['basic']:.4g} | {values['zcdp']:.4f} | "
              f"{values['pld']:.4f} | {values['pld'] / exact:.4f} | {pld_cpu:.3f} | {zcdp_cpu:.4f} |", flush=True)

    from dpdist.amplification import _accounting, _composition

    from dp_accounting.pld import privacy_loss_distribution

    print("\n| relay rounds: GRR eps0, d, n, rounds | dpdist's composition | CPU s | dp_accounting (h = 1e-4) | CPU s |"
          " difference | stated discretization error |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for epsilon0, d, n, rounds in [(4.0, 3, 10**5, 30), (4.0, 8, 10**6, 30), (1.0, 3, 10**4, 100), (8.0, 3, 10**5, 10)]:
        protocol = local.make("grr", epsilon=epsilon0, domain_size=d)
        classes, _ = _accounting._reductions(protocol, epsilon0, "numerical", [])
        bound = _accounting._Bound(classes, n)
        one = _composition.round_distribution(bound.curve, bound.within, bound.t_max, rounds, DELTA)
        own_cpu = cpu(lambda: one.compose(rounds, 2e-4 * DELTA).epsilon(DELTA), repeat=5)
        own = one.compose(rounds, 2e-4 * DELTA).epsilon(DELTA)
        rounded: dict[int, float] = {}
        for index, mass in zip(np.ceil(one.losses() / 1e-4).astype(int).tolist(), one.mass):
            rounded[index] = rounded.get(index, 0.0) + float(mass)

        def theirs_call():
            pld = privacy_loss_distribution.PrivacyLossDistribution.create_from_rounded_probability(
                rounded, one.infinity, 1e-4, pessimistic_estimate=True)
            return pld.self_compose(rounds).get_epsilon_for_delta(DELTA)

        theirs_cpu = cpu(theirs_call)
        theirs = theirs_call()
        print(f"| {epsilon0:g}, {d}, {n:.0e}, {rounds} | {own:.5f} | {own_cpu:.4f} | {theirs:.5f} | {theirs_cpu:.3f} | "
              f"{theirs - own:+.5f} | {rounds * 1e-4:.4f} |", flush=True)

    from dpdist.budget import BudgetSession

    for d in (2, 16):
        session = BudgetSession(epsilon=40.0, delta=1e-8)
        grr = local.make("grr", epsilon=0.1, domain_size=d)
        seconds = cpu(lambda: [session.campaign(grr) for _ in range(365)])
        print(f"\nBudgetSession (tightest), 365 daily GRR charges, d = {d}: {seconds:.1f} CPU s in all "
              f"({seconds / 365 * 1e3:.0f} ms per charge), spent {session.spent.epsilon:.4f} by {session.spent.accountant}")


#: one campaign of GRR (epsilon 0.1, d 16) charged in a fresh process: CPU s and peak RSS (MB) of the charge alone
_CAMPAIGN = """
import resource, sys, time
from dpdist import local
from dpdist.budget import BudgetSession
reports, peer = int(float(sys.argv[1])), sys.argv[2] == "dp_accounting"
grr = local.make("grr", epsilon=0.1, domain_size=16)
if peer:
    import math
    from dp_accounting.pld import privacy_loss_distribution as pld
    e = math.exp(0.1); p, q = e / (e + 15), 1 / (e + 15)
    one = pld.PrivacyLossDistribution.create_from_rounded_probability({1: p, 0: 14 * q, -1: q}, 0.0, 0.1)
before, start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time()
if peer:
    epsilon = one.self_compose(reports).get_epsilon_for_delta(1e-8)
else:
    session = BudgetSession(1e12, 1e-8)
    session.campaign(grr, reports=reports)
    epsilon = session.spent.epsilon
print(epsilon, time.process_time() - start, before / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def campaign_scale_table() -> None:
    """A campaign of R GRR reports charged at delta 1e-8, each in a fresh process (peak RSS its own), against
    dp_accounting's self-composition of the same pair on its own lattice (step 0.1: no rounding)."""
    print("\n| R | dpdist epsilon | CPU s | peak RSS MB (import) | dp_accounting epsilon | CPU s | peak RSS MB (import) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for reports in ("1e4", "1e5", "1e6", "1e9"):
        cells = []
        for who in ("dpdist", "dp_accounting"):
            try:
                done = subprocess.run([sys.executable, "-c", _CAMPAIGN, reports, who], capture_output=True, text=True,
                                      timeout=120, preexec_fn=_memory_cap)
            except subprocess.TimeoutExpired:
                cells.append("over 120 s | | ")
                continue
            if done.returncode:
                cells.append(f"failed ({done.stderr.strip().splitlines()[-1][:40]}) | | ")
                continue
            epsilon, seconds, before, peak = (float(x) for x in done.stdout.split())
            cells.append(f"{epsilon:.4f} | {seconds:.3f} | {peak:.0f} ({before:.0f})")
        print(f"| {reports} | " + " | ".join(cells) + " |", flush=True)


def _memory_cap() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a run past 4 GB fails rather than swamp the machine


def main() -> None:
    if "--accountants" in sys.argv:
        accountants_table()
        campaign_scale_table()
        return
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
