"""What the README promises a newcomer is there and true: the install lines, the two commands, the papers and
pages it points to, an honest demo time, and a length read in two minutes.  The contributors' figures (the fast
loop's CPU time) are on docs/how-to/contribute.md."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _readme() -> str:
    return (ROOT / "README.md").read_text()


def _install_section() -> str:
    return _readme().split("## Install as a library", 1)[1].split("\n## ", 1)[0]


def test_the_readme_says_how_to_install_the_library_with_an_extra_that_exists():
    """dpdist is not on PyPI: the README says so and installs from a clone, or from the wheel built there (its file
    name is the version's); every extra it names is one pyproject.toml declares."""
    readme, install = _readme(), _install_section()
    assert 'pip install "dpdist[serve]"' not in readme and "not on PyPI" in install
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("version")
    if version is None:  # hatchling's dynamic version: __version__
        version = re.search(r'__version__ = "([^"]+)"', (ROOT / "src" / "dpdist" / "__init__.py").read_text()).group(1)
    assert 'pip install ".[serve]"' in install and f'pip install "dist/dpdist-{version}-py3-none-any.whl[serve]"' in install
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = re.findall(r"`(\w+)`\s+\(", install)
    assert {"serve", "relay", "spark"} <= set(named)
    for extra in named:
        assert extra in extras, extra


def test_the_readme_gives_the_main_job_and_the_tests_as_commands():
    """CI (.ci/run) and the checks run exactly these lines."""
    lines = [line.split("#", 1)[0].strip() for line in _readme().splitlines()]
    assert "uv run dpdist demo" in lines and "uv run pytest" in lines


def test_design_lists_the_five_papers_by_author_and_year_with_links():
    """The README points to docs/explanation/design.md for the five source papers, which lists them."""
    design = (ROOT / "docs" / "explanation" / "design.md").read_text()
    section = design.split("## Source papers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| paper 00")]
    assert [row.split("|")[1].strip() for row in rows] == [f"paper 00{i}" for i in range(5)]
    for row in rows:
        assert re.search(r"\((19|20)\d\d\)", row), row  # the year
        assert re.search(r"\]\(https://[^)]+\)", row), row  # a link
    for surname in ("Zhao", "Fang", "Tao", "Li", "Xiong"):
        assert any(f". {surname}" in row for row in rows), surname
    assert "docs/explanation/design.md#source-papers" in _readme()


def test_the_demo_and_fast_loop_times_are_the_measured_cpu_times():
    """The demo's time beside its command is the CPU time measured on a fresh clone and after (74 s, then 60-67 s:
    docs/reference/benchmarks/test-suite.md); the contributing page states those measurements."""
    demo = next(line for line in _readme().splitlines() if line.startswith("uv run dpdist demo "))
    assert "60-75 s of CPU" in demo
    contributing = " ".join((ROOT / "docs" / "how-to" / "contribute.md").read_text().split())
    assert "74 s of CPU on a fresh clone" in contributing and "60-67 s after" in contributing
    assert "fresh clone: 74 s of CPU" in (ROOT / "docs" / "reference" / "benchmarks" / "test-suite.md").read_text()


def test_the_fast_loops_figures_are_the_saved_run_of_its_script():
    """The contributing page and the test-suite page quote benchmarks/bench_fast_loop.py's saved run: its date and
    every run's CPU-seconds by the suite's counter."""
    saved = json.loads((ROOT / "benchmarks" / "results" / "fast_loop.json").read_text())
    contributing = " ".join((ROOT / "docs" / "how-to" / "contribute.md").read_text().split())
    suite = " ".join((ROOT / "docs" / "reference" / "benchmarks" / "test-suite.md").read_text().split())
    assert {run["inside_temporary_directory"] for run in saved["runs"]} == {True, False}
    for page in (contributing, suite):
        assert "benchmarks/bench_fast_loop.py" in page and saved["date"][:10] in page
        for run in saved["runs"]:
            assert f"{run['cpu_s']:.1f} CPU-s" in page, run


def test_the_readme_points_to_the_tutorials_the_relay_and_records_of_several_attributes():
    readme = _readme()
    flat = " ".join(readme.split())
    assert "`relay` (" in _install_section() and "dpdist issuer" in _install_section()
    assert "(docs/tutorials/index.md)" in readme.split("## Where next", 1)[1]
    for words in ("`dpdist relay`", "Privacy Pass", "docs/explanation/multi-attribute.md", "several attributes per person",
                  "docs/how-to/contribute.md"):
        assert words in flat, words


def test_the_readme_names_the_query_layer_on_its_first_screen_and_among_what_is_inside():
    first_screen = " ".join(_readme().split("## Install", 1)[0].split())
    inside = " ".join(_readme().split("## What is inside", 1)[1].split("## Where next", 1)[0].split())
    for words in ("`dpdist.query`", "`dpdist.sql`", "`dpdist query`"):
        assert words in first_screen and words in inside, words
    assert "(docs/how-to/queries.md)" in inside


def test_every_relative_link_of_the_readme_leads_to_a_file_of_the_repository():
    links = re.findall(r"\]\((?!https?://|#)([^)#]+)(?:#[^)]*)?\)", _readme())
    assert "docs/tutorials/index.md" in links
    for link in links:
        assert (ROOT / link).exists(), link


def test_the_readme_reads_in_two_minutes():
    assert len(_readme().splitlines()) <= 150
