"""Sphinx configuration: tutorials, how-to guides, reference and explanation (Markdown, MyST), the API
reference from the docstrings (autodoc), the command line from its parser (sphinx-argparse) and the HTTP API from
the service's OpenAPI document (sphinxcontrib-openapi).

Build: ``uv run sphinx-build -W -b html docs docs/_build/html`` (``tests/docs/test_docs.py`` builds it with
warnings as errors; ``tests/docs/test_site.py`` reads the result in headless Chromium).  Nothing is downloaded:
no intersphinx, and the theme (pydata-sphinx-theme) ships its fonts and scripts.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

project = "dpdist"
author = "dpdist developers"
copyright = "dpdist developers"  # noqa: A001 (Sphinx's name)

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_parser",
    "sphinxarg.ext",
    "sphinxcontrib.openapi",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated"]

# Markdown guides: $...$ math, ``{eval-rst}`` blocks, anchors for "#section" links, ``{{ name }}`` substitutions.
myst_enable_extensions = ["dollarmath", "amsmath", "deflist", "substitution"]
myst_heading_anchors = 3
# Words a page shares with what dpdist prints, written once, in the code: ``{{ name }}`` in a page
from dpdist.amplification._statement import RELAY_TRACES  # noqa: E402

myst_substitutions = {"relay_traces": RELAY_TRACES}

# numpy-style docstrings (napoleon), parameters as a plain list: their types are prose
# ("array_like of shape (n,)"), not cross-references; type hints stay in the signature.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_param = False
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Annotations name a result by its short name (from __future__ import annotations); a result re-exported by
# a second documented module (dpdist.local.HeavyHitters, dpdist.uncertainty.CDFBand) would be two targets
autodoc_type_aliases = {"HeavyHitters": "dpdist.estimates.HeavyHitters", "CDFBand": "dpdist.estimates.CDFBand"}
autodoc_default_options = {"members": True, "show-inheritance": True}
# Optional extras are imported only where present; the reference is built with the dev group.
autodoc_mock_imports: list[str] = []

# Offline: MathJax would be fetched by the reader's browser, never by the build.
html_theme = "pydata_sphinx_theme"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["theme-version"],
}
html_sidebars: dict[str, list[str]] = {"index": []}
# The HTTP reference: sphinxcontrib-openapi's renderer that reads OpenAPI 3.1 (its newer one stops at a schema of
# type "array" without "items", which 3.1 allows).
openapi_default_renderer = "httpdomain:old"
# Module docstrings list their papers as footnotes ([000] ...) cited in the text of the
# functions, not of the module itself; an unreferenced footnote is not an error here.
suppress_warnings = ["ref.footnote"]
html_static_path: list[str] = []
html_title = "dpdist"


# ---------------------------------------------------------------------- module lists
# ``.. public-modules:: dpdist.local.frequency`` in an API page stands for one automodule per
# public (not underscored) module below that package, found when the docs are built: a new
# protocol, central release or reproduction is in the reference without editing a page.
import importlib  # noqa: E402
import pkgutil  # noqa: E402
import re  # noqa: E402

_MODULE_LIST = re.compile(r"^\.\. public-modules:: (\S+)[ \t]*$", re.MULTILINE)


def _public_modules(package_name: str) -> list[tuple[str, bool]]:
    """``[(module name, is a package)]`` below ``package_name``, depth first, sorted, none private."""
    package = importlib.import_module(package_name)
    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        if info.name.startswith("_"):
            continue
        name = f"{package_name}.{info.name}"
        found.append((name, info.ispkg))
        if info.ispkg:
            found += _public_modules(name)
    return found


def _automodules(match: re.Match) -> str:
    lines = []
    for name, is_package in _public_modules(match.group(1)):
        lines.append(f".. automodule:: {name}" + ("\n   :no-members:" if is_package else ""))
    return "\n\n".join(lines)


def _expand_module_lists(app, docname, source):
    source[0] = _MODULE_LIST.sub(_automodules, source[0])


# ---------------------------------------------------------------------- the service's OpenAPI document
# ``reference/http.md`` renders the document ``dpdist serve`` serves at /openapi.json, written here when the docs are
# built (``_generated/`` is not a page and is not committed).
import json  # noqa: E402

GENERATED = Path(__file__).resolve().parent / "_generated"


def _write_openapi(app) -> None:
    from dpdist.serve import openapi_schema

    GENERATED.mkdir(exist_ok=True)
    (GENERATED / "openapi.json").write_text(json.dumps(openapi_schema(), indent=1))


# ---------------------------------------------------------------------- member docstrings as written
# napoleon reads the first line of a property's, an attribute's or a constant's own docstring as "type: description"
# and renders what stands before its first colon as the member's type ("Loss of any number of reports of one value:
# that of one report" became a Type field of prose, its "reports" a link). Their types are their annotations, in the
# signature: their docstrings are rendered as written (napoleon parses nothing else in them).
_MEMBERS = ("property", "attribute", "data")
_AS_WRITTEN: dict[str, list[str]] = {}


def _keep_as_written(app, what, name, obj, options, lines) -> None:
    if what in _MEMBERS:
        _AS_WRITTEN[name] = list(lines)


def _restore_as_written(app, what, name, obj, options, lines) -> None:
    if what in _MEMBERS and name in _AS_WRITTEN:
        lines[:] = _AS_WRITTEN.pop(name)


# ---------------------------------------------------------------------- references that cannot resolve, refused at once
# Every annotation in a signature is a reference (``float``, ``np.ndarray``, ``ArrayLike``: about 9,600 of them) that
# names no documented object (no intersphinx), and Sphinx's Python domain looks for each with a "fuzzy" scan of every
# documented name for one ending in ``.name`` (an eighth of the build). A name whose last part ends no documented
# name cannot match there nor anywhere else in that lookup, so it is refused without the scan: the same pages.
from sphinx.domains.python import PythonDomain  # noqa: E402


class _PythonDomain(PythonDomain):
    _last_parts: tuple[int, frozenset[str]] = (-1, frozenset())

    def find_obj(self, env, modname, classname, name, type, searchmode=0):
        if len(self.objects) != self._last_parts[0]:  # objects are added while the pages are read
            self._last_parts = (len(self.objects), frozenset(full.rpartition(".")[2] for full in self.objects))
        if name.removesuffix("()").rpartition(".")[2] not in self._last_parts[1]:
            return []
        return super().find_obj(env, modname, classname, name, type, searchmode)


def setup(app):
    app.add_domain(_PythonDomain, override=True)
    app.connect("autodoc-process-docstring", _keep_as_written, priority=400)  # before napoleon's (500)
    app.connect("autodoc-process-docstring", _restore_as_written, priority=600)
    app.connect("source-read", _expand_module_lists)
    app.connect("builder-inited", _write_openapi)
