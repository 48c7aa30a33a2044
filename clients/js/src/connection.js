// The requests of a Client (client.js) to its server, the relay and the issuer, as dpdist.client._connection makes
// Python's: each retried under one window with the same bytes (network errors, 408, 425, 429, 5xx, 409
// campaign_not_open and campaign_changed), read within a deadline and a size, a redirect, an answer too large or a
// refusal refused by name, and one that acknowledges nothing (acks.js) retried as a failure.

import { InvalidParameterError, ServiceError } from './errors.js';
import { ACK_ANSWER_BYTES, AnswerTooLarge, readAnswer, readBounded, tooManyValues } from './answer.js';
import { refusalShown, secretsOf, shown, shownUrl } from './shown.js';

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
/**
 * 409 refusals worth retrying: the campaign is between states (``campaign_not_open``), or was deleted and created
 * again by another server process while the batch was checked, nothing of it counted (``campaign_changed``).
 */
const RETRYABLE_CONFLICTS = new Set(['campaign_not_open', 'campaign_changed']);

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The longest wait a server's Retry-After may ask of this client (seconds), as in Python. */
export const MAX_RETRY_AFTER = 60;
/** How long a failed request is sent again, from its first failure (ms; dpdist._http._retry.DEFAULT_RETRY_WINDOW_S). */
export const DEFAULT_RETRY_WINDOW_MS = 300_000;
/** The longest pause between two attempts without a Retry-After (ms; dpdist._http._retry.MAX_BACKOFF_S). */
export const MAX_BACKOFF_MS = 10_000;

/** Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date), null if absent or unreadable. */
export function retryAfterSeconds(value) {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER);
  const moment = Date.parse(text);
  return Number.isNaN(moment) ? null : Math.min(Math.max(0, (moment - Date.now()) / 1000), MAX_RETRY_AFTER);
}

/**
 * The wait before a retry, jittered so that many clients refused together do not return together: a server's
 * Retry-After is honoured (never earlier, up to 50% later), else the backoff is spread over its upper half.
 */
export function retryDelayMs(backoffMs, askedSeconds) {
  if (askedSeconds !== null) return askedSeconds * 1000 * (1 + 0.5 * Math.random());
  return backoffMs * (0.5 + 0.5 * Math.random());
}

/**
 * The retries of one request (as dpdist._http._retry.Retries), made as its first attempt starts: after each failed attempt,
 * ``pause(asked)`` gives the milliseconds to wait before the next (the backoff doubling from ``firstMs`` up to
 * MAX_BACKOFF_MS, jittered, or the Retry-After ``asked``, in seconds), or null once ``windowMs`` from the first failure
 * have passed (a last attempt comes at the window's end; a Retry-After past it ends the window) or ``retries`` (if not
 * null) are spent.
 */
export class Retries {
  constructor(windowMs, firstMs, retries = null, now = () => Date.now()) {
    this.windowMs = windowMs;
    this.retries = retries;
    this.now = now;
    this.failures = 0;
    this.started = now(); // made as the first attempt starts: what spentMs counts from
    this.first = null;
    this._next = firstMs;
  }

  elapsedMs() {
    return this.first === null ? 0 : this.now() - this.first;
  }

  /** Milliseconds since the first attempt started, its own time included (elapsedMs counts from its failure). */
  spentMs() {
    return this.now() - this.started;
  }

  pause(asked) {
    if (this.first === null) this.first = this.now();
    this.failures += 1;
    if (this.retries !== null && this.failures > this.retries) return null;
    const left = Math.max(0, this.windowMs - this.elapsedMs());
    const delay = retryDelayMs(this._next, asked);
    this._next = Math.min(MAX_BACKOFF_MS, this._next * 2);
    if (delay <= left) return delay;
    return asked === null && left > 0 ? left : null;
  }
}

/**
 * ``client``'s ``method`` on ``path`` of its campaign (``absolute``: of the server; ``url``: that URL, of another server, which
 * gets ``authorization`` and never this client's submit token), retried as ``send`` describes; ``via``: the fetch to
 * send with (an Oblivious HTTP relay's, ohttp.js; default: this client's own).  ``acknowledges``: what a successful
 * answer must be (acks.js): one that is not (a proxy's or a captive portal's 200, a body cut short) is retried as a
 * failure, with the same bytes; with it, resolves to the acknowledgement (parsed), else to the response.  ``limit``:
 * the most bytes of a successful answer read (a refusal's: ACK_ANSWER_BYTES); JSON that may hold more values than
 * ``mostValuesWithin(limit)`` is not parsed: no acknowledgement, no refusal's code, else ``unexpected_answer``.
 */
