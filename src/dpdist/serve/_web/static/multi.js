// @ts-check
/**
 * The dashboard's views of the multi-attribute kinds: each attribute's estimate, and marginal heat maps.
 *
 * - ``multi`` (``spl``, ``smp``, ``rsfd``, ``rsrfd``, ``multi-auto``): one chart per attribute under ``#attributes``,
 *   drawn as the 1-D kinds are (bars with the fixed-n interval of a categorical attribute, the CDF with its band of a
 *   numerical one, a mean on its axis), and one table of every attribute's values with their intervals;
 * - ``marginals`` (``calm``, ``hdg``): a heat map per 2-way marginal or grid (each cell coloured by its frequency,
 *   annotated with it and its 95 % interval's half-width), bars with intervals for a 1-way one, and the table of the
 *   first marginal's cells.
 * @module
 */

import { drawCategories, drawCdf, drawMean, el } from "./charts.js";
import { $, fillValues } from "./dom.js";
import { fmt, interval, pick } from "./format.js";

/** At most this many marginals are drawn. */
const MAX_MAPS = 6;

/**
 * A fresh chart for one attribute or marginal under #attributes, with its heading.
 * @param {string} title
 * @param {string} key
 * @param {number} height
 * @returns {Element}
 */
function attributeChart(title, key, height) {
  const box = $("attributes");
  const h = document.createElement("h3");
  h.textContent = title;
  box.appendChild(h);
  return el("svg", { width: 900, height: height, role: "img", "aria-label": title, class: "attribute-chart",
                     "data-attribute": key }, box);
}

/**
 * The table rows of one attribute's estimate ``e``.
 * @param {string} name
 * @param {any} e
 * @param {number} level
 * @returns {string[][]}
 */
function attributeRows(name, e, level) {
  if (e.kind === "frequency") {
    const fixed = pick(e, "frequency", false);
    /** @type {string[]} */
    const names = e.labels || e.items.map(String);
    return names.map((label, i) => [name + ": " + label, fmt(e.frequencies[i]),
                                    fixed ? interval(fixed.low[i], fixed.high[i]) : "-"]);
  }
  const mean = pick(e, "mean", false);
  const rows = [[name + ": mean", fmt(e.mean), mean ? interval(mean.low, mean.high) : "-"]];
  if (e.kind === "distribution") rows.push([name + ": median", fmt(e.median), "-"]);
  return rows;
}

/**
 * kind "multi": one chart per attribute, as its own kind is drawn, and one table of all their values.
 * @param {any} e
 * @param {number} level
 * @param {any} config  the campaign's public config (its attributes' bounds)
 */
export function multiView(e, level, config) {
  const rows = [];
  for (const [name, sub] of Object.entries(/** @type {Record<string, any>} */ (e.attributes))) {
    if (sub.kind === "frequency") {
      const fixed = pick(sub, "frequency", false);
      const names = sub.labels || sub.items.map(String);
      drawCategories(attributeChart(name + " (" + sub.method + ", " + sub.n.toLocaleString("en") + " reports)", name, 330),
                     names, sub.frequencies, fixed && fixed.low, fixed && fixed.high, null, null, name);
    } else if (sub.kind === "distribution") {
      drawCdf(attributeChart(name + " (" + sub.method + ")", name, 340), sub, pick(sub, "cdf", false, true), null);
    } else if (sub.kind === "mean" || sub.kind === "mean_variance") {
      const attribute = (config && config.attributes || []).find((/** @type {any} */ a) => a.name === name);
      const fixed = pick(sub, "mean", false);
      drawMean(attributeChart(name + " (" + sub.method + ")", name, 150), sub, fixed, null,
               (attribute && attribute.bounds) || [sub.mean - 1, sub.mean + 1]);
    }
    rows.push(...attributeRows(name, sub, level));
  }
  fillValues(["attribute: value", "estimate", `fixed-n ${level}%`], rows);
  $("summary").textContent = Object.keys(e.attributes).length + " attributes, each estimated from its reports.";
}

/**
 * White to dark blue by ``t`` in [0, 1] (an SVG fill attribute: no style attribute under the page's CSP).
 * @param {number} t
 */
function shade(t) {
  const c = Math.max(0, Math.min(1, t));
  const mix = (/** @type {number} */ a, /** @type {number} */ b) => Math.round(a + (b - a) * c);
  return `rgb(${mix(247, 31)},${mix(251, 78)},${mix(255, 140)})`;
}

