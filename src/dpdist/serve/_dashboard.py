"""The dashboard page of a campaign: estimate with its band, n over time, rejected reports by reason.

One self-contained HTML page (no script from elsewhere: nothing is downloaded);
its script reads the admin token from the URL fragment (``#token=...``, which a
browser never sends to a server, so it stays out of every log), fetches
``/estimate`` and ``/history`` every few seconds and draws SVG charts.
"""

from __future__ import annotations

import html
import json

__all__ = ["dashboard_html"]

_PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dpdist campaign __TITLE__</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
  h1 { font-size: 1.3rem; } h2 { font-size: 1.05rem; margin-top: 1.5rem; }
  .facts span { margin-right: 1.5rem; } .facts b { font-variant-numeric: tabular-nums; }
  svg { border: 1px solid #ddd; background: #fff; }
  .bar { fill: #4a7fb5; } .band { stroke: #333; stroke-width: 1; } .line { fill: none; stroke: #4a7fb5; stroke-width: 2; }
  .axis { font-size: 10px; fill: #555; } #error { color: #b00; }
  table { border-collapse: collapse; } td, th { padding: 2px 10px; border-bottom: 1px solid #eee; text-align: left; }
</style>
</head>
<body>
<h1>Campaign <code id="campaign">__TITLE__</code></h1>
<p class="facts">
  <span>state <b id="state">-</b></span>
  <span>protocol <b id="protocol">-</b></span>
  <span>&epsilon; <b id="epsilon">-</b></span>
  <span>n <b id="n">-</b></span>
  <span>batches <b id="batches">-</b></span>
  <span>updated <b id="updated">-</b></span>
</p>
<p id="error"></p>
<h2>Estimate <small id="band-note"></small></h2>
<svg id="estimate-chart" width="760" height="280" role="img" aria-label="estimate"></svg>
<p id="summary"></p>
<p id="diagnostics"></p>
<h2>Reports over time</h2>
<svg id="history-chart" width="760" height="160" role="img" aria-label="n over time"></svg>
<h2>Rejected reports by reason</h2>
<table id="rejected"><thead><tr><th>reason</th><th>reports</th></tr></thead><tbody></tbody></table>
<h2>Refused batches by reason</h2>
<table id="refused"><thead><tr><th>reason</th><th>batches</th></tr></thead><tbody></tbody></table>
<script>
"use strict";
const CAMPAIGN = __CAMPAIGN__;
const REFRESH_MS = 3000;
const SVG = "http://www.w3.org/2000/svg";
const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const search = new URLSearchParams(location.search);
search.delete("token");  // a token in the URL is refused by the server and never forwarded
const query = search.toString() ? "?" + search.toString() : "";

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  parent.appendChild(node);
  return node;
}

async function getJson(path) {
  const response = await fetch(path, { headers: { Authorization: "Bearer " + token }, cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

function fillTable(id, counts) {
  const body = document.querySelector("#" + id + " tbody");
  body.textContent = "";
  const entries = Object.entries(counts).sort();
  if (!entries.length) entries.push(["(none)", 0]);
  for (const [reason, count] of entries) {
    const row = body.insertRow();
    row.insertCell().textContent = reason;
    row.insertCell().textContent = String(count);
  }
}

function drawBars(svg, lows, highs, values, lowBand, highBand, xLabels) {
  const W = +svg.getAttribute("width"), H = +svg.getAttribute("height"), pad = 30;
  const top = Math.max(1e-12, ...values, ...(highBand || []).filter(Number.isFinite));
  const bottom = Math.min(0, ...values, ...(lowBand || []).filter(Number.isFinite));
  const x0 = lows[0], x1 = highs[highs.length - 1];
  const sx = x => pad + (x - x0) / (x1 - x0) * (W - 2 * pad);
  const sy = y => H - pad - (y - bottom) / (top - bottom) * (H - 2 * pad);
  el("line", { x1: pad, x2: W - pad, y1: sy(0), y2: sy(0), stroke: "#999" }, svg);
  values.forEach((v, i) => {
    const y = Math.min(sy(v), sy(0)), h = Math.abs(sy(v) - sy(0));
    el("rect", { class: "bar", x: sx(lows[i]), y: y, width: Math.max(0.5, sx(highs[i]) - sx(lows[i]) - 0.5), height: h,
                 "data-value": v }, svg);
    if (lowBand && Number.isFinite(lowBand[i]) && Number.isFinite(highBand[i])) {
      const xm = (sx(lows[i]) + sx(highs[i])) / 2;
      el("line", { class: "band", x1: xm, x2: xm, y1: sy(lowBand[i]), y2: sy(highBand[i]) }, svg);
    }
  });
  el("text", { class: "axis", x: pad, y: H - 8 }, svg).textContent = xLabels[0];
  el("text", { class: "axis", x: W - pad, y: H - 8, "text-anchor": "end" }, svg).textContent = xLabels[1];
  el("text", { class: "axis", x: 2, y: pad - 8 }, svg).textContent = top.toPrecision(3);
}

function drawEstimate(data) {
  const svg = document.getElementById("estimate-chart");
  svg.textContent = "";
  const e = data.estimate;
  const summary = document.getElementById("summary"), note = document.getElementById("band-note");
  if (!e) { summary.textContent = "no report yet"; note.textContent = ""; return; }
  if (e.kind === "frequency") {
    const items = e.items;
    drawBars(svg, items, items.map(i => i + 1), e.frequencies, e.band.low, e.band.high, ["item 0", "item " + (items.length - 1)]);
    note.textContent = "(bars: frequency; lines: " + Math.round(e.band.level * 100) + "% confidence band)";
    summary.textContent = "postprocess " + e.postprocess;
  } else if (e.kind === "heavy_hitters") {
    const ranks = e.items.map((_, i) => i);
    drawBars(svg, ranks, ranks.map(i => i + 1), e.frequencies, e.band.low, e.band.high,
             [e.labels[0] || "", e.labels[e.labels.length - 1] || ""]);
    note.textContent = "(bars: the heavy hitters found, most frequent first; lines: " + Math.round(e.band.level * 100) + "% intervals)";
    summary.textContent = e.labels.map((label, i) => label + " " + e.frequencies[i].toPrecision(3)).join(", ");
  } else if (e.kind === "distribution") {
    const lows = e.edges.slice(0, -1), highs = e.edges.slice(1);
    const density = e.probabilities.map((p, i) => p / (highs[i] - lows[i]));
    drawBars(svg, lows, highs, density, null, null, [String(lows[0]), String(highs[highs.length - 1])]);
    note.textContent = "(density; this estimator has no confidence band)";
    summary.textContent = "mean " + e.mean.toPrecision(4) + ", median " + e.median.toPrecision(4);
  } else {
    drawBars(svg, [0], [1], [e.mean], [e.band.low], [e.band.high], ["", ""]);
    note.textContent = "(mean; line: " + Math.round(e.band.level * 100) + "% confidence band)";
    summary.textContent = "mean " + e.mean.toPrecision(4) + " [" + e.band.low.toPrecision(4) + ", " + e.band.high.toPrecision(4) + "]";
  }
}

function drawHistory(points) {
  const svg = document.getElementById("history-chart");
  svg.textContent = "";
  if (!points.length) return;
  const W = +svg.getAttribute("width"), H = +svg.getAttribute("height"), pad = 30;
  const times = points.map(p => Date.parse(p.time)), n = points.map(p => p.n);
  const t0 = times[0], t1 = Math.max(times[times.length - 1], t0 + 1), top = Math.max(1, ...n);
  const path = points.map((p, i) => (i ? "L" : "M") + (pad + (times[i] - t0) / (t1 - t0) * (W - 2 * pad)).toFixed(1)
      + "," + (H - pad - n[i] / top * (H - 2 * pad)).toFixed(1)).join(" ");
  el("path", { class: "line", d: path, "data-last-n": n[n.length - 1] }, svg);
  el("text", { class: "axis", x: 2, y: pad - 8 }, svg).textContent = "n = " + top;
  el("text", { class: "axis", x: pad, y: H - 8 }, svg).textContent = points[0].time;
  el("text", { class: "axis", x: W - pad, y: H - 8, "text-anchor": "end" }, svg).textContent = points[points.length - 1].time;
}

function drawDiagnostics(d) {
  const node = document.getElementById("diagnostics");
  if (!d || d.test === null || d.test === undefined || d.detail) {
    node.textContent = "poisoning test: " + ((d && d.detail) || "none");
  } else if (!d.flagged) {
    node.textContent = "poisoning test: no sign (false-alarm rate <= " + d.alpha + ")";
  } else {
    node.textContent = "POISONING SUSPECTED: " + d.count_above + " item(s) supported more, " + d.count_below
      + " less than any honest population can (adjusted p = " + d.min_p_value.toPrecision(2) + ")";
  }
  node.style.color = d && d.flagged ? "#b00" : "";
}

// the page is {service}/campaigns/{id}/dashboard; {service} may carry a reverse proxy's path prefix
const SERVICE = location.pathname.slice(0, location.pathname.lastIndexOf("/campaigns/"));

async function refresh() {
  const base = SERVICE + "/api/campaigns/" + encodeURIComponent(CAMPAIGN);
  try {
    const [data, history] = await Promise.all([getJson(base + "/estimate" + query), getJson(base + "/history")]);
    for (const key of ["state", "protocol", "epsilon", "n", "batches"]) document.getElementById(key).textContent = String(data[key]);
    fillTable("rejected", data.rejected);
    fillTable("refused", data.refused_batches);
    drawEstimate(data);
    drawDiagnostics(data.diagnostics);
    drawHistory(history.history);
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent = new Date().toISOString();
    document.body.dataset.loaded = "true";
  } catch (error) {
    document.getElementById("error").textContent = String(error.message || error);
  }
}

refresh();
// a hidden tab does not poll (issue 28, item 4): the server computes an estimate once per change anyway,
// but a tab nobody looks at should not keep a connection busy; it refreshes when shown again
setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
</script>
</body>
</html>
"""


def dashboard_html(campaign_id: str) -> str:
    """The page for ``campaign_id`` (escaped: the id only ever appears as text or a JSON string)."""
    return _PAGE.replace("__TITLE__", html.escape(campaign_id)).replace(
        "__CAMPAIGN__", json.dumps(campaign_id).replace("<", "\\u003c")
    )
