"""Recovery from the maximal gain attack: the targets' error and the clean campaigns' MSE.

Setting: Zipf(1.1) over ``d`` items, ``n`` genuine users, eps = 1, and under attack ``m`` fake users
(``fake share`` = m / (n + m), default 5%) running :func:`dpdist.testing.maximal_gain_attack` on ``r``
targets drawn uniformly from the domain (as Cao et al. do).  Per protocol and ``r``, over ``--trials`` seeded
trials (stream ``[protocol id, r, trial, 50]``):

* targets' error: the sum over the targets of |estimate - genuine frequency|, for the unprotected
  unbiased estimate ("plain"), its simplex projection ("simplex", what post-processing alone does),
  ``recover="ldprecover"`` with the fake fraction learned ("learned") and given ("known");
* clean MSE: the MSE per item of a campaign with no fake user, plain, simplex and learned recovery
  (its loss is against the simplex projection, the post-processing it ends with).

Usage::

    uv run python benchmarks/bench_poisoning_recovery.py               # d = 128 and 1024, 10 trials (about 4 CPU-minutes)
    uv run python benchmarks/bench_poisoning_recovery.py --trials 5    # quicker
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from dpdist import local, postprocess, testing

PROTOCOLS = ("grr", "oue", "olh")


def zipf(d: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, d + 1) ** 1.1
    return weights / weights.sum()


def trial(name: str, d: int, n: int, share: float, r: int, index: int) -> dict:
    rng = np.random.default_rng([PROTOCOLS.index(name), r, index, 50])
    protocol = local.make(name, epsilon=1.0, domain_size=d)
    values = rng.choice(d, n, p=zipf(d))
    genuine = np.bincount(values, minlength=d) / n
    clean = protocol.aggregator().add(protocol.privatize(values, rng=rng))
    targets = rng.choice(d, r, replace=False)
    fakes = round(share * n / (1 - share))
    poisoned = protocol.aggregator().add(protocol.privatize(values, rng=rng))
    poisoned.add(testing.maximal_gain_attack(protocol, fakes, targets, rng=rng))

    def target_error(frequencies):
        return float(np.abs(frequencies[targets] - genuine[targets]).sum())

    def mse(frequencies):
        return float(np.mean((frequencies - genuine) ** 2))

    plain = protocol.estimate(poisoned).frequencies
    learned = protocol.estimate(poisoned, recover="ldprecover")
    known = protocol.estimate(poisoned, recover="ldprecover", fake_fraction=fakes / poisoned.n)
    clean_plain = protocol.estimate(clean).frequencies
    clean_recovered = protocol.estimate(clean, recover="ldprecover")
    return {
        "plain": target_error(plain), "simplex": target_error(postprocess.project_simplex(plain)),
        "learned": target_error(learned.frequencies), "known": target_error(known.frequencies),
        "beta": fakes / poisoned.n, "beta_learned": learned.details["fake_fraction"],
        "mse_attacked_plain": mse(plain), "mse_attacked_learned": mse(learned.frequencies),
        "mse_attacked_known": mse(known.frequencies),
        "clean_plain": mse(clean_plain), "clean_simplex": mse(postprocess.project_simplex(clean_plain)),
        "clean_learned": mse(clean_recovered.frequencies),
        "clean_false_alarm": float(clean_recovered.details["fake_fraction"] > 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="128,1024")
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "poisoning_recovery.json"))
    args = parser.parse_args()
    rows = []
    print("| protocol | d | r | targets' error: plain | simplex | learned | known | learned / plain | "
          "learned / simplex | beta learned (true) | clean MSE: plain | simplex | learned | loss vs simplex |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in (int(value) for value in args.domains.split(",")):
        for name in PROTOCOLS:
            for r in (1, 5):
                results = [trial(name, d, args.users, args.share, r, index) for index in range(args.trials)]
                mean = {key: float(np.mean([row[key] for row in results])) for key in results[0]}
                rows.append({"protocol": name, "d": d, "r": r, "n": args.users, "share": args.share,
                             "trials": args.trials, **mean})
                print(f"| {name} | {d} | {r} | {mean['plain']:.4f} | {mean['simplex']:.4f} | {mean['learned']:.4f} | "
                      f"{mean['known']:.4f} | {mean['learned'] / mean['plain']:.3f} | "
                      f"{mean['learned'] / mean['simplex']:.3f} | {mean['beta_learned']:.4f} ({mean['beta']:.4f}) | "
                      f"{mean['clean_plain']:.3e} | {mean['clean_simplex']:.3e} | {mean['clean_learned']:.3e} | "
                      f"{mean['clean_learned'] / mean['clean_simplex'] - 1:+.1%} |", flush=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
