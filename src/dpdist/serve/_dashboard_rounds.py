"""The dashboard's view of a campaign in rounds (adaptive LDP quantiles, docs/adaptive_quantiles.md).

Part of the dashboard page's script (:mod:`._dashboard` appends :data:`ROUNDS_SCRIPT` and
calls ``refreshRounds`` instead of its own refresh when the campaign's public config has
``"rounds"``). The parent campaign counts no report itself: every round is a campaign of
its own, ``{campaign}-r{k}``. The view reads ``GET .../rounds`` (admin) and shows

* the facts summed over the rounds (reports, rejected reports and refused batches by
  reason), and the round the campaign is in;
* the quantiles released from the rounds so far, each with its interval on the value's
  axis (the release's own interval, whose method the note names), and their table;
* a table of the rounds: each round's campaign (a link to its own dashboard), state,
  reports of its group size, and how many cuts it asked;
* reports over time: the rounds' histories one after the other, n summed (the ``history`` of
  ``GET .../rounds``: one request per refresh, whatever the number of rounds).

The drawing helpers (``el``, ``frame``, ``xAxis``, ``fmt``, ``interval``, ``fillValues``,
``fillTable``, ``drawHistory``, ``getJson``) are the page's own.
"""

from __future__ import annotations

__all__ = ["ROUNDS_SCRIPT"]

ROUNDS_SCRIPT = r"""
/** The quantiles of a release on the value's axis: one row per quantile, its interval and its estimate. */
function quantilesView(e, bounds) {
  const svg = $("estimate-chart");
  const fixed = (e.intervals || []).find((i) => i.quantity === "quantile") || null;
  const rowHeight = 30, H = 70 + rowHeight * e.q.length;
  svg.setAttribute("height", H);
  const [lo, hi] = bounds;
  const W = +svg.getAttribute("width"), m = { left: 90, right: 16 };
  const x = (v) => m.left + (v - lo) / (hi - lo) * (W - m.left - m.right);
  e.q.forEach((q, i) => {
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
  $("summary").textContent = e.q.map((q, i) => "q" + fmt(q, 3) + " " + fmt(e.values[i])).join(", ");
  fillValues(["quantile", "estimate", level + "% interval"],
             e.q.map((q, i) => [fmt(q, 3), fmt(e.values[i]), fixed ? interval(fixed.low[i], fixed.high[i]) : "-"]));
  $("meaning").textContent = fixed ? "Interval: " + fixed.method + "." : "";
}

/** The table of rounds under #attributes: each round's campaign (its dashboard), state, reports of its size, cuts. */
function roundsTable(report) {
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
    link.href = SERVICE + "/campaigns/" + encodeURIComponent(r.campaign) + "/dashboard" + location.hash;
    link.textContent = r.campaign;
    row.insertCell().appendChild(link);
    row.insertCell().textContent = r.state;
    row.insertCell().textContent = r.n + " of " + r.size;
    row.insertCell().textContent = String(r.cuts.length);
  }
  box.appendChild(table);
}

/** Counts by reason summed over the rounds (``key``: "rejected" or "refused_batches"). */
function summed(rounds, key) {
  const total = {};
  for (const r of rounds) for (const [reason, count] of Object.entries(r[key])) total[reason] = (total[reason] || 0) + count;
  return total;
}

async function refreshRounds(base) {
  const [data, report] = await Promise.all([getJson(base + "/estimate"), getJson(base + "/rounds")]);
  const n = report.rounds.reduce((total, r) => total + r.n, 0);
  $("state").textContent = data.state;
  $("protocol").textContent = "threshold, in rounds (round " + report.round + " of " + report.of + ")";
  $("epsilon").textContent = String(data.epsilon);
  $("n").textContent = String(n);
  $("batches").textContent = "-";
  $("guarantee").textContent = data.guarantee + "; each device answers one round (parallel composition)";
  fillTable("rejected", summed(report.rounds, "rejected"));
  fillTable("refused", summed(report.rounds, "refused_batches"));
  drawEstimate({ estimate: null });
  $("stop-row").hidden = true;
  if (report.estimate) quantilesView(report.estimate, report.plan.bounds);
  roundsTable(report);
  $("diagnostics").textContent = "poisoning test: none for a campaign in rounds";
  drawHistory(report.history);
}
"""
