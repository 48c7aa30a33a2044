"""Frequency oracles at the optimum in variance and in bits: every candidate of ``auto`` against subset selection
with the integer k of least variance (the L2 optimum among the pure oracles), by closed forms.

For each (d, epsilon) of the grid: every candidate's mean variance over items at uniform frequencies (what
``auto`` ranks: the exact mean for any data; FLH with its bias bound at 10^6 reports), its ratio to the optimum
``ss.subset_variance(eps, d, d, optimal_subset_size(eps, d))``, its report bits (dpdist's encoding), and the
protocol ``auto`` chooses.  Nothing is sampled: the table takes seconds.

Usage::

    uv run python benchmarks/bench_frequency_optimum.py --markdown   # the tables of
    # docs/reference/benchmarks/frequency-optimum.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dpdist.local.frequency.auto import EXPECTED_REPORTS, choose_protocol, compare_protocols
from dpdist.local.frequency.ss import optimal_subset_size, subset_variance

DOMAINS = (16, 128, 1024, 16384)
EPSILONS = (0.5, 1.0, 2.0, 4.0)
OUT = Path(__file__).parent / "results" / "frequency_optimum.json"


def setting_rows(epsilon: float, d: int) -> list[dict]:
    """One row per candidate at ``(epsilon, d)``: variance ratio to the optimum and report bits."""
    optimum = subset_variance(epsilon, d, d, optimal_subset_size(epsilon, d)) / EXPECTED_REPORTS
    chosen = choose_protocol(epsilon=epsilon, domain_size=d, max_report_bits=None)
    return [{"domain_size": d, "epsilon": epsilon, "protocol": row["protocol"],
             "variance_ratio": row["variance"] / optimum, "report_bits": row["report_bits"],
             "chosen": row["protocol"] == chosen}
            for row in compare_protocols(epsilon=epsilon, domain_size=d, max_report_bits=None) if "variance" in row]


def markdown(rows: list[dict]) -> str:
    """Per setting, each oracle's ratio and bits (the chosen one in bold), and the fewest bits within 1.01x (every oracle
    sending them)."""
    names = list(dict.fromkeys(row["protocol"] for row in rows))
    settings = list(dict.fromkeys((row["domain_size"], row["epsilon"]) for row in rows))
    lines = ["| d | ε | " + " | ".join(f"`{name}`" for name in names) + " | fewest bits within 1.01x |",
             "|---|---|" + "---|" * (len(names) + 1)]
    for d, epsilon in settings:
        here = {row["protocol"]: row for row in rows if (row["domain_size"], row["epsilon"]) == (d, epsilon)}
        cells = []
        for name in names:
            row = here.get(name)
            text = "-" if row is None else f"{row['variance_ratio']:.4f} / {row['report_bits']}"
            cells.append(f"**{text}**" if row is not None and row["chosen"] else text)
        within = [row for row in here.values() if row["variance_ratio"] <= 1.01]
        fewest = min(row["report_bits"] for row in within)
        tied = ", ".join(f"`{row['protocol']}`" for row in within if row["report_bits"] == fewest)
        lines.append(f"| {d:,} | {epsilon:g} | " + " | ".join(cells) + f" | {tied}, {fewest} bits |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default=",".join(map(str, DOMAINS)), help="comma-separated domain sizes")
    parser.add_argument("--epsilons", default=",".join(map(str, EPSILONS)), help="comma-separated epsilons")
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON rows written")
    parser.add_argument("--markdown", action="store_true", help="print the docs table")
    args = parser.parse_args(argv)
    rows = [row for d in map(int, args.domains.split(",")) for epsilon in map(float, args.epsilons.split(","))
            for row in setting_rows(epsilon, d)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows}, indent=1))
    print(markdown(rows) if args.markdown else json.dumps({"rows": len(rows), "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
