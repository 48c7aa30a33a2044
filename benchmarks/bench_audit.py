"""How tight dpdist.audit's certified lower bound is against the exact epsilon, by samples per input.

For each dpdist protocol with a small finite channel (epsilon 1, small domains), the black-box audit
(alpha = 1e-3, seed 0, sequential stages after a pilot of 2000) certifies a lower bound; the white box
gives the exact epsilon of the channel.  The table is the ratio certified / exact and the seconds of
one audit.  Usage::

    uv run python benchmarks/bench_audit.py [--samples 10000 100000] [--markdown]

Writes benchmarks/results/audit_tightness.json.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

from dpdist import audit, local

CASES = [("grr", {"domain_size": 4}), ("oue", {"domain_size": 8}), ("sue", {"domain_size": 8}), ("ss", {"domain_size": 8}),
         ("hr", {"domain_size": 8}), ("olh", {"domain_size": 8}), ("sw", {}), ("pm", {}), ("sr", {}), ("threshold", {})]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = []
    for name, params in CASES:
        protocol = local.make(name, epsilon=1.0, **params)
        for samples in args.samples:
            started = time.process_time()
            result = audit.audit(protocol, samples=samples, rng=0)
            rows.append({"protocol": name, "params": params, "samples_per_input": samples,
                         "certified": result.certified_epsilon, "exact": result.channel_epsilon,
                         "verdict": result.verdict, "cpu_seconds": time.process_time() - started})
            print(json.dumps(rows[-1]), flush=True)
    out = pathlib.Path(__file__).parent / "results" / "audit_tightness.json"
    out.write_text(json.dumps(rows, indent=1))
    if args.markdown:
        print("| protocol | samples per input | certified | exact | ratio | CPU s |\n|---|---|---|---|---|---|")
        for r in rows:
            exact = r["exact"] if r["exact"] is not None else 1.0
            print(f"| {r['protocol']} | {r['samples_per_input']:,} | {r['certified']:.3f} | "
                  f"{'-' if r['exact'] is None else f'{exact:.3f}'} | {r['certified'] / exact:.2f} | {r['cpu_seconds']:.1f} |")


if __name__ == "__main__":
    main()
