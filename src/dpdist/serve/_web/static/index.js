// @ts-check
/**
 * ``/`` for a browser (templates/index.html): with the admin token (./token.js: from the fragment, or typed in the
 * form, and kept for this tab), the campaigns from ``/api/campaigns``, each with links to its dashboard and its
 * participation page.
 * @module
 */

import { $ } from "./dom.js";
import { getJson, keepToken, takeToken } from "./token.js";

const ROOT = document.body.dataset.root || "";

/**
 * A link to ``href`` reading ``text``.
 * @param {string} href
 * @param {string} text
 */
function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}

async function list() {
  const token = takeToken(window);
  if (!token) return;
  $("login").hidden = true;
  try {
    const body = await getJson(ROOT + "/api/campaigns", token);
    const rows = $("campaigns").tBodies[0];
    rows.textContent = "";
    for (const c of body.campaigns) {
      const tr = rows.insertRow();
      tr.insertCell().textContent = c.campaign;
      tr.insertCell().textContent = c.state;
      tr.insertCell().textContent = c.config.protocol;
      tr.insertCell().textContent = String(c.config.epsilon);
      const n = tr.insertCell();
      n.textContent = String(c.n);
      n.className = "num";
      const pages = tr.insertCell();
      const id = encodeURIComponent(c.campaign);
      pages.append(link(ROOT + "/campaigns/" + id + "/dashboard#token=" + encodeURIComponent(token), "dashboard"), " · ",
                   link(ROOT + "/campaigns/" + id + "/participate", "participate"));
    }
    if (!body.campaigns.length) rows.insertRow().insertCell().textContent = "(no campaign yet)";
    $("campaigns").hidden = false;
    $("error").textContent = "";
    document.body.dataset.loaded = "true";
  } catch (error) {
    $("login").hidden = false;
    $("error").textContent = "Cannot list the campaigns: " + (error instanceof Error ? error.message : error);
  }
}

$("login").addEventListener("submit", (/** @type {Event} */ event) => {
  event.preventDefault();
  keepToken(window, $("token").value.trim());  // for this tab, never in the address
  $("token").value = "";
  list();
});
window.addEventListener("hashchange", list);
list();
