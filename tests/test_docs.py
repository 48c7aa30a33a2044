"""The documentation site (docs/, Sphinx + MyST) builds with no warning: no broken internal link,
no docstring that renders wrong, every page in a table of contents.  Offline: no intersphinx.

The build imports every public module and takes tens of seconds: out of the fast inner loop, with the
check that it can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

# Sphinx and MyST warn each other about their own API deprecations: not about our docs.  Both tests run Sphinx
# (1-21 CPU-s): slow.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def sphinx_cmd():
    """Sphinx, imported when a test runs, not when ``-m "not slow"`` collects this module."""
    return pytest.importorskip("sphinx.cmd.build", reason="the docs extra (dpdist[docs]) is not installed")


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


def test_a_broken_internal_link_fails_the_build(tmp_path, sphinx_cmd):
    """The build test can fail: a Markdown link to a missing page is a warning, hence an error."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["myst_parser"]\n')
    (source / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n")
    status = sphinx_cmd.build_main(["-W", "-q", "-b", "html", str(source), str(tmp_path / "html")])
    assert status != 0
