"""Pages are products of the code (issue 47 item 5): each reproduction page's staleness sample still holds.

Every page of ``docs/reproductions/`` carries a generated block (``dpdist reproduce NAME --quick --page ...``,
:mod:`dpdist.experiments._pages`) with a fixed, small sample of its run's cells and their metric values.
This test recomputes those cells at the current commit (the suite runs with the pinned numerics of
``tests/conftest.py``, so a cell gives the run's numbers to the last bits) and fails with
"page stale: regenerate NAME" when a value moved by more than the page's stated relative tolerance, or when
the page was judged under another version of the verdict rule.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dpdist.experiments import RULE_VERSION, execute_cell, get_spec
from dpdist.experiments._pages import read_sample

pytestmark = pytest.mark.slow  # a few seconds of cells per page

PAGES = Path(__file__).resolve().parents[2] / "docs" / "reproductions"
REPRODUCTIONS = ("wavelet", "sw-ems", "wiener", "central", "cp")


def stale_reasons(name: str, page: Path) -> list[str]:
    """Why ``page`` no longer describes the code (empty: it does)."""
    sample = read_sample(page)
    if sample is None:
        return ["no generated block with a staleness sample"]
    reasons = []
    if sample["rule_version"] != RULE_VERSION:
        reasons.append(f"judged under verdict rule version {sample['rule_version']}, the code's is {RULE_VERSION}")
    spec = get_spec(name).with_options(quick=sample["run"] == "quick", repeats=sample["repeats"], seed=sample["seed"])
    by_key: dict[tuple, list] = {}
    for cell in spec.cells():
        by_key.setdefault((cell.dataset.key, cell.method.label, cell.repeat), []).append(cell)
    for entry in sample["cells"]:
        matches = [c for c in by_key.get((entry["dataset"], entry["method"], entry["repeat"]), [])
                   if c.param_dict == entry["params"]]
        if len(matches) != 1:
            reasons.append(f"the spec has no cell {entry['dataset']} / {entry['method']} / {entry['params']} / "
                           f"repeat {entry['repeat']}")
            continue
        values = execute_cell(matches[0], spec.seed, spec.metrics)["metrics"]
        for metric, expected in entry["metrics"].items():
            got = values.get(metric)
            if got is None or not math.isclose(got, expected, rel_tol=sample["relative_tolerance"], abs_tol=1e-300):
                reasons.append(f"{entry['method']} on {entry['dataset']} {entry['params']} repeat {entry['repeat']}: "
                               f"{metric} was {expected!r} on the page, is {got!r} now")
    return reasons


@pytest.mark.parametrize("name", REPRODUCTIONS)
def test_every_reproduction_page_matches_the_code(name):
    reasons = stale_reasons(name, PAGES / f"{name}.md")
    assert not reasons, f"page stale: regenerate {name} (" + "; ".join(reasons[:5]) + ")"


def test_a_page_whose_numbers_moved_is_reported_stale(tmp_path):
    # the mechanism itself, on the toy spec: a generated page holds; one value moved by 1e-5 (relative) is stale
    import json

    from dpdist.experiments import reproduce
    from dpdist.experiments._pages import write_page

    spec = get_spec("toy")
    out, page = tmp_path / "out", tmp_path / "toy.md"
    page.write_text("# Reproduction: toy\n\nprose kept\n")
    result = reproduce(spec, out, progress=False)
    write_page(page, result, result.claims, out, "dpdist reproduce toy")
    assert "prose kept" in page.read_text()
    assert stale_reasons("toy", page) == []
    sample = read_sample(page)
    assert sample is not None and sample["cells"]
    entry = sample["cells"][0]
    metric, value = next(iter(entry["metrics"].items()))
    moved = value * (1 + 1e-5)
    text = page.read_text().replace(json.dumps(value), json.dumps(moved), 1)
    page.write_text(text)
    reasons = stale_reasons("toy", page)
    assert reasons and metric in reasons[0] and "on the page" in reasons[0]
    page.write_text(text.replace(f'"rule_version": {RULE_VERSION}', '"rule_version": 1'))
    assert any("rule version 1" in reason for reason in stale_reasons("toy", page))


def test_the_page_names_every_commit_that_computed_cells_with_counts(tmp_path):
    # issue 47: a page whose cells came from two invocations at two commits names both, with their counts (from
    # the commit each cell records); cells written before cells recorded it are counted apart
    import json

    from dpdist.experiments import reproduce
    from dpdist.experiments._pages import write_page

    spec = get_spec("toy")
    out, page = tmp_path / "out", tmp_path / "toy.md"
    page.write_text("# Reproduction: toy\n")
    reproduce(spec, out, progress=False)
    cells = sorted((out / "cells").glob("*.json"))
    assert len(cells) >= 3 and all("commit" in json.loads(path.read_text()) for path in cells)
    for index, path in enumerate(cells):  # as if an earlier commit computed some and an old run others
        payload = json.loads(path.read_text())
        if index < 2:
            payload["commit"] = "aaaaaaa"
        elif index == 2:
            del payload["commit"]
        path.write_text(json.dumps(payload))
    result = reproduce(spec, out, progress=False)
    assert result.computed == 0 and result.commits["aaaaaaa"] == 2 and result.commits[None] == 1
    write_page(page, result, result.claims, out, "dpdist reproduce toy")
    header = next(line for line in page.read_text().splitlines() if line.startswith("**Generated**"))
    assert "Cells computed at commits " in header and "`aaaaaaa` (2 cells)" in header
    assert "1 cells without a recorded commit" in header
    others = len(cells) - 3
    assert f"({others} cells)" in header
