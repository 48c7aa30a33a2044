"""The documentation site (docs/, Sphinx + MyST) builds with no warning: no broken internal link,
no docstring that renders wrong, every page in a table of contents.  Offline: no intersphinx.

The build imports every public module and takes tens of seconds: out of the fast inner loop, with the
check that it can fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dpdist

DOCS = Path(__file__).resolve().parents[2] / "docs"

# Sphinx and MyST warn each other about their own API deprecations: not about our docs.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
]


@pytest.fixture(scope="module")
def sphinx_cmd():
    """Sphinx, imported when a test runs, not when ``-m "not slow"`` collects this module."""
    return pytest.importorskip("sphinx.cmd.build", reason="the docs extra (dpdist[docs]) is not installed")


@pytest.mark.slow  # Sphinx over every page (21 CPU-s)
def test_the_documentation_builds_without_warnings(tmp_path, sphinx_cmd):
    warnings = tmp_path / "warnings.txt"
    # -W: warnings are errors; -n: nitpicky about references to internal targets is too strict
    # for prose cross-references, so broken links are caught as MyST/docutils warnings instead.
    status = sphinx_cmd.build_main(
        ["-W", "--keep-going", "-q", "-E", "-b", "html", "-d", str(tmp_path / "doctrees"),
         "-w", str(warnings), str(DOCS), str(tmp_path / "html")]
    )
    assert status == 0, warnings.read_text()
    html = tmp_path / "html"
    assert (html / "index.html").is_file() and (html / "design.html").is_file()
    reference = (html / "api" / "experiments.html").read_text()
    assert "z_score" in reference and "ExperimentSpec" in reference  # autodoc ran


@pytest.mark.slow  # Sphinx (1 CPU-s), with the build it shows can fail
def test_a_broken_internal_link_fails_the_build(tmp_path, sphinx_cmd):
    """The build test can fail: a Markdown link to a missing page is a warning, hence an error."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["myst_parser"]\n')
    (source / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n")
    status = sphinx_cmd.build_main(["-W", "-q", "-b", "html", str(source), str(tmp_path / "html")])
    assert status != 0


def test_the_source_cites_design_not_process():
    """Comments and docstrings point at the design (a docs page and its section, a paper's equation),
    not at the issue that asked for a change: process history lives in the commits."""
    source = Path(dpdist.__file__).parent
    found = [
        f"{path.relative_to(source)}:{number}: {line.strip()}"
        for path in sorted(source.rglob("*.py"))
        if "_clients_js" not in path.parts
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"\b[Ii]ssues? \d+", line)
    ]
    assert not found, "\n".join(found)
