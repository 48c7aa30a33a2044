"""The service's own HTML pages: Jinja2 templates (``_web/templates``) and their static scripts and styles
(``_web/static``, served at ``/static/pages/``), package data of ``dpdist.serve``.

* ``/campaigns/{campaign}/dashboard``: a campaign's estimate with both bands, its values, n over time and the
  rejections, refreshed every few seconds (``_web/static/dashboard.js`` and the modules it imports; the page's
  content is described in ``docs/how-to/run-a-campaign.md``, "Dashboard");
* ``/`` for a browser (content negotiation, :func:`prefers_html`): the campaigns, with links to their pages.

Both pages are shells their scripts fill from the API with the admin token, which the scripts take from the URL
fragment (``#token=...``, never sent to a server) and at once out of the address (``_web/static/token.js``).  The
templates are rendered with autoescape on and strict undefined variables: a campaign id or a proxy's path prefix
appears only escaped, as text or an attribute; the pages hold no inline script or style, so their
Content-Security-Policy (:mod:`._middleware`) allows scripts and styles from this origin only.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import jinja2
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

__all__ = ["STATIC_PREFIX", "dashboard_page", "index_page", "prefers_html", "static_files"]

#: Where the pages' scripts and styles are served.
STATIC_PREFIX = "/static/pages"


def _web_dir() -> Path:
    """``dpdist/serve/_web`` of the installed package (a plain directory: :mod:`importlib.resources`)."""
    return Path(str(resources.files("dpdist.serve") / "_web"))


_TEMPLATES = Jinja2Templates(env=jinja2.Environment(
    loader=jinja2.FileSystemLoader(_web_dir() / "templates"), autoescape=True, undefined=jinja2.StrictUndefined,
))


def static_files() -> StaticFiles:
    """The pages' scripts and styles, for a mount at :data:`STATIC_PREFIX`."""
    return StaticFiles(directory=_web_dir() / "static")


def dashboard_page(request: Request, campaign_id: str) -> Response:
    """The dashboard of ``campaign_id`` (a checked id)."""
    return _TEMPLATES.TemplateResponse(request, "dashboard.html", {"campaign": campaign_id})


def index_page(request: Request, version: str) -> Response:
    """The index of campaigns for a browser, under the request's ``root_path`` (a reverse proxy's prefix, or '')."""
    root = request.scope.get("root_path", "")
    return _TEMPLATES.TemplateResponse(request, "index.html", {"root": root, "version": version},
                                       headers={"Vary": "Accept"})


def prefers_html(accept: str) -> bool:
    """Whether an ``Accept`` header ranks ``text/html`` above ``application/json`` (a browser, not an API client)."""

    def quality(media: str) -> float:
        best = 0.0
        for part in accept.split(","):
            fields = [field.strip() for field in part.split(";")]
            if fields[0] in (media, media.split("/")[0] + "/*", "*/*"):
                weight = next((field[2:] for field in fields[1:] if field.startswith("q=")), "1")
                try:
                    value = float(weight)
                except ValueError:
                    value = 0.0
                specific = 0.001 if fields[0] == media else 0.0  # an exact match outranks a wildcard of equal q
                best = max(best, value + specific)
        return best

    return quality("text/html") > quality("application/json")
