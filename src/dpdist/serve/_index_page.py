"""``/`` for a browser: an HTML index of the campaigns, with links to each dashboard and participate page.

``GET /`` answers JSON (``{"service", "version", "openapi"}``) unless the request
prefers HTML (``Accept: text/html`` ranked above JSON, as a browser sends), so API
clients see no change (content negotiation, RFC 9110 sec. 12.5.1).  The page is a
shell like the dashboard: listing campaigns needs the admin token, which it reads
from the URL fragment (``#token=...``, never sent to a server) or from a field that
puts it there, and sends as ``Authorization: Bearer`` to ``/api/campaigns``.
"""

from __future__ import annotations

import html
import json

__all__ = ["index_html", "prefers_html"]

_PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dpdist service</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 60rem; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.35rem; } .note { color: #555; font-size: 0.9rem; } #error { color: #b00; }
  table { border-collapse: collapse; margin: 0.6rem 0; }
  td, th { padding: 4px 12px; border-bottom: 1px solid #eee; text-align: left; font-variant-numeric: tabular-nums; }
  th { background: #f6f6f6; } td.num { text-align: right; } input { font-size: 0.95rem; width: 20rem; }
</style>
</head>
<body>
<h1>dpdist service <small class="note">version __VERSION__</small></h1>
<p class="note">Campaigns collect reports randomized on each person's device (local differential privacy). The API is
described by <a href="__ROOT__/openapi.json">openapi.json</a>.</p>
<form id="login"><label for="token">Admin token: </label><input id="token" type="password" autocomplete="off">
  <button type="submit">List campaigns</button>
  <span class="note">kept in this page's address after '#', which a browser never sends to a server</span></form>
<p id="error"></p>
<table id="campaigns" hidden><thead><tr><th>campaign</th><th>state</th><th>protocol</th><th>&epsilon;</th>
  <th>reports</th><th>pages</th></tr></thead><tbody></tbody></table>
<script>
"use strict";
const ROOT = __ROOT_JSON__;
const $ = (id) => document.getElementById(id);

function token() {
  return new URLSearchParams(location.hash.slice(1)).get("token") || "";
}

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}

async function list() {
  if (!token()) return;
  $("login").hidden = true;
  try {
    const response = await fetch(ROOT + "/api/campaigns", { headers: { Authorization: "Bearer " + token() }, cache: "no-store" });
    const body = await response.json();
    if (!response.ok) throw new Error(body.detail || response.statusText);
    const rows = $("campaigns").tBodies[0];
    rows.textContent = "";
    for (const c of body.campaigns) {
      const tr = rows.insertRow();
      tr.insertCell().textContent = c.campaign;
      tr.insertCell().textContent = c.state;
      tr.insertCell().textContent = c.config.protocol;
      tr.insertCell().textContent = String(c.config.epsilon);
      const n = tr.insertCell();
      n.textContent = String(c.n);
      n.className = "num";
      const pages = tr.insertCell();
      const id = encodeURIComponent(c.campaign);
      pages.append(link(ROOT + "/campaigns/" + id + "/dashboard#token=" + encodeURIComponent(token()), "dashboard"), " · ",
                   link(ROOT + "/campaigns/" + id + "/participate", "participate"));
    }
    if (!body.campaigns.length) rows.insertRow().insertCell().textContent = "(no campaign yet)";
    $("campaigns").hidden = false;
    $("error").textContent = "";
    document.body.dataset.loaded = "true";
  } catch (error) {
    $("login").hidden = false;
    $("error").textContent = "Cannot list the campaigns: " + (error.message || error);
  }
}

$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  location.hash = "token=" + encodeURIComponent($("token").value.trim());
});
window.addEventListener("hashchange", list);
list();
</script>
</body>
</html>
"""


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


def index_html(root_path: str, version: str) -> str:
    """The index page under ``root_path`` (a reverse proxy's prefix, or '')."""
    return (_PAGE.replace("__ROOT_JSON__", json.dumps(root_path).replace("<", "\\u003c"))
            .replace("__ROOT__", html.escape(root_path)).replace("__VERSION__", html.escape(version)))
