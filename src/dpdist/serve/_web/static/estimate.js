// @ts-check
/**
 * A campaign's estimate on the dashboard, every kind with its **fixed-n** 95 % interval or band (grey: valid for one
 * look at a number of reports fixed in advance) and its **anytime** 95 % confidence sequence (orange: valid however
 * often the page is looked at, dpdist.confidence_sequences), or why a protocol has none:
 *
 * - a frequency or heavy-hitters campaign: one bar per value, named by its label; a key-value campaign: one bar per
 *   key (its frequency) and each key's mean value in the table;
 * - a distribution: its CDF with both bands and its density; a mean: both intervals on the value's axis;
 * - a multi-attribute campaign: each attribute's estimate, or a heat map of each 2-way marginal (./multi.js);
 * - a table of the values with both intervals, what each interval means, and the "stop when narrower than w"
 *   readout of the sequence.
 * @module
 */

import { drawCategories, drawCdf, drawDensity, drawMean } from "./charts.js";
import { $, fillValues } from "./dom.js";
import { fmt, interval, pick } from "./format.js";
import { marginalsView, multiView } from "./multi.js";

/** At most this many bars: the most frequent values of a larger domain. */
const MAX_BARS = 40;
/** What the method of an interval of a share says of its limits (dpdist.estimates._intervals.SHARE_CLIPPED). */
const CLIPPED = "clipped to [0, 1], what a share can be";

/**
 * Whether an interval of ``e`` (or of one of its attributes) is a share's, clipped to [0, 1].
 * @param {any} e
 * @returns {boolean}
 */
function clippedShares(e) {
  const all = [...(e.intervals || []), ...Object.values(e.attributes || {}).flatMap((a) => a.intervals || [])];
  return all.some((i) => !i.anytime_valid && String(i.method || "").includes(CLIPPED));
}

/**
 * The legend of the estimate's chart for ``kind`` (with the anytime band when there is one).
 * @param {string} kind
 * @param {boolean} anytime
 */
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

/**
 * A frequency, heavy-hitters or key-value estimate: its bars and the table of its values.
 * @param {any} e
 * @param {number} level
 */
