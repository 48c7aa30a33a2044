"""Coverage under peeking: fixed-n intervals against confidence sequences, every protocol with a sequence.

A campaign is looked at after every batch of reports (its dashboard polls every 3 s).  For each
protocol, M independent collections grow batch by batch; at every look the fixed-n 95 % interval
or band the library prints and the 95 % confidence sequence (``dpdist.confidence_sequences``)
are read, and a collection counts as covered when the truth was inside at *every* look ("whole
path").  The binomial standard error of a coverage near 0.95 is ``sqrt(0.95 * 0.05 / M)``.

* frequency oracles: each item's interval (``FrequencyEstimate.confidence_interval``) against
  the sequence's per-item interval (the share of (item, path) pairs covered at every look), and
  the sequence's simultaneous band (all items at every look);
* pm, sr: ``MeanEstimate.confidence_interval`` against the mean's sequence;
* binning, hh, sw: the simultaneous bootstrap band of ``cdf_band`` (B = 40) against the
  sequence's band (every edge at every look), both against the population's CDF at their edges;
  and the mean's interval from each.

All through the public API: ``protocol.privatize`` then ``Aggregator.add`` per batch.  Usage::

    uv run python benchmarks/bench_sequences.py [--quick] [--only grr,sr,...]

Results: ``benchmarks/results/sequences.json`` and the table in ``docs/reference/benchmarks/coverage.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import zlib
from pathlib import Path

import numpy as np
from scipy.stats import beta as beta_law

from dpdist import local
from dpdist.confidence_sequences import confidence_sequence
from dpdist.uncertainty import cdf_band

FREQUENCIES = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.05, 0.02])
CASES = {  # name: (protocol parameters, kind, paths, batch, looks)
    "grr": ({"domain_size": 8}, "frequency", 200, 500, 20),
    "oue": ({"domain_size": 8}, "frequency", 200, 500, 20),
    "olh": ({"domain_size": 8}, "frequency", 200, 500, 20),
    "ss": ({"domain_size": 8}, "frequency", 200, 500, 20),
    "hr": ({"domain_size": 8}, "frequency", 200, 500, 20),
    "sue": ({"domain_size": 8}, "frequency", 200, 500, 20),
    "pm": ({}, "mean", 200, 500, 20),
    "sr": ({}, "mean", 200, 500, 20),
    "binning": ({"bins": 16, "oracle": "grr"}, "cdf", 100, 500, 20),
    "hh": ({"bins": 64}, "cdf", 100, 500, 20),
    "sw": ({"bins": 32}, "cdf", 60, 1000, 10),
}


def _collections(protocol, draw, paths, batch, looks, rng):
    """For each path, the aggregate after each look (generator of (path, look, aggregator))."""
    for path in range(paths):
        aggregator = protocol.aggregator()
        for look in range(looks):
            aggregator.add(protocol.privatize(draw(batch, rng), rng=rng))
            yield path, look, aggregator


def _frequency(protocol, paths, batch, looks, rng) -> dict:
    fixed = np.ones((paths, FREQUENCIES.size), bool)
    items = np.ones((paths, FREQUENCIES.size), bool)
    band = np.ones(paths, bool)
    ratio = []
    for path, look, aggregator in _collections(protocol, lambda size, r: r.choice(8, size, p=FREQUENCIES),
                                               paths, batch, looks, rng):
        interval = protocol.estimate(aggregator).confidence_interval(0.95)
        fixed[path] &= (interval.low <= FREQUENCIES) & (FREQUENCIES <= interval.high)
        sequence = confidence_sequence(protocol, aggregator)
        items[path] &= (sequence.low <= FREQUENCIES) & (FREQUENCIES <= sequence.high)
        band[path] &= bool(np.all((sequence.simultaneous_low <= FREQUENCIES)
                                  & (FREQUENCIES <= sequence.simultaneous_high)))
        if look == looks - 1:
            ratio.append(np.mean((sequence.high - sequence.low) / (interval.high - interval.low)))
    return {"fixed": float(fixed.mean()), "sequence": float(items.mean()), "band": float(band.mean()),
            "width_ratio": float(np.mean(ratio))}


def _mean(protocol, paths, batch, looks, rng) -> dict:
    truth = 2 / 7
    fixed, sequence, ratio = np.ones(paths, bool), np.ones(paths, bool), []
    for path, look, aggregator in _collections(protocol, lambda size, r: r.beta(2, 5, size), paths, batch, looks, rng):
        interval = protocol.estimate(aggregator).confidence_interval(0.95)
        fixed[path] &= interval.low <= truth <= interval.high
        result = confidence_sequence(protocol, aggregator)
        sequence[path] &= result.low <= truth <= result.high
        if look == looks - 1:
            ratio.append((result.high - result.low) / (interval.high - interval.low))
    return {"fixed": float(fixed.mean()), "sequence": float(sequence.mean()), "width_ratio": float(np.mean(ratio))}


def _cdf(protocol, paths, batch, looks, rng) -> dict:
    law = beta_law(5, 2)
    fixed, sequence = np.ones(paths, bool), np.ones(paths, bool)
    fixed_mean, sequence_mean, ratio = np.ones(paths, bool), np.ones(paths, bool), []
    for path, look, aggregator in _collections(protocol, lambda size, r: r.beta(5, 2, size), paths, batch, looks, rng):
        band = cdf_band(protocol, aggregator, replicates=40, rng=rng).band
        truth = law.cdf(band.edges)
        fixed[path] &= bool(np.all((band.simultaneous_lower <= truth + 1e-12) & (truth <= band.simultaneous_upper + 1e-12)))
        low, high = band.mean_interval()
        fixed_mean[path] &= low <= 5 / 7 <= high
        result = confidence_sequence(protocol, aggregator, cells=16)
        truth = law.cdf(result.edges)
        sequence[path] &= bool(np.all((result.low <= truth + 1e-12) & (truth <= result.high + 1e-12)))
        sequence_mean[path] &= result.mean_low <= 5 / 7 <= result.mean_high
        if look == looks - 1:
            ratio.append(result.width / np.max(band.simultaneous_upper - band.simultaneous_lower))
    return {"fixed": float(fixed.mean()), "sequence": float(sequence.mean()), "fixed_mean": float(fixed_mean.mean()),
            "sequence_mean": float(sequence_mean.mean()), "width_ratio": float(np.mean(ratio))}


RUNNERS = {"frequency": _frequency, "mean": _mean, "cdf": _cdf}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fifth of the paths (a smoke run)")
    parser.add_argument("--only", default=None, help="comma-separated protocol names")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "sequences.json"))
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(CASES)
    rows = []
    out = Path(args.out)
    if out.exists():
        rows = [row for row in json.loads(out.read_text()) if row["protocol"] not in names]
    for name in names:
        params, kind, paths, batch, looks = CASES[name]
        paths = max(paths // 5, 10) if args.quick else paths
        protocol = local.make(name, epsilon=1.0, **params)
        started = time.perf_counter()
        result = RUNNERS[kind](protocol, paths, batch, looks, np.random.default_rng(zlib.crc32(name.encode())))
        row = {"protocol": name, "kind": kind, "epsilon": 1.0, "paths": paths, "batch": batch, "looks": looks,
               "se": math.sqrt(0.95 * 0.05 / paths), "seconds": round(time.perf_counter() - started, 1), **result}
        rows.append(row)
        print(json.dumps(row), flush=True)
        out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
