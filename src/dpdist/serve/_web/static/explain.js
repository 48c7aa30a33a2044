// @ts-check
/**
 * What a campaign's epsilon buys, in the service's plain words (``GET .../explain``, public: from the config alone):
 * how close the estimate is expected to be, the trade with epsilon, what a person gives up; and what an attacker can
 * learn (the document's ``attacker``): how likely a device's value is guessed, and a test's trade-off curve, which the
 * dashboard draws.  Shown by the dashboard and the participation page (clients/js/participate.html).
 * @module
 */

import { drawTradeOff } from "./charts.js";

/**
 * The explain route's document for ``api`` (the campaign's API URL, ``{service}/api/campaigns/{id}``), or a sentence
 * saying why there is none.
 * @param {string} api
 * @returns {Promise<any>}
 */
async function explained(api) {
  try {
    const response = await fetch(api + "/explain", { cache: "no-store" });
    const body = await response.json();
    return response.ok ? body : "no prediction for this protocol (" + body.detail + ")";
  } catch (error) {
    return "no prediction now (" + String(error instanceof Error ? error.message : error) + ")";
  }
}

/**
 * The explain route's ``plain`` sentences for ``api``, or a sentence saying why there is none; '' when the service
 * has nothing to say.
 * @param {string} api
 * @returns {Promise<string>}
 */
export async function whatEpsilonBuys(api) {
  const body = await explained(api);
  return typeof body === "string" ? body : body.plain.join(" ");
}

/**
 * Show the plain words in ``#buys-text`` (``#buys`` hidden until then, unless there is nothing to say), and, where the
 * page has them, what an attacker can learn in ``#attacker-text`` (``#attacker``) and its curves in ``#tradeoff-chart``.
 * @param {string} api
 */
export async function showWhatEpsilonBuys(api) {
  const body = await explained(api);
  const text = typeof body === "string" ? body : body.plain.join(" ");
  if (text !== "") {
    /** @type {HTMLElement} */ (document.getElementById("buys-text")).textContent = text;
    /** @type {HTMLElement} */ (document.getElementById("buys")).hidden = false;
  }
  const attacker = typeof body === "string" ? null : body.attacker;
  const line = document.getElementById("attacker-text"), chart = document.getElementById("tradeoff-chart");
  if (attacker == null || line === null) return;
  line.textContent = `${attacker.sentence} ${yearText(attacker)} ${tradeOffText(attacker.tradeoff)}`;
  /** @type {HTMLElement} */ (document.getElementById("attacker")).hidden = false;
  if (chart !== null) {
    drawTradeOff(chart, attacker.curves, attacker.tradeoff.test);
    chart.toggleAttribute("hidden", false);
  }
}

/**
 * A probability as the service writes it: three significant digits, never rounded up to 100%.
 * @param {number} p
 */
function percent(p) {
  const shown = Number((100 * p).toPrecision(3));
  return `${shown >= 100 && p < 1 ? Number((Math.floor(100 * p * 1e4) / 1e4).toFixed(4)) : shown}%`;
}

/**
 * The odds after a year of daily reports: fresh, and one report kept and sent again (or through the memo).
 * @param {any} attacker
 */
function yearText(attacker) {
  const guess = attacker.guess, last = guess.reports.length - 1;
  const fresh = `${guess.exact[last] ? "" : "at most "}${percent(guess.probability[last])}`;
  const how = guess.over === "memo" ? "through its memo" : "each drawn afresh";
  const kept = attacker.kept === null ? "" : `; one report kept and sent again: ${percent(attacker.kept.probability[last])}`;
  return `After ${guess.reports[last]} daily reports of one unchanged value, ${how}: ${fresh}${kept}.`;
}

/**
 * A test's true-positive rates at the document's false-positive rates.
 * @param {any} tradeoff
 */
function tradeOffText(tradeoff) {
  const rates = tradeoff.fpr.map(percent).join(", "), powers = tradeoff.tpr.map(percent).join(", ");
  return `A test of ${tradeoff.test} from one report, wrong on ${rates} of the others, is right on ` +
    `${tradeoff.exact ? "" : "at most "}${powers} of them (a blind guess: as often as it is wrong).`;
}