export async function clientRequest(client, method, path, { body, headers = {}, absolute = false, url = null, authorization = undefined, via = null, acknowledges = null,
  limit = ACK_ANSWER_BYTES }) {
  const allHeaders = { Accept: 'application/json', ...headers };
  // the submit token goes with a batch only: a campaign's config and identity are public, read without it
  if (url === null && client.token && method !== 'GET') allHeaders.Authorization = `Bearer ${client.token}`;
  if (url !== null && authorization !== undefined) allHeaders.Authorization = authorization;
  const target = url ?? (absolute ? `${client.serverUrl}${path}` : client._url(path));
  // whatever the answer says is shown escaped and cut, the secrets this client holds masked (shown.js)
  const request = { method, where: url ?? path, target, secrets: [...secretsOf(allHeaders.Authorization), ...client._secrets()] };
  let lastProblem = null;
  let unacknowledged = false; // the last answer was a success that is no acknowledgement of what was sent
  const retrying = new Retries(client.retryWindowMs, client.retryDelayMs, client.retries);
  for (;;) {
    let response = null;
    let bytes = null;
    try {
      // a deadline per attempt, the body's reading included: undici's own timeouts are between chunks;
      // no redirect is followed (it would take the token elsewhere, or read another server's answer as this one's)
      const signal = client.timeoutMs === null ? undefined : AbortSignal.timeout(client.timeoutMs);
      response = await (via ?? client._fetch)(target, { method, headers: allHeaders, body, signal, redirect: 'manual' });
      checkNotRedirected(request, response);
      bytes = await readBounded(response, response.ok ? limit : ACK_ANSWER_BYTES); // streamed, within the same deadline
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      if (error instanceof AnswerTooLarge) throw tooLarge(request, response, error.limit);
      lastProblem = response === null
        ? `cannot reach the server (${shown(error.message, request.secrets)})`
        : `${method} ${shown(request.where, request.secrets)}: HTTP ${response.status} with a body cut short (${shown(error.message, request.secrets)})`;
    }
    let asked = null; // seconds a 429/503 answer's Retry-After asked for
    unacknowledged = false;
    if (bytes !== null) {
      asked = retryAfterSeconds(response.headers?.get?.('Retry-After') ?? null);
      if (response.ok && acknowledges === null) return readAnswer(response, bytes, limit, () => `${method} ${shown(request.where, request.secrets)}`);
      if (response.ok) {
        const heavy = tooManyValues(bytes, limit); // not parsed: no acknowledgement
        const [ack, problem] = heavy === null ? acknowledges(new TextDecoder().decode(bytes), response)
          : [null, `no acknowledgement: HTTP ${response.status} with ${heavy} (not parsed)`];
        if (problem === null) return ack;
        lastProblem = shown(`${method} ${request.where}: ${problem}`, request.secrets, null);
        unacknowledged = true;
      } else {
        const refusal = refusalOf(request, response, bytes);
        const retryable = RETRYABLE_STATUS.has(response.status) || (response.status === 409 && RETRYABLE_CONFLICTS.has(refusal.code));
        if (!retryable) throw refusal;
        lastProblem = refusal.message;
      }
    }
    const pause = retrying.pause(asked);
    if (pause === null) break;
    await sleep(pause);
  }
  const origin = URL.canParse?.(target) ? new URL(target).origin : target;
  const hint = unacknowledged ? ` (is ${origin} the dpdist service, not a proxy, a captive portal or another server answering in its place? `
    + 'Nothing is taken as counted)' : '';
  throw new ServiceError(`${lastProblem}; gave up after ${retrying.failures} attempts over ${(retrying.spentMs() / 1000).toFixed(1)} s `
    + `(retryWindowMs ${client.retryWindowMs})${hint}. Nothing was lost: send the same batch again later (send(error.batch, `
    + '{batchId: error.batchId}): the same id and bytes), and a batch already counted is not counted twice',
  unacknowledged ? { status: 200, code: 'wrong_ack' } : {});
}

