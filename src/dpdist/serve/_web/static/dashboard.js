// @ts-check
/**
 * The dashboard of a campaign (templates/dashboard.html): reads the admin token (./token.js), shows the campaign's
 * summary and ``/history`` every few seconds at once, and ``/estimate`` when it is ready (./estimate.js), with the campaign's privacy
 * guarantee, what its epsilon buys (./explain.js), the poisoning test, n over time and the rejections; a campaign in
 * rounds has its own view (./rounds.js).  The page's query string (``?level=0.9``, ``?replicates=0``, estimate
 * options) goes to ``/estimate``, without any ``token``.
 * @module
 */

import { drawHistory } from "./charts.js";
import { $, fillTable } from "./dom.js";
import { drawEstimate } from "./estimate.js";
import { showWhatEpsilonBuys } from "./explain.js";
import { refreshRounds } from "./rounds.js";
import { forgetToken, getJson, takeToken } from "./token.js";

const CAMPAIGN = document.body.dataset.campaign || "";
const REFRESH_MS = 3000;
const token = takeToken(window);  // out of the address bar before anything else runs
// the page is {service}/campaigns/{id}/dashboard; {service} may carry a reverse proxy's path prefix
const SERVICE = location.pathname.slice(0, location.pathname.lastIndexOf("/campaigns/"));
const API = SERVICE + "/api/campaigns/" + encodeURIComponent(CAMPAIGN);

/** The largest estimate this page reads: a JSON text past about 537 M characters is longer than the browser's
 * longest string (GRR past d = 3.3*10^6 came back 200 and the page failed to parse it). */
const MAX_ESTIMATE_BYTES = 400_000_000;
/** The estimate last answered and its entity tag: the next poll asks with it and an unchanged one is not sent again
 * (one too long to read too: its message, ``refused``; polled without its tag, the server computed it again and again). */
let lastEstimate = { tag: "", data: /** @type {any} */ (null), refused: "" };

/**
 * ``/estimate`` (with the page's query), asked with the tag of the one held: an unchanged estimate is answered 304
 * and not fetched again (a dashboard read an unchanged 321 MB document every few seconds); one too long for this
 * page is not read (its size said instead).
 * @returns {Promise<any>}
 */
async function getEstimate() {
  /** @type {Record<string, string>} */
  const headers = { Authorization: "Bearer " + token };
  if (lastEstimate.tag) headers["If-None-Match"] = lastEstimate.tag;
  const response = await fetch(API + "/estimate" + estimateQuery(), { headers, cache: "no-store" });
  if (response.status === 304 && lastEstimate.refused) throw new Error(lastEstimate.refused);
  if (response.status === 304 && lastEstimate.data !== null) return lastEstimate.data;
  const size = Number(response.headers.get("content-length") || 0);
  if (response.ok && size > MAX_ESTIMATE_BYTES) {
    await response.body?.cancel();
    const refused = `The estimate is ${Math.round(size / 1e6)} MB, more than this page can read; `
                    + "use `dpdist campaign estimate` (--json, --plot) instead.";
    lastEstimate = { tag: response.headers.get("etag") || "", data: null, refused };
    throw new Error(refused);
  }
  const body = await response.json();
  if (response.status === 401) forgetToken(window);
  if (!response.ok) throw new Error(body.detail || response.statusText);
  lastEstimate = { tag: response.headers.get("etag") || "", data: body, refused: "" };
  return body;
}

/** @type {any} */
let config = null;
let inRounds = false;  // a campaign in rounds: its view is refreshRounds (./rounds.js)

/**
 * The poisoning test's line: the service's own (diagnostics.summary), as dpdist campaign estimate prints it.
 * @param {any} d
 */
function drawDiagnostics(d) {
  const node = $("diagnostics");
  node.textContent = d ? d.summary || "poisoning test: " + (d.detail || "none") : "poisoning test: none";
  node.style.color = d && d.flagged ? "#b00" : "";
}

/** The estimate's query: the page's own (never a token: ./token.js took it out) and the stop width. */
function estimateQuery() {
  const params = new URLSearchParams(location.search);
  const width = parseFloat($("width").value);
  if (width > 0) params.set("width", String(width));
  return params.toString() ? "?" + params.toString() : "";
}

// what epsilon buys (GET .../explain, in the service's plain words): at the campaign's n so far, asked again
// when n has doubled (the service caches each prediction, and rounds n to 1-2-5)
/** @type {number | null} */
let explainedAt = null;

/** @param {number} n */
function explainAt(n) {
  if (explainedAt !== null && n < 2 * explainedAt) return;
  explainedAt = Math.max(n, 1);
  showWhatEpsilonBuys(API);  // not awaited: the estimate does not wait for a prediction
}

/**
 * The campaign's facts from its summary (``GET .../{id}``: no estimate computed): state, protocol, n, batches and
 * the rejections.
 * @param {any} summary
 */
function showFacts(summary) {
  $("state").textContent = String(summary.state);
  $("protocol").textContent = String(summary.config.protocol);
  for (const key of ["n", "batches"]) $(key).textContent = String(summary[key]);
  explainAt(summary.n);
  fillTable("rejected", summary.rejected);
  fillTable("refused", summary.refused_batches);
}

function loaded() {
  $("error").textContent = "";
  $("updated").textContent = new Date().toISOString().slice(11, 19) + " UTC";
  document.body.dataset.loaded = "true";
}

async function refresh() {
  try {
    if (config === null) {
      const published = await getJson(API + "/config", token);
      config = published.config;
      inRounds = Boolean(published.rounds);
    }
    if (inRounds) {  // the rounds' own campaigns count the reports (./rounds.js)
      await refreshRounds(API, SERVICE, token);
      loaded();
      return;
    }
    // what the server knows at once (state, n, counts: the campaign's summary, and n over time) is shown before
    // the estimate, which may take seconds to compute on a loaded server, and fills in when it is ready
    const estimate = getEstimate();
    estimate.catch(() => {});  // awaited below, where its error is shown
    const [summary, history] = await Promise.all([getJson(API, token), getJson(API + "/history", token)]);
    showFacts(summary);
    drawHistory($("history-chart"), history.history);
    if (!document.body.dataset.loaded) $("summary").textContent = "computing the estimate...";
    document.body.dataset.facts = "true";
    const data = await estimate;
    $("epsilon").textContent = String(data.epsilon);
    $("guarantee").textContent = data.guarantee || "-";
    drawEstimate(data, config);
    drawDiagnostics(data.diagnostics);
    loaded();
  } catch (error) {
    $("error").textContent = String(error instanceof Error ? error.message : error);
  }
}

// one refresh at a time, the next REFRESH_MS after the last one ended (an estimate of a large domain takes longer than
// REFRESH_MS to fetch: polls piled up on the server, then followed each other at once);
// a new width, or the tab shown again, refreshes at once (once the one in flight ends)
let inFlight = false;
let asked = false;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let next;
/** @param {boolean} now */
async function poll(now) {
  if (inFlight) {
    asked = asked || now;
    return;
  }
  clearTimeout(next);
  inFlight = true;
  try {
    // a hidden tab does not poll: the server computes an estimate once per change anyway,
    // but a tab nobody looks at should not keep a connection busy; it refreshes when shown again
    if (!document.hidden) await refresh();
  } finally {
    inFlight = false;
  }
  if (asked) {
    asked = false;
    poll(false);
    return;
  }
  next = setTimeout(() => poll(false), REFRESH_MS);
}

poll(false);
$("width").addEventListener("change", () => poll(true));
document.addEventListener("visibilitychange", () => { if (!document.hidden) poll(true); });
