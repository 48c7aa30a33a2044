"""What the README promises a newcomer is there (install line, the papers it points
to, an honest demo time)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_the_readme_says_how_to_install_the_library_with_an_extra_that_exists():
    readme = (ROOT / "README.md").read_text()
    assert 'pip install "dpdist[serve]"' in readme
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in re.findall(r"`(\w+)` \(", readme.split("## Install as a library", 1)[1].split("##", 1)[0]):
        assert extra in extras, extra
    assert "serve" in extras


def test_design_lists_the_five_papers_by_author_and_year_with_links():
    """The README pointed to docs/design.md for the five source papers, which it did not list."""
    design = (ROOT / "docs" / "design.md").read_text()
    section = design.split("## Source papers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| paper 00")]
    assert [row.split("|")[1].strip() for row in rows] == [f"paper 00{i}" for i in range(5)]
    for row in rows:
        assert re.search(r"\((19|20)\d\d\)", row), row  # the year
        assert re.search(r"\]\(https://[^)]+\)", row), row  # a link
    for surname in ("Zhao", "Fang", "Tao", "Li", "Xiong"):
        assert any(f". {surname}" in row for row in rows), surname
    assert "docs/design.md#source-papers" in (ROOT / "README.md").read_text()


def test_the_demo_time_in_the_readme_is_the_measured_cpu_time():
    """The README said ~30 s; `uv run dpdist demo` takes about 48 s of CPU (docs/benchmarks.md)."""
    readme = (ROOT / "README.md").read_text()
    demo = next(line for line in readme.splitlines() if line.startswith("uv run dpdist demo"))
    assert "~30 s" not in demo and "~50 s of CPU" in demo
    assert "48 s of CPU" in (ROOT / "docs" / "benchmarks.md").read_text()


def test_the_readme_points_to_the_quickstart_the_relay_and_records_of_several_attributes():
    """It never mentioned the relay, its extra or several attributes."""
    readme = (ROOT / "README.md").read_text()
    install = readme.split("## Install as a library", 1)[1].split("##", 1)[0]
    assert "`relay` (" in install and "dpdist issuer" in install
    assert "docs/quickstart.md" in readme.split("## Set up and run", 1)[0]
    for words in ("`dpdist relay`", "Privacy Pass", "docs/multi_attribute.md", "several\nattributes per person"):
        assert words in readme, words
