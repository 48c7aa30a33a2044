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
  line.textContent = `${attacker.sentence} ${attacker.words}`; // the service's words: its figures rounded as bounds
  /** @type {HTMLElement} */ (document.getElementById("attacker")).hidden = false;
  if (chart !== null) {
    drawTradeOff(chart, attacker.curves, attacker.tradeoff.test);
    chart.toggleAttribute("hidden", false);
  }
}
