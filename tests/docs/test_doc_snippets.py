"""Every Python snippet of README.md and docs/ runs as written.

The ```python blocks of one page run in order in one namespace, as a reader
pasting them into one session would, in a fresh temporary directory.  A block
fenced as ```python no-run is shown but not run (say why beside it).  What a
page registers (a protocol, a dataset, an experiment method) is unregistered
after it, so pages cannot change the rest of the suite.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python(?P<info>[^\n]*)\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)


def snippets(page: Path) -> list[str]:
    return [m.group("code") for m in FENCE.finditer(page.read_text()) if "no-run" not in m.group("info")]


PAGES_WITH_SNIPPETS = [page for page in PAGES if snippets(page)]


def test_the_pages_have_snippets():
    assert len(PAGES_WITH_SNIPPETS) >= 5


@pytest.fixture
def restored_registries():
    from dpdist.datasets import _dataset
    from dpdist.experiments import _methods
    from dpdist.local import _registry

    saved = [(registry, dict(registry)) for registry in (_registry._REGISTRY, _dataset._REGISTRY, _methods._METHODS)]
    yield
    for registry, before in saved:
        registry.clear()
        registry.update(before)


#: pages whose snippets take 0.45-5 CPU-s (simulations and estimates of 10^4-10^6 users, audits, frames of many
#: groups): the full suite runs them, the fast loop the others through the same runner below
#: (docs/reference/benchmarks/test-suite.md); the library code of each is pinned by fast unit tests (tests/audit, tests/frame, tests/testing, ...)
SLOW_PAGES = {f"docs/{page}.md" for page in (
    "how-to/predict-accuracy", "how-to/plan-a-budget", "how-to/report-files", "how-to/audit-a-randomizer",
    "how-to/dataframes", "how-to/queries", "how-to/prove-a-protocol", "explanation/frequency-oracles", "explanation/frequency-estimators",
    "explanation/uncertainty", "explanation/accounting", "explanation/trust-ladder", "explanation/auditing",
    "explanation/multi-attribute")}


@pytest.mark.parametrize("page", [
    pytest.param(page, id=str(page.relative_to(ROOT)),
                 marks=[pytest.mark.slow] if str(page.relative_to(ROOT)) in SLOW_PAGES else [])
    for page in PAGES_WITH_SNIPPETS
])
@pytest.mark.slow  # 1.4 CPU-s: runs the pages' snippets end to end
def test_snippets_run_as_written(page, tmp_path, monkeypatch, restored_registries):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__doc_snippet__"}
    for index, code in enumerate(snippets(page)):
        try:
            exec(compile(code, f"{page.name}, snippet {index + 1}", "exec"), namespace)
        except Exception as error:  # noqa: BLE001 - the failing snippet is the finding
            pytest.fail(f"{page.relative_to(ROOT)} snippet {index + 1} fails: {type(error).__name__}: {error}\n{code}")
