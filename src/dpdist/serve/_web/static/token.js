// @ts-check
/**
 * The admin token of the service's pages: taken from the URL fragment (``#token=...``, which a browser never
 * sends to a server), then out of the address at once, so that it is not on the screen, in the tab's history, in a
 * bookmark or in a link copied from the address bar; kept for this tab only (``sessionStorage``), so a reload
 * still works; sent only as ``Authorization: Bearer``.  A ``token`` in the query string (which the server refuses
 * with 400 ``token_in_query``) is taken out of the address too, and never used or forwarded.
 * No DOM at import: node's test runner imports this module with a stand-in window (tests/serve/pages_js).
 * @module
 */

/** The ``sessionStorage`` key of the admin token. */
export const TOKEN_KEY = "dpdist-admin-token";

/**
 * The parts of a window this module uses (a browser's ``window``, or a stand-in in the tests).
 * @typedef {{location: {pathname: string, search: string, hash: string},
 *            history: {state: any, replaceState: (state: any, unused: string, url: string) => void},
 *            sessionStorage?: {getItem: (key: string) => string | null, setItem: (key: string, value: string) => void,
 *                              removeItem: (key: string) => void}}} PageWindow
 */

/**
 * This tab's storage, or null where the browser refuses it (a sandboxed frame, storage turned off).
 * @param {PageWindow} win
 */
function storage(win) {
  try {
    return win.sessionStorage || null;
  } catch {
    return null;
  }
}

/**
 * The admin token: the fragment's ``token`` (which then replaces the tab's kept one) or the tab's kept one ('' if
 * none); any ``token`` is removed from the fragment and the query string of the address, the rest kept.
 * @param {PageWindow} win
 * @returns {string}
 */
export function takeToken(win) {
  const fragment = new URLSearchParams(win.location.hash.slice(1));
  const query = new URLSearchParams(win.location.search);
  const given = fragment.get("token") || "";
  if (fragment.has("token") || query.has("token")) {
    fragment.delete("token");
    query.delete("token");
    const search = query.toString(), rest = fragment.toString();
    win.history.replaceState(win.history.state, "", win.location.pathname + (search ? "?" + search : "")
                             + (rest ? "#" + rest : ""));
  }
  if (given) {
    keepToken(win, given);
    return given;
  }
  return storage(win)?.getItem(TOKEN_KEY) || "";
}

/**
 * Keep ``token`` for this tab (typed in a page's field: it never goes into the address).
 * @param {PageWindow} win
 * @param {string} token
 */
export function keepToken(win, token) {
  storage(win)?.setItem(TOKEN_KEY, token);
}

/**
 * Forget the tab's kept token (the server refused it).
 * @param {PageWindow} win
 */
export function forgetToken(win) {
  storage(win)?.removeItem(TOKEN_KEY);
}

/**
 * ``GET path`` with the token as ``Authorization: Bearer``; the JSON body, or an Error with the server's ``detail``
 * (a 401 forgets the tab's kept token).
 * @param {string} path
 * @param {string} token
 * @returns {Promise<any>}
 */
export async function getJson(path, token) {
  const response = await fetch(path, { headers: { Authorization: "Bearer " + token }, cache: "no-store" });
  const body = await response.json();
  if (response.status === 401) forgetToken(window);
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}
