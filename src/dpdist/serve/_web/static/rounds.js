// @ts-check
/**
 * The dashboard's view of a campaign in rounds (adaptive LDP quantiles, docs/explanation/adaptive-quantiles.md).
 *
 * The parent campaign counts no report itself: every round is a campaign of its own, ``{campaign}-r{k}``.  The view
 * reads ``GET .../rounds`` (admin) and shows the facts summed over the rounds (reports, rejected reports and refused
 * batches by reason) and the round the campaign is in; the quantiles released so far, each with its interval on the
 * value's axis, and their table; a table of the rounds (each round's campaign links to its own dashboard); reports
 * over time: the rounds' histories one after the other, n summed (one request per refresh, whatever the rounds).
 * @module
 */

import { drawHistory, el, xAxis } from "./charts.js";
import { $, fillTable, fillValues } from "./dom.js";
import { drawEstimate } from "./estimate.js";
import { fmt, interval } from "./format.js";
import { getJson } from "./token.js";

/**
 * The quantiles of a release on the value's axis: one row per quantile, its interval and its estimate.
 * @param {any} e
 * @param {number[]} bounds
 */
function quantilesView(e, bounds) {
  const svg = $("estimate-chart");
  const fixed = (e.intervals || []).find((/** @type {any} */ i) => i.quantity === "quantile") || null;
  const rowHeight = 30, H = 70 + rowHeight * e.q.length;
  svg.setAttribute("height", String(H));
  const [lo, hi] = bounds;
  const W = +svg.getAttribute("width"), m = { left: 90, right: 16 };
  const x = (/** @type {number} */ v) => m.left + (v - lo) / (hi - lo) * (W - m.left - m.right);
  e.q.forEach((/** @type {number} */ q, /** @type {number} */ i) => {
    const y = 24 + rowHeight * i;
    el("text", { x: m.left - 8, y: y + 4, "text-anchor": "end" }, svg, "q = " + fmt(q, 3));
    if (fixed) {
      el("line", { class: "band", x1: x(fixed.low[i]), x2: x(fixed.high[i]), y1: y, y2: y, "data-low": fixed.low[i],
                   "data-high": fixed.high[i] }, svg);
      for (const end of [fixed.low[i], fixed.high[i]]) el("line", { class: "cap", x1: x(end), x2: x(end), y1: y - 7, y2: y + 7 }, svg);
    }
    el("circle", { class: "dot quantile", cx: x(e.values[i]), cy: y, r: 5, "data-q": q, "data-value": e.values[i] }, svg);
  });
  el("line", { x1: m.left, x2: W - m.right, y1: H - 44, y2: H - 44, stroke: "#777" }, svg);
  xAxis(svg, { W, H, m: { left: m.left, right: m.right, bottom: 44 } }, x, lo, hi, "value");
  const level = Math.round(100 * (fixed ? fixed.level : e.level || 0.95));
  $("legend").innerHTML = '<i class="l-dot"></i>estimate<i class="l-fixed"></i>' + level + "% interval";
  $("band-note").textContent = `(${level}% intervals)`;
  $("summary").textContent = e.q.map((/** @type {number} */ q, /** @type {number} */ i) => "q" + fmt(q, 3) + " " + fmt(e.values[i])).join(", ");
  fillValues(["quantile", "estimate", level + "% interval"],
             e.q.map((/** @type {number} */ q, /** @type {number} */ i) => [fmt(q, 3), fmt(e.values[i]),
                                                                             fixed ? interval(fixed.low[i], fixed.high[i]) : "-"]));
  $("meaning").textContent = fixed ? "Interval: " + fixed.method + "." : "";
}

/**
 * The table of rounds under #attributes: each round's campaign (a link to its dashboard, the token in its fragment),
 * state, reports of its size, cuts.
 * @param {any} report
 * @param {string} service
 * @param {string} token
 */
function roundsTable(report, service, token) {
  const box = $("attributes");
  const heading = document.createElement("h3");
  heading.textContent = "Round " + report.round + " of " + report.of;
  box.appendChild(heading);
  const table = document.createElement("table");
  table.id = "rounds";
  const head = table.createTHead().insertRow();
  for (const name of ["round", "campaign", "state", "reports", "cuts asked"]) head.appendChild(document.createElement("th")).textContent = name;
  const body = table.createTBody();
  for (const r of report.rounds) {
    const row = body.insertRow();
    row.dataset.round = r.round;
    row.insertCell().textContent = String(r.round);
    const link = document.createElement("a");
    link.href = service + "/campaigns/" + encodeURIComponent(r.campaign) + "/dashboard#token=" + encodeURIComponent(token);
    link.textContent = r.campaign;
    row.insertCell().appendChild(link);
    row.insertCell().textContent = r.state;
    row.insertCell().textContent = r.n + " of " + r.size;
    row.insertCell().textContent = String(r.cuts.length);
  }
  box.appendChild(table);
}

/**
 * Counts by reason summed over the rounds (``key``: "rejected" or "refused_batches").
 * @param {any[]} rounds
 * @param {string} key
 */
function summed(rounds, key) {
  /** @type {Record<string, number>} */
  const total = {};
  for (const r of rounds) for (const [reason, count] of Object.entries(r[key])) total[reason] = (total[reason] || 0) + Number(count);
  return total;
}

/**
 * Refresh the page of a campaign in rounds (``api``: its API URL).
 * @param {string} api
 * @param {string} service
 * @param {string} token
 */
export async function refreshRounds(api, service, token) {
  const [data, report] = await Promise.all([getJson(api + "/estimate", token), getJson(api + "/rounds", token)]);
  const n = report.rounds.reduce((/** @type {number} */ total, /** @type {any} */ r) => total + r.n, 0);
  $("state").textContent = data.state;
  $("protocol").textContent = "threshold, in rounds (round " + report.round + " of " + report.of + ")";
  $("epsilon").textContent = String(data.epsilon);
  $("n").textContent = String(n);
  $("batches").textContent = "-";
  $("guarantee").textContent = data.guarantee + "; each device answers one round (parallel composition)";
  fillTable("rejected", summed(report.rounds, "rejected"));
  fillTable("refused", summed(report.rounds, "refused_batches"));
  drawEstimate({ estimate: null }, null);
  $("stop-row").hidden = true;
  if (report.estimate) quantilesView(report.estimate, report.plan.bounds);
  roundsTable(report, service, token);
  $("diagnostics").textContent = "poisoning test: none for a campaign in rounds";
  drawHistory($("history-chart"), report.history);
}
