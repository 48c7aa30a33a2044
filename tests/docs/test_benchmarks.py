"""docs/reference/benchmarks/: the tables that a benchmark's saved results make are on their page as the results make them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "docs" / "reference" / "benchmarks"


def _bench(name: str):
    """A benchmark script, loaded from its file (benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_java_clients_table_is_its_saved_results_and_covers_every_case():
    """"Java client beside the JavaScript client": the rows of benchmarks/results/java_client.json, every config of
    bench_java_client.py measured, and the smallest ratio the page states."""
    bench = _bench("bench_java_client")
    results = json.loads((ROOT / "benchmarks" / "results" / "java_client.json").read_text())
    assert [row["config"] for row in results["rows"]] == bench.CASES  # run with the cases the script holds now
    table = "\n".join(bench.page_table(results))
    page = (BENCHMARKS / "clients.md").read_text()
    assert table in page
    assert f"the smallest ratio is {results['smallest_ratio']:.2f}" in page


def test_the_ohttp_gateways_table_is_its_saved_results():
    """"The Oblivious HTTP gateway against a direct submission": the lines of benchmarks/results/ohttp_gateway.json,
    each ratio the ratio of its medians."""
    bench = _bench("bench_ohttp_gateway")
    results = json.loads((ROOT / "benchmarks" / "results" / "ohttp_gateway.json").read_text())
    for line in results["lines"]:
        assert abs(line["ratio"] - line["gateway_cpu_us_per_report"] / line["direct_cpu_us_per_report"]) < 1e-9
    assert "\n".join(bench.page_table(results)) in (BENCHMARKS / "anonymity.md").read_text()


def test_the_decile_peers_tables_are_its_saved_results():
    """"Deciles beside OpenDP, diffprivlib and python-dp": the compact tables and the counts of
    benchmarks/results/decile_peers.json are on the explanation page, the full tables on the benchmarks page; every data
    set at both bounds at n = 10^3, 10^4 and 10^5 with at least 10 runs (the sets tuned on apart from those judged
    only), the nine the rules were built on at 10^6 too, every peer in every row: measured, or (diffprivlib's sampler,
    whose weights underflow on heaped data) its failure on every run named in the row."""
    bench = _bench("bench_decile_peers")
    rows = json.loads((ROOT / "benchmarks" / "results" / "decile_peers.json").read_text())
    built = bench.TUNED[:9]
    assert set(bench.TUNED) | set(bench.JUDGED) == set(bench.DATA) and not set(bench.TUNED) & set(bench.JUDGED)
    assert {(row["data"], row["tight"], row["n"]) for row in rows} == {
        (name, tight, n) for name in bench.DATA for tight in (True, False) for n in (10**3, 10**4, 10**5)} | {
        (name, tight, 10**6) for name in built for tight in (True, False)}
    assert all(row["runs"] >= bench.MIN_RUNS for row in rows if row["n"] <= 10**5)
    assert all({"OpenDP", "diffprivlib", "python-dp (4,16)"} <= set(row["methods"]) | set(row.get("failed", {}))
               for row in rows)
    explanation = (ROOT / "docs" / "explanation" / "deciles-beside-peers.md").read_text()
    assert bench.compact(rows) in explanation and bench.headline(rows) in explanation
    assert bench.markdown(rows) in (BENCHMARKS / "decile-peers.md").read_text()


def test_the_many_keys_tables_are_its_saved_results_and_meet_their_targets():
    """"Persons who hold many keys beside PipelineDP": the block of benchmarks/results/many_keys.json is on the page,
    every table at every m measured beside PipelineDP's four strategies, and the targets the page's section states:
    dpdist's default shows at least 1.3x the keys of PipelineDP's best strategy at m = 10, 50, 100 on the Zipf table
    (no fewer at m = 1, within the runs' standard errors), and its per-key counts and sums have a mean absolute error
    at most PipelineDP's Gaussian's, within the runs' standard errors (the same analytic calibration: equal in law)."""
    bench = _bench("bench_many_keys")
    results = json.loads((ROOT / "benchmarks" / "results" / "many_keys.json").read_text())
    assert "\n".join(bench.page_lines(results)) in (BENCHMARKS / "central.md").read_text()
    zipf = results["tables"]["zipf"]
    for m in bench.GROUPS:
        row = zipf["selection"][str(m)]
        assert all(f"pipeline_dp {strategy}" in row for strategy in bench.THEIRS
                   if m in bench.WEIGHTED_GROUPS or strategy != "WEIGHTED_GAUSSIAN_THRESHOLDING")
        if m > 1:
            assert row["default_over_best_peer"] >= 1.3
        else:
            best = max((value for name, value in row.items() if name.startswith("pipeline_dp")),
                       key=lambda value: value["keys"])
            assert row["default"]["keys"] >= best["keys"] - 2 * (row["default"]["keys_se"] + best["keys_se"])
    for name in ("persons", "rows", "sum"):
        ours, theirs = zipf["statistics"][name]["dpdist"], zipf["statistics"][name]["pipeline_dp"]
        assert ours["mae"] <= theirs["mae"] + 2 * (ours["mae_se"] + theirs["mae_se"])