function categoryView(e, level) {
  const fixed = pick(e, "frequency", false), anytime = pick(e, "frequency", true, true);
  /** @type {string[]} */
  const names = e.kind === "heavy_hitters" ? e.labels : (e.labels || e.items.map(String));  // items: frequency, key-value
  let order = names.map((_, i) => i);
  if (names.length > MAX_BARS) order = order.sort((a, b) => e.frequencies[b] - e.frequencies[a]).slice(0, MAX_BARS);
  const pickAll = (/** @type {any[] | null} */ values) => (values ? order.map((i) => values[i]) : null);
  drawCategories($("estimate-chart"), /** @type {string[]} */ (pickAll(names)), /** @type {number[]} */ (pickAll(e.frequencies)),
                 fixed && pickAll(fixed.low), fixed && pickAll(fixed.high), anytime && pickAll(anytime.low),
                 anytime && pickAll(anytime.high),
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

/**
 * A distribution: its CDF with both bands, its density, and the table of its mean and quantiles.
 * @param {any} e
 * @param {number} level
 */
function distributionView(e, level) {
  const fixed = pick(e, "cdf", false, true), anytime = pick(e, "cdf", true);
  drawCdf($("estimate-chart"), e, fixed, anytime);
  drawDensity($("density-chart"), e);
  const meanFixed = pick(e, "mean", false), meanAny = pick(e, "mean", true);
  const qFixed = pick(e, "quantile", false), qAny = pick(e, "quantile", true);
  const meanName = e.period != null ? "circular mean" : "mean";  // a circle (opm-circular): the mean direction
  const rows = [[meanName, fmt(e.mean), meanFixed ? interval(meanFixed.low, meanFixed.high) : "-",
                 meanAny ? interval(meanAny.low, meanAny.high) : "-"]];
  (e.quantiles ? e.quantiles.q : []).forEach((/** @type {number} */ q, /** @type {number} */ i) => rows.push([
    `quantile ${q}`, fmt(e.quantiles.values[i]), qFixed ? interval(qFixed.low[i], qFixed.high[i]) : "-",
    qAny ? interval(qAny.low[i], qAny.high[i]) : "-"]));
  fillValues(["", "estimate", `fixed-n ${level}%`, `anytime ${level}%`], rows);
  $("summary").textContent = meanName + " " + fmt(e.mean) + ", median " + fmt(e.median)
    + (fixed ? "; fixed-n band: " + fixed.method : "; no fixed-n band (?replicates=0)");
}

/**
 * A mean on the value's axis (the campaign's bounds) and its row in the table.
 * @param {any} e
 * @param {number} level
 * @param {any} config
 */
function meanView(e, level, config) {
  const fixed = pick(e, "mean", false), anytime = pick(e, "mean", true);
  const bounds = (config && config.bounds) || e.bounds || [Math.min(e.mean, fixed ? fixed.low : e.mean) - 1,
                                                           Math.max(e.mean, fixed ? fixed.high : e.mean) + 1];
  drawMean($("estimate-chart"), e, fixed, anytime, bounds);
  fillValues(["", "estimate", `fixed-n ${level}%`, `anytime ${level}%`],
             [["mean", fmt(e.mean), fixed ? interval(fixed.low, fixed.high) : "-", anytime ? interval(anytime.low, anytime.high) : "-"]]);
  $("summary").textContent = "mean " + fmt(e.mean) + " " + (fixed ? interval(fixed.low, fixed.high) : "");
}

/**
 * The estimate of ``data`` (``GET .../estimate``; ``{estimate: null}`` clears it) as its kind is drawn, with what
 * its intervals mean and the sequence's stop readout; ``config``: the campaign's public config.
 * @param {{estimate: any}} data
 * @param {any} config
 */
export function drawEstimate(data, config) {
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
  // what the estimate says of itself (CP's uniform estimate when no item stands out of the noise: docs/explanation/frequency-oracles.md)
  $("notes").textContent = (e.notes || []).join(" ");
  $("notes").hidden = !(e.notes && e.notes.length);
  const u = e.uncertainty || {};
  const anytime = (e.intervals || []).some((/** @type {any} */ i) => i.anytime_valid);
  const level = Math.round(100 * ((e.intervals && e.intervals.length) ? e.intervals[0].level : 0.95));
  legend(e.kind, anytime);
  svg.toggleAttribute("hidden", e.kind === "multi" || e.kind === "marginals");  // drawn per attribute or marginal
  if (e.kind === "frequency" || e.kind === "heavy_hitters" || e.kind === "key_value") categoryView(e, level);
  else if (e.kind === "distribution") distributionView(e, level);
  else if (e.kind === "multi") multiView(e, level, config);
  else if (e.kind === "marginals") marginalsView(e, level);
  else meanView(e, level, config);
  $("band-note").textContent = `(${level}% fixed-n and anytime)`;
  $("meaning").textContent = (u.fixed_n_note ? u.fixed_n_note[0].toUpperCase() + u.fixed_n_note.slice(1) + ". " : "")
    + (u.bootstrap ? `Fixed-n band: ${u.bootstrap.replicates} bootstrap replicates at ${fmt(100 * u.bootstrap.level)}%, `
                     + u.bootstrap.stream + ". " : "")
    + (anytime ? "Anytime: holds at every number of reports at once, however often it is looked at ("
                 + u.sequence_method + ")." : "Anytime: none" + (u.sequence_unavailable ? ": " + u.sequence_unavailable : "") + ".")
    + (u.note ? " Note: " + u.note + "." : "")  // e.g. an empty anytime band (no distribution fits: a poisoning signal)
    + (clippedShares(e) ? " The intervals of a share are " + CLIPPED + "." : "");
  $("stop-row").hidden = !anytime;
  const stop = u.stop;
  $("stop").textContent = !stop ? "" : stop.reached
    ? `narrower already (width ${fmt(stop.width, 3)})`
    : stop.n === null ? `width ${fmt(stop.width, 3)}; not within 10^10 reports`
      : `width ${fmt(stop.width, 3)}; at about n = ${stop.n.toLocaleString("en")} if the estimate stays where it is`;
}
