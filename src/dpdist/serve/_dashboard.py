"""The dashboard page of a campaign: estimate with both bands, a table of values, n over time, rejections.

One self-contained HTML page (no script from elsewhere: nothing is downloaded);
its script reads the admin token from the URL fragment (``#token=...``, which a
browser never sends to a server, so it stays out of every log), fetches
``/estimate`` and ``/history`` every few seconds and draws SVG charts with
labelled axes and ticks:

* every kind shows its estimate with the **fixed-n** 95 % interval or band (grey:
  valid for one look at a number of reports fixed in advance) and the **anytime**
  95 % confidence sequence (orange: valid however often the page is looked at,
  :mod:`dpdist.confidence_sequences`), or why a protocol has none;
* a frequency or heavy-hitters campaign: one bar per value, named by its label; a key-value campaign: one bar
  per key (its frequency) and each key's mean value in the table;
  a distribution: its CDF with both bands and its density; a mean: both intervals
  on the value's axis; a multi-attribute campaign: each attribute's estimate, or a
  heat map of each 2-way marginal with its intervals (:mod:`._dashboard_multi`); a
  campaign in rounds: the quantiles released so far with their intervals, and its rounds
  (:mod:`._dashboard_rounds`);
* a table of the values with both intervals, the campaign's privacy guarantee, what
  its epsilon buys in plain words (``GET .../explain``, :mod:`._explain_words`), and
  a "stop when narrower than w" readout of the sequence.

The script is in :data:`_SCRIPT`, the page around it in :data:`_PAGE`; the charts'
drawing helpers are shared with nothing else (the participate page draws its own).
"""

from __future__ import annotations

import html
import json

from ._dashboard_multi import MULTI_SCRIPT, MULTI_STYLE
from ._dashboard_rounds import ROUNDS_SCRIPT

__all__ = ["dashboard_html"]

_STYLE = r"""
  body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 62rem; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.35rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
  .facts span { margin-right: 1.4rem; white-space: nowrap; } .facts b { font-variant-numeric: tabular-nums; }
  .guarantee { background: #f4f6f9; border-left: 4px solid #4a6fa5; padding: 0.4rem 0.7rem; }
  svg { border: 1px solid #ddd; background: #fff; display: block; margin: 0.4rem 0; } svg[hidden] { display: none; }
  svg text { font-size: 12px; fill: #333; } svg .title { font-size: 13px; font-weight: 600; }
  .axis line, .axis path { stroke: #777; } .grid { stroke: #eee; }
  .bar { fill: #8aa7cc; } .band { stroke: #222; stroke-width: 1.5; } .cap { stroke: #222; stroke-width: 1.5; }
  .anytime { fill: #f28e2b; fill-opacity: 0.28; stroke: #d0680f; stroke-width: 1.2; }
  .fixed { fill: #555; fill-opacity: 0.22; stroke: none; }
  .cdf { fill: none; stroke: #1f4e8c; stroke-width: 2; } .line { fill: none; stroke: #1f4e8c; stroke-width: 2; }
  .dot { fill: #1f4e8c; }
  .legend { font-size: 0.9rem; color: #444; } .legend i { display: inline-block; width: 1.6rem; height: 0.7rem;
    margin: 0 0.3rem 0 0.9rem; vertical-align: middle; }
  .legend .l-est { background: #8aa7cc; } .legend .l-fixed { border-top: 2px solid #222; height: 0; }
  .legend .l-fixed-area { background: rgba(85, 85, 85, 0.22); }
  .legend .l-any { background: rgba(242, 142, 43, 0.28); border: 1px solid #d0680f; }
  .legend .l-cdf { border-top: 2px solid #1f4e8c; height: 0; }
  .legend .l-dot { width: 0.7rem; border-radius: 50%; background: #1f4e8c; }
  .note { color: #555; font-size: 0.9rem; } #error { color: #b00; }
  .warning { background: #fff4e5; border-left: 4px solid #d0680f; padding: 0.4rem 0.7rem; }
  table { border-collapse: collapse; margin: 0.4rem 0; }
  td, th { padding: 3px 12px; border-bottom: 1px solid #eee; text-align: left; font-variant-numeric: tabular-nums; }
  th { background: #f6f6f6; } td.num { text-align: right; }
  input { font-size: 0.95rem; width: 6rem; }
"""

_PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dpdist campaign __TITLE__</title>
<style>__STYLE__</style>
</head>
<body>
<h1>Campaign <code id="campaign">__TITLE__</code></h1>
<p class="facts">
  <span>state <b id="state">-</b></span>
  <span>protocol <b id="protocol">-</b></span>
  <span>&epsilon; <b id="epsilon">-</b></span>
  <span>reports <b id="n">-</b></span>
  <span>batches <b id="batches">-</b></span>
  <span>updated <b id="updated">-</b></span>
</p>
<p class="guarantee">Privacy: <span id="guarantee">-</span></p>
<p class="guarantee" id="buys" hidden>What &epsilon; buys: <span id="buys-text"></span></p>
<p id="error"></p>
<h2>Estimate <small id="band-note"></small></h2>
<p class="legend" id="legend"></p>
<svg id="estimate-chart" width="900" height="340" role="img" aria-label="estimate with its bands"></svg>
<svg id="density-chart" width="900" height="200" role="img" aria-label="density" hidden></svg>
<div id="attributes"></div>
<p id="summary"></p>
<p class="warning" id="notes" hidden></p>
<table id="values"><thead></thead><tbody></tbody></table>
<p class="note" id="meaning"></p>
<p id="stop-row"><label for="width">Stop when the anytime band is narrower than </label><input id="width" type="number" min="0"
  step="any" placeholder="e.g. 0.05"> <span id="stop" class="note"></span></p>
<p id="diagnostics"></p>
<h2>Reports over time</h2>
<svg id="history-chart" width="900" height="200" role="img" aria-label="n over time"></svg>
<h2>Rejected reports by reason</h2>
<table id="rejected"><thead><tr><th>reason</th><th>reports</th></tr></thead><tbody></tbody></table>
<h2>Refused batches by reason</h2>
<table id="refused"><thead><tr><th>reason</th><th>batches</th></tr></thead><tbody></tbody></table>
<script>__SCRIPT__</script>
</body>
</html>
"""

_SCRIPT = r"""
"use strict";
const CAMPAIGN = __CAMPAIGN__;
const REFRESH_MS = 3000;
const MAX_BARS = 40;
const SVG = "http://www.w3.org/2000/svg";
const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const search = new URLSearchParams(location.search);
search.delete("token");  // a token in the URL is refused by the server and never forwarded
const $ = (id) => document.getElementById(id);

function el(name, attrs, parent, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}

