"""Small fractions of fake reports against the poisoning alarms and recovery.

Setting of the issue: GRR, eps = 1, d = 128, n = 10^5 genuine users drawn from Zipf(1), the target a rare item
(item 101, frequency 0.0018).  Attacks (fake share = m / (n + m) of all reports):

* ``maximal gain``: every fake report names the target (Cao, Jia & Gong 2021; ``testing.maximal_gain_attack``);
* ``masked``: four fifths of them name the target, one fifth is spread uniformly over the 32 rarest items, so that
  the rare items are not short of reports (what the likelihood ratio and recovery's learned share read);
* ``floor-filling``: an attacker who knows the population sends each item v other than the target with
  probability max(0, q - (1 - b) f_v (p - q) / b) (b the fake share) and the target otherwise: every item is then
  reported with probability at least q, as by some honest population, so that no test of the aggregate can see it at
  any n (Cheu, Smith & Ullman 2021); the target gains less.

Per attack and share, over ``--trials`` seeded campaigns (stream ``[attack, share index, trial, 64]``; the aggregate
drawn exactly by ``simulate``):

* the target's estimate, unbiased and projected on the simplex (what a dashboard shows);
* the alarm rate of each test of the service's diagnostics (``serve._diagnostics``, false-alarm rate 10^-6 each):
  per-item support counts, the likelihood ratio against every population (``constraint``), the top-excess test
  (``top``), and the campaign's flag (any of them);
* recovery (``recover="ldprecover"``): the fake share it learns, and the target's recovered estimate with the share
  learned, known (``fake_fraction=``, as an enrollment count gives it) and known with the target (``targets=``),
  with the sum over items of the squared error against the genuine frequencies, and the top item's (item 0)
  recovered estimate with the share known.

Clean campaigns (``--clean`` per population: the same Zipf(1), a point mass, the uniform): alarms per test, how
often the top test's p-value bound falls below 0.05 (its rate must stay below 0.05), and the simplex projection's
error sum (the noise floor recovery can reach).

Usage::

    uv run python benchmarks/bench_poisoning_detection.py              # 100 trials per cell, 200 clean (about 20 CPU-seconds)
    uv run python benchmarks/bench_poisoning_detection.py --trials 20  # quicker
    uv run python benchmarks/bench_poisoning_detection.py --protocol olh --domain 1024 --trials 10 --clean 10 \
        --shares 0.1,0.2,0.3 --attacks "maximal gain"    # another protocol and domain (results/poisoning_detection_olh_1024.json)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from dpdist import local, postprocess, testing
from dpdist.serve._diagnostics import diagnostics

DOMAIN, GENUINE, TARGET, EPSILON = 128, 100_000, 101, 1.0
SHARES = (0.005, 0.01, 0.0125, 0.015, 0.0175, 0.02)
ATTACKS = ("maximal gain", "masked", "floor-filling")


def configure(domain: int) -> None:
    """Set the domain size every function here reads (the target stays item 101)."""
    global DOMAIN
    DOMAIN = domain


def zipf() -> np.ndarray:
    weights = 1.0 / np.arange(1, DOMAIN + 1)
    return weights / weights.sum()


def floor_filling(protocol, share: float) -> np.ndarray:
    """The fake reports' law that keeps every item at its floor q (module docstring), from the population's law."""
    p, q = protocol.support_probabilities()
    law = np.maximum(0.0, q - (1 - share) * zipf() * (p - q) / share)
    law[TARGET] = 0.0
    law[TARGET] = 1.0 - law.sum()
    return law


def campaign(protocol, share: float, attack: str, rng: np.random.Generator):
    """The genuine frequencies, the poisoned aggregate and the fake share."""
    values = rng.choice(DOMAIN, GENUINE, p=zipf())
    aggregate = protocol.simulate(values, rng=rng)
    fakes = round(share * GENUINE / (1 - share))
    dtype = protocol.report_format.dtype
    if attack == "floor-filling":
        aggregate.add(rng.choice(DOMAIN, fakes, p=floor_filling(protocol, share)).astype(dtype))
    else:
        spread = fakes // 5 if attack == "masked" else 0
        aggregate.add(testing.maximal_gain_attack(protocol, fakes - spread, [TARGET], rng=rng))
        if spread:  # the masked attack's spread reports (GRR's report is the item itself)
            aggregate.add(rng.choice(np.argsort(zipf())[: DOMAIN // 4], spread).astype(dtype))
    return np.bincount(values, minlength=DOMAIN) / GENUINE, aggregate, fakes / aggregate.n


def trial(protocol, share: float, attack: str, rng: np.random.Generator) -> dict:
    genuine, aggregate, fraction = campaign(protocol, share, attack, rng)
    plain = protocol.estimate(aggregate).frequencies
    projected = postprocess.project_simplex(plain)
    document = diagnostics(protocol, aggregate)
    learned = protocol.estimate(aggregate, recover="ldprecover")
    known = protocol.estimate(aggregate, recover="ldprecover", fake_fraction=fraction)
    told = protocol.estimate(aggregate, recover="ldprecover", fake_fraction=fraction, targets=[TARGET])
    doubled = protocol.estimate(aggregate, recover="ldprecover", fake_fraction=min(2 * fraction, 0.49), targets=[TARGET])

    def error(frequencies):
        return float(((frequencies - genuine) ** 2).sum())

    return {
        "unbiased": float(plain[TARGET]), "projected": float(projected[TARGET]),
        "counts": float(document["count_above"] + document["count_below"] > 0),
        "ratio": float(document["constraint"]["flagged"]), "top": float(document["top"]["flagged"]),
        "any": float(document["flagged"]), "top_log10_p": float(np.log10(max(document["top"].get("p_value", 1.0), 1e-300))),
        "learned_share": float(learned.details["fake_fraction"]),
        "learned": float(learned.frequencies[TARGET]), "known": float(known.frequencies[TARGET]),
        "known_targets": float(told.frequencies[TARGET]), "doubled_targets": float(doubled.frequencies[TARGET]),
        "top_item_known": float(known.frequencies[0]), "top_item_genuine": float(genuine[0]),
        "error_projected": error(projected), "error_learned": error(learned.frequencies),
        "error_known": error(known.frequencies), "error_known_targets": error(told.frequencies),
        "error_doubled_targets": error(doubled.frequencies),
    }


def clean(protocol, population: str, runs: int) -> dict:
    weights = {"zipf(1)": zipf(), "point mass": np.eye(DOMAIN)[0], "uniform": np.full(DOMAIN, 1.0 / DOMAIN)}[population]
    rows = []
    for index in range(runs):
        rng = np.random.default_rng([len(ATTACKS) + 1, ("zipf(1)", "point mass", "uniform").index(population), index, 64])
        values = rng.choice(DOMAIN, GENUINE, p=weights)
        aggregate = protocol.simulate(values, rng=rng)
        document = diagnostics(protocol, aggregate)
        projected = postprocess.project_simplex(protocol.estimate(aggregate).frequencies)
        error = float(((projected - np.bincount(values, minlength=DOMAIN) / GENUINE) ** 2).sum())
        rows.append((document["count_above"] + document["count_below"] > 0, document["constraint"]["flagged"],
                     document["top"]["flagged"], document["flagged"], document["top"].get("p_value", 1.0) < 0.05,
                     document["top"].get("p_value", 1.0),
                     protocol.estimate(aggregate, recover="ldprecover").details["fake_fraction"] > 0, error))
    table = np.array(rows, dtype=np.float64)
    return {"population": population, "runs": runs, "counts": int(table[:, 0].sum()), "ratio": int(table[:, 1].sum()),
            "top": int(table[:, 2].sum()), "any": int(table[:, 3].sum()), "top_below_0.05": int(table[:, 4].sum()),
            "top_smallest_p": float(table[:, 5].min()), "learned_share_positive": int(table[:, 6].sum()),
            "error_projected": float(table[:, 7].mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--clean", type=int, default=200)
    parser.add_argument("--protocol", default="grr", help="grr, olh, oue, ... (default grr)")
    parser.add_argument("--domain", type=int, default=DOMAIN, help="d (default 128)")
    parser.add_argument("--shares", default=",".join(str(share) for share in SHARES), help="fake shares, comma-separated")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="attacks, comma-separated")
    parser.add_argument("--out", default=None, help="default results/poisoning_detection[_<protocol>_<d>].json")
    args = parser.parse_args()
    configure(args.domain)
    default = args.protocol == "grr" and args.domain == 128
    out = args.out or str(Path(__file__).parent / "results" / (
        "poisoning_detection.json" if default else f"poisoning_detection_{args.protocol}_{args.domain}.json"))
    protocol = local.make(args.protocol, epsilon=EPSILON, domain_size=DOMAIN)
    shares = [float(share) for share in args.shares.split(",")]
    rows = []
    for attack in args.attacks.split(","):
        attack_index = ATTACKS.index(attack)
        for share in shares:
            share_index = SHARES.index(share) if share in SHARES else len(SHARES) + shares.index(share)
            results = [trial(protocol, share, attack, np.random.default_rng([attack_index, share_index, index, 64]))
                       for index in range(args.trials)]
            mean = {key: float(np.mean([row[key] for row in results])) for key in results[0]}
            rows.append({"attack": attack, "share": share, "trials": args.trials, **mean})
    print(f"{args.protocol}, d = {DOMAIN}, eps = {EPSILON:g}, n = {GENUINE:,}")
    print(f"| attack | fakes | target (truth {zipf()[TARGET]:.4f}): unbiased | projected | alarm rate: support counts | "
          "likelihood ratio | top excess | any |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['attack']} | {row['share']:.2%} | {row['unbiased']:.3f} | {row['projected']:.3f} | "
              f"{row['counts']:.2f} | {row['ratio']:.2f} | {row['top']:.2f} | {row['any']:.2f} |")
    print("\n| attack | fakes | share learned | recovered target: share learned | share known | share and target "
          "known | share overstated 2x, target known | top item (genuine): share known | error sum: projected | learned | "
          "known | known + target | 2x + target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['attack']} | {row['share']:.2%} | {row['learned_share']:.4f} | {row['learned']:.3f} | "
              f"{row['known']:.3f} | {row['known_targets']:.3f} | {row['doubled_targets']:.3f} | "
              f"{row['top_item_known']:.3f} ({row['top_item_genuine']:.3f}) | "
              f"{row['error_projected']:.3f} | {row['error_learned']:.3f} | {row['error_known']:.3f} | "
              f"{row['error_known_targets']:.3f} | {row['error_doubled_targets']:.3f} |")
    print("\n| clean population | campaigns | alarms: counts | likelihood ratio | top | any | top p < 0.05 | "
          "smallest top p | share learned > 0 | error sum, projected |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cleans = [clean(protocol, population, args.clean) for population in ("zipf(1)", "point mass", "uniform")]
    for row in cleans:
        print(f"| {row['population']} | {row['runs']} | {row['counts']} | {row['ratio']} | {row['top']} | {row['any']} | "
              f"{row['top_below_0.05']} | {row['top_smallest_p']:.2g} | {row['learned_share_positive']} | "
              f"{row['error_projected']:.3f} |")
    Path(out).write_text(json.dumps({"protocol": args.protocol, "domain": DOMAIN, "attacks": rows, "clean": cleans},
                                    indent=1) + "\n")


if __name__ == "__main__":
    main()
