// @ts-check
/**
 * What a campaign's epsilon buys, in the service's plain words (``GET .../explain``, public: from the config alone):
 * how close the estimate is expected to be, the trade with epsilon, what a person gives up.  Shown by the dashboard
 * and the participation page (clients/js/participate.html).
 * @module
 */

/**
 * The explain route's ``plain`` sentences for ``api`` (the campaign's API URL, ``{service}/api/campaigns/{id}``), or
 * a sentence saying why there is none; '' when the service has nothing to say.
 * @param {string} api
 * @returns {Promise<string>}
 */
export async function whatEpsilonBuys(api) {
  try {
    const response = await fetch(api + "/explain", { cache: "no-store" });
    const body = await response.json();
    return response.ok ? body.plain.join(" ") : "no prediction for this protocol (" + body.detail + ")";
  } catch (error) {
    return "no prediction now (" + String(error instanceof Error ? error.message : error) + ")";
  }
}

/**
 * Show :func:`whatEpsilonBuys` in ``#buys-text``, and ``#buys`` (hidden until then), unless there is nothing to say.
 * @param {string} api
 */
export async function showWhatEpsilonBuys(api) {
  const text = await whatEpsilonBuys(api);
  if (text === "") return;
  /** @type {HTMLElement} */ (document.getElementById("buys-text")).textContent = text;
  /** @type {HTMLElement} */ (document.getElementById("buys")).hidden = false;
}