async function getJson(path) {
  const response = await fetch(path, { headers: { Authorization: "Bearer " + token }, cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

function fmt(x, digits = 4) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "-";
  return String(Number(x.toPrecision(digits)));
}
const interval = (low, high) => (low === null || low === undefined ? "-" : "[" + fmt(low) + ", " + fmt(high) + "]");

/** About ``count`` round tick values covering [lo, hi]. */
function ticks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

/** Plot frame: scales, grid, y axis with ticks and title; returns {x, y, left, right, top, bottom}. */
function frame(svg, yLo, yHi, yTitle, margins) {
  const W = +svg.getAttribute("width"), H = +svg.getAttribute("height");
  const m = Object.assign({ left: 62, right: 16, top: 14, bottom: 44 }, margins || {});
  const y = (v) => H - m.bottom - (v - yLo) / (yHi - yLo) * (H - m.top - m.bottom);
  const axis = el("g", { class: "axis" }, svg);
  for (const t of ticks(yLo, yHi, 6)) {
    el("line", { x1: m.left, x2: W - m.right, y1: y(t), y2: y(t), class: "grid" }, svg);
    el("line", { x1: m.left - 4, x2: m.left, y1: y(t), y2: y(t) }, axis);
    el("text", { x: m.left - 7, y: y(t) + 4, "text-anchor": "end" }, axis, fmt(t, 3));
  }
  el("line", { x1: m.left, x2: m.left, y1: m.top, y2: H - m.bottom }, axis);
  el("line", { x1: m.left, x2: W - m.right, y1: H - m.bottom, y2: H - m.bottom }, axis);
  el("text", { x: 14, y: (m.top + H - m.bottom) / 2, transform: `rotate(-90 14 ${(m.top + H - m.bottom) / 2})`,
               "text-anchor": "middle", class: "title" }, svg, yTitle);
  return { y, W, H, m };
}

function xAxis(svg, f, x, lo, hi, title) {
  const axis = el("g", { class: "axis" }, svg);
  for (const t of ticks(lo, hi, 8)) {
    el("line", { x1: x(t), x2: x(t), y1: f.H - f.m.bottom, y2: f.H - f.m.bottom + 4 }, axis);
    el("text", { x: x(t), y: f.H - f.m.bottom + 17, "text-anchor": "middle" }, axis, fmt(t, 4));
  }
  el("text", { x: (f.m.left + f.W - f.m.right) / 2, y: f.H - 6, "text-anchor": "middle", class: "title" }, svg, title);
}

/** One bar per value, its fixed-n interval as a whisker and its anytime interval as an orange box. */
function drawCategories(svg, names, values, fixedLow, fixedHigh, seqLow, seqHigh, xTitle) {
  const rotate = names.length > 10 || Math.max(...names.map((s) => s.length)) > 9;
  svg.setAttribute("height", rotate ? 380 : 330);
  const tops = [...values, ...(fixedHigh || []), ...(seqHigh || [])].filter(Number.isFinite);
  const lows = [0, ...values, ...(fixedLow || []), ...(seqLow || [])].filter(Number.isFinite);
  const f = frame(svg, Math.min(...lows), Math.max(1e-9, ...tops) * 1.05, "share of the population",
                  { bottom: rotate ? 100 : 48 });
  const slot = (f.W - f.m.left - f.m.right) / names.length;
  const xc = (i) => f.m.left + slot * (i + 0.5);
  names.forEach((name, i) => {
    const v = values[i];
    el("rect", { class: "bar", x: xc(i) - slot * 0.3, y: Math.min(f.y(v), f.y(0)), width: slot * 0.6,
                 height: Math.abs(f.y(v) - f.y(0)), "data-value": v }, svg);
    if (seqLow && Number.isFinite(seqLow[i])) {
      el("rect", { class: "anytime", x: xc(i) - slot * 0.22, y: f.y(seqHigh[i]), width: slot * 0.44,
                   height: Math.max(1, f.y(seqLow[i]) - f.y(seqHigh[i])), "data-low": seqLow[i], "data-high": seqHigh[i] }, svg);
    }
    if (fixedLow && Number.isFinite(fixedLow[i])) {
      el("line", { class: "band", x1: xc(i), x2: xc(i), y1: f.y(fixedLow[i]), y2: f.y(fixedHigh[i]) }, svg);
      for (const end of [fixedLow[i], fixedHigh[i]]) {
        el("line", { class: "cap", x1: xc(i) - slot * 0.12, x2: xc(i) + slot * 0.12, y1: f.y(end), y2: f.y(end) }, svg);
      }
    }
    const label = name.length > 16 ? name.slice(0, 15) + "…" : name;
    const text = rotate
      ? el("text", { x: xc(i), y: f.H - f.m.bottom + 12, "text-anchor": "end", class: "xlabel",
                     transform: `rotate(-40 ${xc(i)} ${f.H - f.m.bottom + 12})` }, svg, label)
      : el("text", { x: xc(i), y: f.H - f.m.bottom + 17, "text-anchor": "middle", class: "xlabel" }, svg, label);
    el("title", {}, text, name);
  });
  el("text", { x: (f.m.left + f.W - f.m.right) / 2, y: f.H - 6, "text-anchor": "middle", class: "title" }, svg, xTitle);
}

/** A step path through (xs[i], ys[i]) held until the next point. */
function steps(xs, ys, x, y) {
  return xs.map((v, i) => (i ? "H" + x(v).toFixed(1) + "V" : "M" + x(v).toFixed(1) + ",") + y(ys[i]).toFixed(1)).join("");
}

/** A band between two step curves at xs. */
function bandPath(xs, low, high, x, y) {
  const upper = steps(xs, high, x, y);
  const back = xs.map((_, k) => xs.length - 1 - k).map((i, k) =>
    (k ? "H" + x(xs[i]).toFixed(1) + "V" : "L" + x(xs[i]).toFixed(1) + ",") + y(low[i]).toFixed(1)).join("");
  return upper + back + "Z";
}

function drawCdf(svg, e, fixed, anytime) {
  svg.setAttribute("height", 340);
  const edges = e.edges, lo = edges[0], hi = edges[edges.length - 1];
  const f = frame(svg, 0, 1, "share of the population below x");
  const x = (v) => f.m.left + (v - lo) / (hi - lo) * (f.W - f.m.left - f.m.right);
  if (fixed) el("path", { class: "fixed", d: bandPath(fixed.at, fixed.low, fixed.high, x, f.y) }, svg);
  if (anytime) el("path", { class: "anytime", d: bandPath(anytime.at, anytime.low, anytime.high, x, f.y) }, svg);
  el("path", { class: "cdf", d: steps(edges, [0, ...e.cdf], x, f.y) }, svg);
  xAxis(svg, f, x, lo, hi, "value x");
}

function drawDensity(svg, e) {
  svg.hidden = false;
  svg.removeAttribute("hidden");
  // the density as the estimate's figure draws it: on its display bins (the service's "display"), not bin by bin
  const shown = e.display || { edges: e.edges, density: e.probabilities.map((p, i) => p / (e.edges[i + 1] - e.edges[i])),
                               bins: e.probabilities.length };
  const lows = shown.edges.slice(0, -1), highs = shown.edges.slice(1), lo = lows[0], hi = highs[highs.length - 1];
  const density = shown.density;
  const f = frame(svg, 0, Math.max(1e-12, ...density) * 1.05, "density");
  const x = (v) => f.m.left + (v - lo) / (hi - lo) * (f.W - f.m.left - f.m.right);
  density.forEach((d, i) => el("rect", { class: "bar", x: x(lows[i]), y: f.y(d), width: Math.max(0.5, x(highs[i]) - x(lows[i]) - 0.5),
                                           height: f.y(0) - f.y(d), "data-value": d }, svg));
  xAxis(svg, f, x, lo, hi, "value (the density on " + shown.bins + " equal bins, as the estimate's figure draws it)");
}

function drawMean(svg, e, fixed, anytime, bounds) {
  svg.setAttribute("height", 150);
  const [lo, hi] = bounds;
  const W = +svg.getAttribute("width"), H = 150, m = { left: 62, right: 16 };
  const x = (v) => m.left + (v - lo) / (hi - lo) * (W - m.left - m.right);
  const f = { W, H, m: { left: m.left, right: m.right, bottom: 44 } };
  if (anytime) el("rect", { class: "anytime", x: x(anytime.low), y: 30, width: Math.max(1, x(anytime.high) - x(anytime.low)), height: 40 }, svg);
  if (fixed) {
    el("line", { class: "band", x1: x(fixed.low), x2: x(fixed.high), y1: 50, y2: 50 }, svg);
    for (const end of [fixed.low, fixed.high]) el("line", { class: "cap", x1: x(end), x2: x(end), y1: 42, y2: 58 }, svg);
  }
  el("circle", { class: "dot", cx: x(e.mean), cy: 50, r: 5, "data-value": e.mean }, svg);
  el("line", { x1: m.left, x2: W - m.right, y1: H - 44, y2: H - 44, stroke: "#777" }, svg);
  xAxis(svg, f, x, lo, hi, "mean of the value");
}

/** The first interval of ``quantity`` that is (or is not) anytime-valid, and simultaneous if asked. */
function pick(e, quantity, anytime, simultaneous) {
  return (e.intervals || []).find((i) => i.quantity === quantity && i.anytime_valid === anytime
                                       && (simultaneous === undefined || i.simultaneous === simultaneous)) || null;
}

function legend(kind, anytime) {
  if (kind === "marginals") {
    $("legend").textContent = "each cell: its estimated share (darker: larger) and ± the half-width of its fixed-n interval";
    return;
  }
  const parts = kind === "distribution"
    ? ['<i class="l-cdf"></i>estimate', '<i class="l-fixed-area"></i>fixed-n band']
    : kind === "mean" || kind === "mean_variance"
      ? ['<i class="l-dot"></i>estimate', '<i class="l-fixed"></i>fixed-n interval']
      : ['<i class="l-est"></i>estimate', '<i class="l-fixed"></i>fixed-n interval'];
  if (anytime) parts.push('<i class="l-any"></i>anytime (confidence sequence)');
  $("legend").innerHTML = parts.join(" ");
}

function fillValues(header, rows) {
  const table = $("values");
  table.tHead.innerHTML = "";
  const head = table.tHead.insertRow();
  for (const h of header) { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); }
  const body = table.tBodies[0];
  body.textContent = "";
  for (const row of rows) {
    const tr = body.insertRow();
    row.forEach((cell, i) => { const td = tr.insertCell(); td.textContent = cell; if (i > 0) td.className = "num"; });
  }
}

function categoryView(e, level) {
  const fixed = pick(e, "frequency", false), anytime = pick(e, "frequency", true, true);
  const names = e.kind === "heavy_hitters" ? e.labels : (e.labels || e.items.map(String));  // items: frequency, key-value
  let order = names.map((_, i) => i);
  if (names.length > MAX_BARS) order = order.sort((a, b) => e.frequencies[b] - e.frequencies[a]).slice(0, MAX_BARS);
  const pickAll = (values) => (values ? order.map((i) => values[i]) : null);
  drawCategories($("estimate-chart"), pickAll(names), pickAll(e.frequencies), fixed && pickAll(fixed.low),
                 fixed && pickAll(fixed.high), anytime && pickAll(anytime.low), anytime && pickAll(anytime.high),
                 e.kind === "heavy_hitters" ? "heavy hitter (most frequent first)" : e.means ? "key" : "value");
  const means = e.means || null;  // a key-value estimate: each key's mean value beside its frequency
  fillValues([means ? "key" : "value", "estimate", `fixed-n ${level}%`, `anytime ${level}% (all values at once)`,
              ...(means ? ["mean value"] : [])],
             order.map((i) => [names[i], fmt(e.frequencies[i]), fixed ? interval(fixed.low[i], fixed.high[i]) : "-",
                               anytime ? (anytime.empty ? "empty" : interval(anytime.low[i], anytime.high[i])) : "-",
                               ...(means ? [means[i] === null ? "not estimated" : fmt(means[i])] : [])]));
  $("summary").textContent = names.length > MAX_BARS ? `the ${MAX_BARS} most frequent of ${names.length} values. ` : "";
  if (e.band && e.band.simultaneous_over) {
    $("summary").textContent += `The fixed-n intervals hold for all ${e.band.simultaneous_over} candidates of the last round at once.`;
  }
}

function distributionView(e, level) {
  const fixed = pick(e, "cdf", false, true), anytime = pick(e, "cdf", true);
  drawCdf($("estimate-chart"), e, fixed, anytime);
  drawDensity($("density-chart"), e);
  const meanFixed = pick(e, "mean", false), meanAny = pick(e, "mean", true);
  const qFixed = pick(e, "quantile", false), qAny = pick(e, "quantile", true);
  const meanName = e.period != null ? "circular mean" : "mean";  // a circle (opm-circular): the mean direction
  const rows = [[meanName, fmt(e.mean), meanFixed ? interval(meanFixed.low, meanFixed.high) : "-",
                 meanAny ? interval(meanAny.low, meanAny.high) : "-"]];
  (e.quantiles ? e.quantiles.q : []).forEach((q, i) => rows.push([
    `quantile ${q}`, fmt(e.quantiles.values[i]), qFixed ? interval(qFixed.low[i], qFixed.high[i]) : "-",
    qAny ? interval(qAny.low[i], qAny.high[i]) : "-"]));
  fillValues(["", "estimate", `fixed-n ${level}%`, `anytime ${level}%`], rows);
  $("summary").textContent = meanName + " " + fmt(e.mean) + ", median " + fmt(e.median)
    + (fixed ? "; fixed-n band: " + fixed.method : "; no fixed-n band (?replicates=0)");
}

function meanView(e, level, config) {
  const fixed = pick(e, "mean", false), anytime = pick(e, "mean", true);
  const bounds = (config && config.bounds) || e.bounds || [Math.min(e.mean, fixed ? fixed.low : e.mean) - 1,
                                                           Math.max(e.mean, fixed ? fixed.high : e.mean) + 1];
  drawMean($("estimate-chart"), e, fixed, anytime, bounds);
  fillValues(["", "estimate", `fixed-n ${level}%`, `anytime ${level}%`],
             [["mean", fmt(e.mean), fixed ? interval(fixed.low, fixed.high) : "-", anytime ? interval(anytime.low, anytime.high) : "-"]]);
  $("summary").textContent = "mean " + fmt(e.mean) + " " + (fixed ? interval(fixed.low, fixed.high) : "");
}

let CONFIG = null;
let IN_ROUNDS = false;  // a campaign in rounds: its view is refreshRounds (._dashboard_rounds)

function drawEstimate(data) {
  const svg = $("estimate-chart");
  svg.textContent = "";
  $("attributes").textContent = "";
  $("density-chart").textContent = "";
  $("density-chart").setAttribute("hidden", "");
  const e = data.estimate;
  if (!e) {
    $("summary").textContent = "no report yet"; $("band-note").textContent = ""; $("legend").textContent = "";
    fillValues([], []); $("meaning").textContent = ""; $("stop").textContent = "";
    $("notes").textContent = ""; $("notes").hidden = true;
    return;
  }
  // what the estimate says of itself (CP's uniform estimate when no item stands out of the noise: docs/frequency.md)
  $("notes").textContent = (e.notes || []).join(" ");
  $("notes").hidden = !(e.notes && e.notes.length);
  const u = e.uncertainty || {};
  const anytime = (e.intervals || []).some((i) => i.anytime_valid);
  const level = Math.round(100 * ((e.intervals && e.intervals.length) ? e.intervals[0].level : 0.95));
  legend(e.kind, anytime);
  svg.toggleAttribute("hidden", e.kind === "multi" || e.kind === "marginals");  // drawn per attribute or marginal
  if (e.kind === "frequency" || e.kind === "heavy_hitters" || e.kind === "key_value") categoryView(e, level);
  else if (e.kind === "distribution") distributionView(e, level);
  else if (e.kind === "multi") multiView(e, level);
  else if (e.kind === "marginals") marginalsView(e, level);
  else meanView(e, level, CONFIG);
  $("band-note").textContent = `(${level}% fixed-n and anytime)`;
  $("meaning").textContent = (u.fixed_n_note ? u.fixed_n_note[0].toUpperCase() + u.fixed_n_note.slice(1) + ". " : "")
    + (u.bootstrap ? `Fixed-n band: ${u.bootstrap.replicates} bootstrap replicates at ${fmt(100 * u.bootstrap.level)}%, `
                     + u.bootstrap.stream + ". " : "")
    + (anytime ? "Anytime: holds at every number of reports at once, however often it is looked at ("
                 + u.sequence_method + ")." : "Anytime: none" + (u.sequence_unavailable ? ": " + u.sequence_unavailable : "") + ".")
    + (u.note ? " Note: " + u.note + "." : "");  // e.g. an empty anytime band (no distribution fits: a poisoning signal)
  $("stop-row").hidden = !anytime;
  const stop = u.stop;
  $("stop").textContent = !stop ? "" : stop.reached
    ? `narrower already (width ${fmt(stop.width, 3)})`
    : stop.n === null ? `width ${fmt(stop.width, 3)}; not within 10^10 reports`
      : `width ${fmt(stop.width, 3)}; at about n = ${stop.n.toLocaleString("en")} if the estimate stays where it is`;
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

function drawHistory(points) {
  const svg = $("history-chart");
  svg.textContent = "";
  if (!points.length) return;
  const times = points.map((p) => Date.parse(p.time)), n = points.map((p) => p.n);
  const span = Math.max(times[times.length - 1] - times[0], 60000);  // at least a minute, so one batch shows
  const t0 = times[0] - 0.05 * span, t1 = times[0] + 1.05 * span;
  const f = frame(svg, 0, Math.max(1, ...n) * 1.05, "reports (n)", { right: 40 });
  const x = (t) => f.m.left + (t - t0) / (t1 - t0) * (f.W - f.m.left - f.m.right);
  const path = points.map((p, i) => (i ? "L" : "M") + x(times[i]).toFixed(1) + "," + f.y(n[i]).toFixed(1)).join(" ");
  el("path", { class: "line", d: path, "data-last-n": n[n.length - 1] }, svg);
  if (points.length <= 50) points.forEach((p, i) => el("circle", { class: "dot", cx: x(times[i]), cy: f.y(n[i]), r: 3 }, svg));
  const axis = el("g", { class: "axis" }, svg);
  for (let k = 0; k <= 4; k++) {
    const t = t0 + (k / 4) * (t1 - t0);
    el("line", { x1: x(t), x2: x(t), y1: f.H - f.m.bottom, y2: f.H - f.m.bottom + 4 }, axis);
    el("text", { x: x(t), y: f.H - f.m.bottom + 17, "text-anchor": "middle" }, axis, new Date(t).toISOString().slice(11, 19));
  }
  el("text", { x: (f.m.left + f.W - f.m.right) / 2, y: f.H - 6, "text-anchor": "middle", class: "title" }, svg,
     "time (UTC) from " + new Date(t0).toISOString().slice(0, 10));
}

function drawDiagnostics(d) {  // the service's own line (diagnostics.summary), as dpdist campaign estimate prints it
  const node = $("diagnostics");
  node.textContent = d ? d.summary || "poisoning test: " + (d.detail || "none") : "poisoning test: none";
  node.style.color = d && d.flagged ? "#b00" : "";
}

// the page is {service}/campaigns/{id}/dashboard; {service} may carry a reverse proxy's path prefix
const SERVICE = location.pathname.slice(0, location.pathname.lastIndexOf("/campaigns/"));

function estimateQuery() {
  const params = new URLSearchParams(search);
  const width = parseFloat($("width").value);
  if (width > 0) params.set("width", String(width));
  return params.toString() ? "?" + params.toString() : "";
}

// what epsilon buys (GET .../explain, in the service's plain words): at the campaign's n so far, asked again
// when n has doubled (the service caches each prediction, and rounds n to 1-2-5)
let explainedAt = null;

async function showWhatEpsilonBuys(base, n) {
  if (explainedAt !== null && n < 2 * explainedAt) return;
  explainedAt = Math.max(n, 1);
  let text;
  try {
    const response = await fetch(base + "/explain", { cache: "no-store" });
    const body = await response.json();
    text = response.ok ? body.plain.join(" ") : "no prediction for this protocol (" + body.detail + ")";
  } catch (error) {
    text = "no prediction now (" + String(error.message || error) + ")";
  }
  if (text === "") return;
  $("buys-text").textContent = text;
  $("buys").hidden = false;
}

function loaded() {
  $("error").textContent = "";
  $("updated").textContent = new Date().toISOString().slice(11, 19) + " UTC";
  document.body.dataset.loaded = "true";
}

async function refresh() {
  const base = SERVICE + "/api/campaigns/" + encodeURIComponent(CAMPAIGN);
  try {
    if (CONFIG === null) {
      const published = await getJson(base + "/config");
      CONFIG = published.config;
      IN_ROUNDS = Boolean(published.rounds);
    }
    if (IN_ROUNDS) {  // the rounds' own campaigns count the reports (._dashboard_rounds)
      await refreshRounds(base);
      loaded();
      return;
    }
    const [data, history] = await Promise.all([getJson(base + "/estimate" + estimateQuery()), getJson(base + "/history")]);
    for (const key of ["state", "protocol", "epsilon", "n", "batches"]) $(key).textContent = String(data[key]);
    $("guarantee").textContent = data.guarantee || "-";
    showWhatEpsilonBuys(base, data.n);  // not awaited: the estimate does not wait for a prediction
    fillTable("rejected", data.rejected);
    fillTable("refused", data.refused_batches);
    drawEstimate(data);
    drawDiagnostics(data.diagnostics);
    drawHistory(history.history);
    loaded();
  } catch (error) {
    $("error").textContent = String(error.message || error);
  }
}

refresh();
$("width").addEventListener("change", refresh);
// a hidden tab does not poll: the server computes an estimate once per change anyway,
// but a tab nobody looks at should not keep a connection busy; it refreshes when shown again
setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
"""


def dashboard_html(campaign_id: str) -> str:
    """The page for ``campaign_id`` (escaped: the id only ever appears as text or a JSON string)."""
    script = _SCRIPT.replace("__CAMPAIGN__", json.dumps(campaign_id).replace("<", "\\u003c")) + MULTI_SCRIPT + ROUNDS_SCRIPT
    return (_PAGE.replace("__STYLE__", _STYLE + MULTI_STYLE).replace("__SCRIPT__", script)
            .replace("__TITLE__", html.escape(campaign_id)))
