"""The documentation site (docs/, Sphinx + MyST, pydata-sphinx-theme) builds with no warning: no broken internal link,
no docstring that renders wrong, every page in a table of contents.  Offline: no intersphinx.

The site is built once for the module; its reference is checked against the code it is generated from (the API from
the docstrings, every option of the command line from its parser, every route of the HTTP API from the service's
OpenAPI document), and the site is read as a reader sees it, in headless Chromium at a desktop and a phone width
(``tests/docs/site_pages.mjs``): every page has a title, no internal link is broken (its page and its anchor exist),
the search finds pages, the phone width needs no sideways scrolling on the main pages; screenshots of those pages at
both widths are written to the test's own folder.

The build imports every public module and takes tens of seconds: out of the fast inner loop, with the
check that it can fail.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import dpdist

DOCS = Path(__file__).resolve().parents[2] / "docs"
SITE_PAGES = Path(__file__).resolve().parent / "site_pages.mjs"

# Sphinx and MyST warn each other about their own API deprecations: not about our docs.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
]


@pytest.fixture(scope="module")
def sphinx_cmd():
    """Sphinx, imported when a test runs, not when ``-m "not slow"`` collects this module."""
    return pytest.importorskip("sphinx.cmd.build", reason="the docs extra (dpdist[docs]) is not installed")


@pytest.fixture(scope="module")
def site(tmp_path_factory, sphinx_cmd):
    """The site built once with warnings as errors: (status, the HTML folder, the warnings' text)."""
    folder = tmp_path_factory.mktemp("site")
    warnings = folder / "warnings.txt"
    # -W: warnings are errors; -n: nitpicky about references to internal targets is too strict
    # for prose cross-references, so broken links are caught as MyST/docutils warnings instead.
    status = sphinx_cmd.build_main(
        ["-W", "--keep-going", "-q", "-E", "-b", "html", "-d", str(folder / "doctrees"),
         "-w", str(warnings), str(DOCS), str(folder / "html")]
    )
    return status, folder / "html", warnings.read_text() if warnings.exists() else ""


@pytest.mark.slow  # Sphinx over every page (40 CPU-s)
def test_the_documentation_builds_without_warnings(site):
    status, html, warnings = site
    assert status == 0, warnings
    for page in ("index", "tutorials/index", "how-to/index", "reference/index", "explanation/index",
                 "explanation/design", "reference/known-limits", "search"):
        assert (html / f"{page}.html").is_file(), page
    reference = (html / "reference" / "api" / "experiments.html").read_text()
    assert "z_score" in reference and "ExperimentSpec" in reference  # autodoc ran


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(sub-command path, option string) of every option of ``parser`` and its sub-commands."""
    for action in parser._actions:  # argparse has no public iterator over a parser's options
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*path, name))
        else:
            for option in action.option_strings:
                yield path, option


@pytest.mark.slow  # reads the site the module built
def test_the_reference_renders_every_option_and_route_of_the_code(site):
    from dpdist.cli import build_parser
    from dpdist.serve import openapi_schema

    status, html, warnings = site
    assert status == 0, warnings
    cli = (html / "reference" / "cli.html").read_text()
    options = list(_options(build_parser()))
    assert len(options) > 300
    missing = [(" ".join(path), option) for path, option in options if option not in cli]
    assert missing == []
    for path in build_parser()._subparsers._group_actions[0].choices:  # every sub-command's own section
        assert f'id="dpdist-{path}"' in cli, path
    http = (html / "reference" / "http.html").read_text()
    paths = openapi_schema()["paths"]
    assert len(paths) > 20
    assert [path for path in paths if path not in http] == []


@pytest.mark.slow  # Sphinx (1 CPU-s), with the build it shows can fail
def test_a_broken_internal_link_fails_the_build(tmp_path, sphinx_cmd):
    """The build test can fail: a Markdown link to a missing page is a warning, hence an error."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["myst_parser"]\n')
    (source / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n")
    status = sphinx_cmd.build_main(["-W", "-q", "-b", "html", str(source), str(tmp_path / "html")])
    assert status != 0


#: the pages photographed at both widths, and checked for sideways scrolling at the phone's
SHOTS = {"index": "home", "tutorials/first-campaign": "tutorial", "how-to/reverse-proxy": "how-to",
         "reference/cli": "cli", "reference/http": "http", "reference/known-limits": "known-limits",
         "reference/api/local": "api", "explanation/privacy-model": "explanation"}
WIDTHS = (("desktop", 1280, 900, False), ("phone", 390, 844, True))


def _read_site(html: Path, folder: Path) -> dict:
    from ops_support import chromium_devtools, required

    pages = sorted(path.resolve().as_uri() for path in html.rglob("*.html") if "_static" not in path.parts)
    shots = {(html / f"{page}.html").resolve().as_uri(): name for page, name in SHOTS.items()}
    plan = {"widths": [[*WIDTHS[0], pages], [*WIDTHS[1], sorted(shots)]], "shots": shots, "out": str(folder),
            "search": (html / "search.html").resolve().as_uri() + "?q=privacy", "result": str(folder / "site.json")}
    with chromium_devtools() as port:
        run = subprocess.run([required("node"), "--experimental-websocket", str(SITE_PAGES), str(port), json.dumps(plan)],
                             capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads((folder / "site.json").read_text())


@pytest.mark.slow  # headless Chromium over every page of the built site
def test_the_site_reads_in_a_browser_at_desktop_and_phone_widths(site, tmp_path):
    status, html, warnings = site
    assert status == 0, warnings
    read = _read_site(html, tmp_path)
    desktop = {page["url"]: page for page in read["pages"] if page["width"] == "desktop"}
    assert len(desktop) >= 80
    untitled = [url for url, page in desktop.items() if not page["title"].strip() or "&lt;no title&gt;" in page["title"]
                or "<no title>" in page["title"]]
    assert untitled == []
    broken = []
    for url, page in desktop.items():
        for link in page["links"]:
            parts = urlsplit(link)
            if parts.scheme != "file":
                continue  # the web (GitHub, papers): not this site's
            target = "file://" + parts.path
            if not Path(unquote(parts.path)).exists():
                broken.append((url, link))
            elif parts.fragment and target in desktop and unquote(parts.fragment) not in desktop[target]["ids"]:
                broken.append((url, link))
    assert broken == []
    phone = [page for page in read["pages"] if page["width"] == "phone"]
    assert len(phone) == len(SHOTS) and [page["url"] for page in phone if page["overflow"]] == []
    assert {path.name for path in tmp_path.glob("*.png")} == {f"{name}-{width}.png" for name in SHOTS.values()
                                                             for width, *_ in WIDTHS}
    assert any(re.search(r"/explanation/privacy-model\.html", href) for href in read["search"]), read["search"][:10]


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