/**
 * A 2-way marginal as a heat map: row labels down, column labels across, each cell its frequency and +- half-width.
 * @param {Element} svg
 * @param {any} m
 */
function drawHeatMap(svg, m) {
  const [rows, cols] = m.shape, [rowLabels, colLabels] = m.labels;
  const cell = Math.max(16, Math.min(64, Math.floor(700 / cols), Math.floor(420 / rows)));
  const left = 110, top = 20, bottom = 60;
  svg.setAttribute("height", String(top + rows * cell + bottom));
  svg.setAttribute("width", String(Math.max(420, left + cols * cell + 20)));
  const high = Math.max(1e-12, ...m.frequencies);
  const annotate = cell >= 36;
  for (let r = 0; r < rows; r++) {
    el("text", { x: left - 6, y: top + (r + 0.5) * cell + 4, "text-anchor": "end", class: "ylabel" }, svg, String(rowLabels[r]));
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c, f = m.frequencies[i], g = el("g", { class: "cell" }, svg);
      const half = m.high && m.low && Number.isFinite(m.high[i]) ? (m.high[i] - m.low[i]) / 2 : null;
      el("rect", { x: left + c * cell, y: top + r * cell, width: cell - 1, height: cell - 1, fill: shade(f / high),
                   "data-value": f, "data-half-width": half === null ? "" : half }, g);
      const ink = f / high > 0.55 ? " light" : "";
      if (annotate) {
        el("text", { x: left + (c + 0.5) * cell, y: top + (r + 0.45) * cell, "text-anchor": "middle", class: "value" + ink }, g, fmt(f, 2));
        if (half !== null) el("text", { x: left + (c + 0.5) * cell, y: top + (r + 0.8) * cell, "text-anchor": "middle",
                                        class: "se" + ink }, g, "±" + fmt(half, 1));
      }
      el("title", {}, g, `${m.attributes[0]}=${rowLabels[r]}, ${m.attributes[1]}=${colLabels[c]}: ${fmt(f)}`
                         + (half === null ? "" : ` ± ${fmt(half, 2)}`));
    }
  }
  for (let c = 0; c < cols; c++) {
    const x = left + (c + 0.5) * cell, y = top + rows * cell + 12;
    el("text", { x, y, "text-anchor": "end", class: "xlabel", transform: `rotate(-40 ${x} ${y})` }, svg, String(colLabels[c]));
  }
  el("text", { x: left + cols * cell / 2, y: top + rows * cell + bottom - 4, "text-anchor": "middle", class: "title" }, svg,
     m.attributes[1]);
  el("text", { x: 14, y: top + rows * cell / 2, transform: `rotate(-90 14 ${top + rows * cell / 2})`, "text-anchor": "middle",
               class: "title" }, svg, m.attributes[0]);
}

/**
 * kind "marginals": a heat map per 2-way marginal (bars for a 1-way one) and the first marginal's cells in the table.
 * @param {any} e
 * @param {number} level
 */
export function marginalsView(e, level) {
  const shown = e.marginals.slice(0, MAX_MAPS);
  for (const m of shown) {
    const title = m.attributes.join(" × ") + (m.shape.length === 2 ? " (frequency ± 95% half-width)" : "");
    if (m.shape.length === 2) drawHeatMap(attributeChart(title, m.attributes.join(","), 200), m);
    else drawCategories(attributeChart(title, m.attributes.join(","), 330), m.labels[0].map(String), m.frequencies,
                        m.low, m.high, null, null, m.attributes[0]);
  }
  const first = e.marginals[0];
  /** @type {string[]} */
  const names = first.shape.length === 2
    ? first.labels[0].flatMap((/** @type {any} */ a) => first.labels[1].map((/** @type {any} */ b) => `${a}, ${b}`))
    : first.labels[0].map(String);
  fillValues([first.attributes.join(", "), "estimate", `fixed-n ${level}%`],
             names.map((name, i) => [name, fmt(first.frequencies[i]), first.low ? interval(first.low[i], first.high[i]) : "-"]));
  $("summary").textContent = `${e.marginals.length} marginal(s)` + (e.marginals.length > MAX_MAPS ? `, the first ${MAX_MAPS} drawn` : "")
    + (e.postprocess && e.postprocess !== "none" ? `; post-processed (${e.postprocess})` : "") + ".";
}