/**
 * A redirect (3xx, or a browser's opaque one) is refused at once, ServiceError ``redirected`` naming the status and where
 * it pointed (shown): not followed, whatever its body says, as the Python and Java clients.
 */
function checkNotRedirected({ method, where, secrets }, response) {
  const opaque = response.type === 'opaqueredirect'; // a browser's redirect: 'manual' hides the status and Location
  if (!opaque && !(response.status >= 300 && response.status < 400)) return;
  const location = opaque ? null : (response.headers?.get?.('Location') ?? null);
  const to = opaque ? 'a redirect (the browser hides where it pointed)'
    : location === null ? 'a redirect without a Location' : `a redirect to "${shown(location, secrets)}"`;
  throw new ServiceError(`${method} ${shown(where, secrets)}: HTTP ${opaque ? '3xx' : response.status}: ${to}, not followed (this client follows ` +
    'no redirect, which would take its token elsewhere): give the URL it names instead', { status: opaque ? null : response.status, code: 'redirected' });
}

/** The ServiceError of an answer whose body goes past ``limit`` bytes once decoded (not retried: it would again). */
function tooLarge({ method, where, secrets }, response, limit) {
  const kind = shown((response?.headers?.get?.('Content-Type') ?? '').split(';')[0].trim(), secrets, 60) || 'no content type';
  return new ServiceError(`The answer to ${method} ${shown(where, secrets)} is larger than this client reads (${response ? `HTTP ${response.status}` : "the Oblivious HTTP relay's answer"}, ${kind}, ` +
    `more than ${limit >> 20} MiB once decoded): a dpdist service's answers are far smaller. Is that URL the dpdist service, not ` +
    'another server answering in its place?', { status: response?.status ?? null, code: 'answer_too_large' });
}

/**
 * The ServiceError of a refusal (4xx/5xx): a dpdist refusal's code and detail (escaped, masked, cut to 2000 characters),
 * or the status, host and size of any other answer (``refusalShown``, as Python's and Java's).
 */
function refusalOf({ method, where, secrets, target }, response, bytes) {
  let host = 'the server';
  try {
    host = new URL(target, globalThis.location?.href).host;
  } catch {
    // a target no URL parser reads
  }
  const [code, said] = refusalShown(response.status, bytes, host, secrets);
  return new ServiceError(`${method} ${shown(where, secrets)}: ${code ? `HTTP ${response.status} ` : ''}${said}`, { status: response.status, code });
}

/**
 * Refuse, at once, a server URL fetch could not send or that would send elsewhere, naming the argument and showing the
 * value masked: one that is not ``http://`` or ``https://`` with a host (``htp:/oops`` was taken, and its requests
 * retried in silence for the whole retry window, where Python and Java refuse it), nor ``""`` or a path on the page's
 * origin (in a page); with ``user:password@`` (fetch refuses a URL with credentials; this client authenticates
 * with its token), or with a query or fragment (the API's paths are joined to it: every request would go to ``/?...``).
 */
export function checkServerUrl(serverUrl) {
  let url = null;
  const page = globalThis.location?.href;
  try {
    if (serverUrl === '' || (page !== undefined && serverUrl.startsWith('/') && !serverUrl.startsWith('//'))) url = new URL(serverUrl, page ?? 'http://localhost/');
    else if (/^https?:\/\/[^/?#]/iu.test(serverUrl)) url = new URL(serverUrl); // absolute: WHATWG would take http:/x as http://x
  } catch {
    // refused below (a host or port no URL parser reads)
  }
  const problem = url === null || !['http:', 'https:'].includes(url.protocol) || url.hostname === ''
    ? 'an http:// or https:// URL with a host (or "" for the page\'s origin, or a path on it in a page)'
    : url.username || url.password || /^[^?#]*\/\/[^/?#]*@/u.test(serverUrl) ? 'without user:password@ (this client authenticates with its token, never a URL\'s credentials, which fetch refuses)'
      : /[?#]/u.test(serverUrl) ? 'without a query or fragment (?...#...: the API\'s paths are joined to it)' : null;
  if (problem !== null) throw new InvalidParameterError(`The 'serverUrl' argument of Client must be the service's URL, ${problem}. Got "${shownUrl(serverUrl)}".`);
}
