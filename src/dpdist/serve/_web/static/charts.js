// @ts-check
/**
 * The dashboard's SVG charts, drawn with labelled axes and ticks: bars with intervals, a CDF with its bands, a
 * density, a mean on its axis, and the reports over time.
 * @module
 */

import { fmt, ticks } from "./format.js";

const SVG = "http://www.w3.org/2000/svg";

/**
 * A new SVG element ``name`` with ``attrs`` (and ``text``) appended to ``parent``.
 * @param {string} name
 * @param {Record<string, string | number>} attrs
 * @param {Element} parent
 * @param {string} [text]
 * @returns {any}
 */
export function el(name, attrs, parent, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}

/**
 * A chart's frame: its size and margins.
 * @typedef {{W: number, H: number, m: {left: number, right: number, top?: number, bottom: number},
 *            y?: (v: number) => number}} Frame
 */

/**
 * Plot frame: scales, grid, y axis with ticks and title; returns {y, W, H, m}.
 * @param {Element} svg
 * @param {number} yLo
 * @param {number} yHi
 * @param {string} yTitle
 * @param {Partial<Frame["m"]>} [margins]
 * @returns {{y: (v: number) => number, W: number, H: number, m: {left: number, right: number, top: number, bottom: number}}}
 */
export function frame(svg, yLo, yHi, yTitle, margins) {
  const W = +(svg.getAttribute("width") || 0), H = +(svg.getAttribute("height") || 0);
  const m = Object.assign({ left: 62, right: 16, top: 14, bottom: 44 }, margins || {});
  const y = (/** @type {number} */ v) => H - m.bottom - (v - yLo) / (yHi - yLo) * (H - m.top - m.bottom);
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

/**
 * The x axis of frame ``f``: ticks over [lo, hi] placed by ``x``, and its title.
 * @param {Element} svg
 * @param {Frame} f
 * @param {(v: number) => number} x
 * @param {number} lo
 * @param {number} hi
 * @param {string} title
 */
export function xAxis(svg, f, x, lo, hi, title) {
  const axis = el("g", { class: "axis" }, svg);
  for (const t of ticks(lo, hi, 8)) {
    el("line", { x1: x(t), x2: x(t), y1: f.H - f.m.bottom, y2: f.H - f.m.bottom + 4 }, axis);
    el("text", { x: x(t), y: f.H - f.m.bottom + 17, "text-anchor": "middle" }, axis, fmt(t, 4));
  }
  el("text", { x: (f.m.left + f.W - f.m.right) / 2, y: f.H - 6, "text-anchor": "middle", class: "title" }, svg, title);
}

/**
 * One bar per value, its fixed-n interval as a whisker and its anytime interval as an orange box.
 * @param {Element} svg
 * @param {string[]} names
 * @param {number[]} values
 * @param {number[] | null} fixedLow
 * @param {number[] | null} fixedHigh
 * @param {number[] | null} seqLow
 * @param {number[] | null} seqHigh
 * @param {string} xTitle
 */
export function drawCategories(svg, names, values, fixedLow, fixedHigh, seqLow, seqHigh, xTitle) {
  const rotate = names.length > 10 || Math.max(...names.map((s) => s.length)) > 9;
  svg.setAttribute("height", rotate ? "380" : "330");
  const tops = [...values, ...(fixedHigh || []), ...(seqHigh || [])].filter(Number.isFinite);
  const lows = [0, ...values, ...(fixedLow || []), ...(seqLow || [])].filter(Number.isFinite);
  const f = frame(svg, Math.min(...lows), Math.max(1e-9, ...tops) * 1.05, "share of the population",
                  { bottom: rotate ? 100 : 48 });
  const slot = (f.W - f.m.left - f.m.right) / names.length;
  const xc = (/** @type {number} */ i) => f.m.left + slot * (i + 0.5);
  names.forEach((name, i) => {
    const v = values[i];
    el("rect", { class: "bar", x: xc(i) - slot * 0.3, y: Math.min(f.y(v), f.y(0)), width: slot * 0.6,
                 height: Math.abs(f.y(v) - f.y(0)), "data-value": v }, svg);
    if (seqLow && seqHigh && Number.isFinite(seqLow[i])) {
      el("rect", { class: "anytime", x: xc(i) - slot * 0.22, y: f.y(seqHigh[i]), width: slot * 0.44,
                   height: Math.max(1, f.y(seqLow[i]) - f.y(seqHigh[i])), "data-low": seqLow[i], "data-high": seqHigh[i] }, svg);
    }
    if (fixedLow && fixedHigh && Number.isFinite(fixedLow[i])) {
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

/**
 * A step path through (xs[i], ys[i]) held until the next point.
 * @param {number[]} xs
 * @param {number[]} ys
 * @param {(v: number) => number} x
 * @param {(v: number) => number} y
 */
function steps(xs, ys, x, y) {
  return xs.map((v, i) => (i ? "H" + x(v).toFixed(1) + "V" : "M" + x(v).toFixed(1) + ",") + y(ys[i]).toFixed(1)).join("");
}

/**
 * A band between two step curves at xs.
 * @param {number[]} xs
 * @param {number[]} low
 * @param {number[]} high
 * @param {(v: number) => number} x
 * @param {(v: number) => number} y
 */
function bandPath(xs, low, high, x, y) {
  const upper = steps(xs, high, x, y);
  const back = xs.map((_, k) => xs.length - 1 - k).map((i, k) =>
    (k ? "H" + x(xs[i]).toFixed(1) + "V" : "L" + x(xs[i]).toFixed(1) + ",") + y(low[i]).toFixed(1)).join("");
  return upper + back + "Z";
}

/**
 * A distribution's CDF with its fixed-n band (grey) and anytime band (orange), when it has them.
 * @param {Element} svg
 * @param {{edges: number[], cdf: number[]}} e
 * @param {import("./format.js").Interval | null} fixed
 * @param {import("./format.js").Interval | null} anytime
 */
export function drawCdf(svg, e, fixed, anytime) {
  svg.setAttribute("height", "340");
  const edges = e.edges, lo = edges[0], hi = edges[edges.length - 1];
  const f = frame(svg, 0, 1, "share of the population below x");
  const x = (/** @type {number} */ v) => f.m.left + (v - lo) / (hi - lo) * (f.W - f.m.left - f.m.right);
  if (fixed) el("path", { class: "fixed", d: bandPath(/** @type {number[]} */ (fixed.at), fixed.low, fixed.high, x, f.y) }, svg);
  if (anytime) el("path", { class: "anytime", d: bandPath(/** @type {number[]} */ (anytime.at), anytime.low, anytime.high, x, f.y) }, svg);
  el("path", { class: "cdf", d: steps(edges, [0, ...e.cdf], x, f.y) }, svg);
  xAxis(svg, f, x, lo, hi, "value x");
}

/**
 * A distribution's density as the estimate's figure draws it (the service's ``display``): with a band, the density
 * with the fewest peaks inside it, on bars as wide as the band allows; without, on at most 40 equal bins.  Never bin
 * by bin: the estimate's own bins show peaks of noise.
 * @param {Element} svg
 * @param {{edges: number[], probabilities: number[],
 *          display?: {edges: number[], density: number[], bins: number, method?: string}}} e
 */
export function drawDensity(svg, e) {
  svg.removeAttribute("hidden");
  const shown = e.display || { edges: e.edges, density: e.probabilities.map((p, i) => p / (e.edges[i + 1] - e.edges[i])),
                               bins: e.probabilities.length, method: undefined };
  const lows = shown.edges.slice(0, -1), highs = shown.edges.slice(1), lo = lows[0], hi = highs[highs.length - 1];
  const density = shown.density;
  const f = frame(svg, 0, Math.max(1e-12, ...density) * 1.05, "density");
  const x = (/** @type {number} */ v) => f.m.left + (v - lo) / (hi - lo) * (f.W - f.m.left - f.m.right);
  density.forEach((d, i) => el("rect", { class: "bar", x: x(lows[i]), y: f.y(d), width: Math.max(0.5, x(highs[i]) - x(lows[i]) - 0.5),
                                           height: f.y(0) - f.y(d), "data-value": d }, svg));
  xAxis(svg, f, x, lo, hi, "value (" + (shown.method || "the density on " + shown.bins + " equal bins") + ")");
}

/**
 * A mean on the value's axis over ``bounds``, with its fixed-n interval (a whisker) and anytime interval (a box).
 * @param {Element} svg
 * @param {{mean: number}} e
 * @param {import("./format.js").Interval | null} fixed
 * @param {import("./format.js").Interval | null} anytime
 * @param {number[]} bounds
 */
export function drawMean(svg, e, fixed, anytime, bounds) {
  svg.setAttribute("height", "150");
  const [lo, hi] = bounds;
  const W = +(svg.getAttribute("width") || 0), H = 150, m = { left: 62, right: 16 };
  const x = (/** @type {number} */ v) => m.left + (v - lo) / (hi - lo) * (W - m.left - m.right);
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

/**
 * Reports over time in ``svg``: n at each point of the history, with the time axis in UTC.
 * @param {Element} svg
 * @param {{time: string, n: number}[]} points
 */
export function drawHistory(svg, points) {
  svg.textContent = "";
  if (!points.length) return;
  const times = points.map((p) => Date.parse(p.time)), n = points.map((p) => p.n);
  const span = Math.max(times[times.length - 1] - times[0], 60000);  // at least a minute, so one batch shows
  const t0 = times[0] - 0.05 * span, t1 = times[0] + 1.05 * span;
  const f = frame(svg, 0, Math.max(1, ...n) * 1.05, "reports (n)", { right: 40 });
  const x = (/** @type {number} */ t) => f.m.left + (t - t0) / (t1 - t0) * (f.W - f.m.left - f.m.right);
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

/**
 * A test's trade-off curves (true-positive rate against false-positive rate, both in [0, 1]), one line each, with the
 * blind guess's diagonal.
 * @param {Element} svg
 * @param {{label: string, fpr: number[], tpr: number[], exact: boolean}[]} curves
 * @param {string} test what the test decides (under the x axis)
 */
export function drawTradeOff(svg, curves, test) {
  svg.replaceChildren();
  const f = frame(svg, 0, 1, "true-positive rate", { bottom: 48 });
  const x = (/** @type {number} */ v) => f.m.left + v * (f.W - f.m.left - f.m.right);
  xAxis(svg, f, x, 0, 1, `false-positive rate (${test})`);
  el("line", { x1: x(0), y1: f.y(0), x2: x(1), y2: f.y(1), class: "grid", "stroke-dasharray": "4 3" }, svg);
  curves.forEach((curve, index) => {
    const points = curve.fpr.map((a, i) => `${x(a).toFixed(1)},${f.y(curve.tpr[i]).toFixed(1)}`).join(" ");
    el("polyline", { points, class: `line curve-${index % 2}` }, svg);
    el("text", { x: f.m.left + 10, y: f.m.top + 16 + 16 * index, class: `curve-${index % 2}` }, svg,
       `${curve.label}${curve.exact ? "" : " (at most)"}`);
  });
  el("text", { x: x(0.62), y: f.y(0.55), class: "note" }, svg, "a blind guess");
}
