// @ts-check
/**
 * The dashboard's elements and tables: ``$`` by id, the table of values, the tables of counts by reason.
 * @module
 */

/**
 * The element with ``id`` (the page's own: always there).
 * @param {string} id
 * @returns {any}
 */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * The table of values: ``header`` and ``rows`` of text, every cell but the first right-aligned.
 * @param {string[]} header
 * @param {string[][]} rows
 */
export function fillValues(header, rows) {
  const table = /** @type {HTMLTableElement} */ ($("values"));
  const thead = /** @type {HTMLTableSectionElement} */ (table.tHead);
  thead.innerHTML = "";
  const head = thead.insertRow();
  for (const h of header) { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); }
  const body = table.tBodies[0];
  body.textContent = "";
  for (const row of rows) {
    const tr = body.insertRow();
    row.forEach((cell, i) => { const td = tr.insertCell(); td.textContent = cell; if (i > 0) td.className = "num"; });
  }
}

/**
 * The table ``id`` of counts by reason (sorted; "(none)" when empty).
 * @param {string} id
 * @param {Record<string, number>} counts
 */
export function fillTable(id, counts) {
  const body = /** @type {HTMLTableSectionElement} */ (document.querySelector("#" + id + " tbody"));
  body.textContent = "";
  /** @type {[string, number][]} */
  const entries = Object.entries(counts).sort();
  if (!entries.length) entries.push(["(none)", 0]);
  for (const [reason, count] of entries) {
    const row = body.insertRow();
    row.insertCell().textContent = reason;
    row.insertCell().textContent = String(count);
  }
}
