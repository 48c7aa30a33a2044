// A collector, a relay and a Privacy Pass issuer in-process, as node http servers on 127.0.0.1 (port 0), for the tests
// of the device algorithm of a relayed campaign.  Each server stops by itself
// after LIFETIME_MS (an unref'd timer) and is stopped by stopAll().
//
// * collector: GET /api/campaigns/{c}/config (relay: {url, ohttp, pin, issuer}, the
//   issuer with its ``challenge``) and GET /api/campaigns/{c}/identity (the identity document's bytes, made once; its
//   issuer without the challenge); as an attacker, a config and identity of its own to the devices it tags (``tag``), or
//   another identity for everyone (``changeIdentity``);
// * relay: passes both GETs on from the collector, or, as an attacker (``swap``), serves its own Oblivious HTTP key
//   configuration (and the pin and TokenChallenge it gives) in the config and the identity; PUT
//   /relay/v1/campaigns/{c}/ohttp/{id} pins the campaign's identity (the collector's, at the first report it
//   admits) and takes an RFC 9458 request whose
//   ``Dpdist-Pin`` is that pin (409 pin_mismatch else; 409 identity_changed once the collector names another pin) with
//   a valid, fresh token of the pinned identity's challenge bound to the report (401 without, 403 token_not_bound with a
//   token made for another report, 403 token_spent with a token spent on another report id, a duplicate for the same id
//   and token), keeps what it received, and tries to open it with its own key;
//   ``relayDown``: the relay drops every report's connection unread (a relay outage);
// * issuer: GET /issuer/v1/keys/{name}, POST /issuer/v1/keys/{name}/token-request (Bearer credential; each credential
//   ``tokensEach`` tokens, the count lowered before the answer, a repeated request answered from its store, whether
//   the count is spent or not; refusals with dpdist issuer's codes: 401 unauthorized, 403 exhausted; ``loseAnswers``
//   answers are computed, stored and then lost with the connection), or another process's (dpdist issuer itself).

import { createServer } from 'node:http';
import { createHash, createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '../src/vendor/hpke.js';
import { CAMPAIGN_CONTEXT, EARLIER_CAMPAIGN_CONTEXT, redemptionContext, tokenChallenge } from '../src/privacypass.js';
import { blindSign, boundTo, newIssuerKey, verifyToken } from './privacypass-helpers.js';

const LIFETIME_MS = 60_000;
export const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };

const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
const sha256 = (bytes) => createHash('sha256').update(bytes).digest();

/** An X25519 key pair and its key configuration as a relayed campaign's identity names it (``relay.ohttp``: key id 0). */
export async function ohttpKey() {
  const pair = await suite.kem.generateKeyPair();
  const raw = new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey));
  const config = Buffer.concat([Buffer.from([0, 0, 0x20]), raw, Buffer.from([0, 4, 0, 1, 0, 1])]);
  const keys = Buffer.concat([Buffer.from([0, config.length]), config]);
  return { pair, ohttp: keys.toString('base64url') };
}

function readVarint(bytes, at) {
  const size = 1 << (bytes[at] >> 6);
  let value = bytes[at] & 0x3f;
  for (let index = 1; index < size; index++) value = value * 256 + bytes[at + index];
  return [value, at + size];
}

/**
 * The report an RFC 9458 request holds if ``key`` opens it and it is ``campaign``'s report request
 * (dpdist._wire._ohttp_report: PUT /api/campaigns/{campaign}/batches/<id>, known-length Binary HTTP), else null.
 */
export async function openReport(key, campaign, request) {
  try {
    const header = request.subarray(0, 7);
    const recipient = await suite.createRecipientContext({
      recipientKey: key.pair.privateKey, enc: request.slice(7, 39).buffer,
      info: Buffer.concat([Buffer.from('message/bhttp request\0'), header]),
    });
    const message = new Uint8Array(await recipient.open(request.slice(39).buffer));
    const parts = [];
    let at = 1; // the framing indicator: 0, a known-length request
    for (let index = 0; index < 6; index++) { // method, scheme, authority, path, fields, content
      const [length, next] = readVarint(message, at);
      parts.push(message.subarray(next, next + length));
      at = next + length;
    }
    const path = Buffer.from(parts[3]).toString();
    return Buffer.from(parts[0]).toString() === 'PUT' && path.startsWith(`/api/campaigns/${campaign}/batches/`) ? parts[5] : null;
  } catch {
    return null;
  }
}

/** Python's json.dumps(doc, sort_keys=True, separators=(",", ":")) for the plain ASCII data of these tests. */
function sortedJson(value) {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${sortedJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

async function readBody(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function json(response, status, body, headers = {}) {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

const servers = [];
let sharedIssuerKey = null;

/** Listen on 127.0.0.1, a free port; resolves to the server's origin. */
async function listen(handler) {
  const server = createServer((request, response) => {
    handler(request, response).catch((error) => json(response, 500, { error: 'internal', detail: String(error?.stack ?? error) }));
  });
  // an idle connection is kept until stop(): with the default 5 s, a loaded machine's loop can run the server's idle
  // timer before it reads a request already sent on that connection, and the client sees it closed
  server.keepAliveTimeout = 0;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  setTimeout(() => stop(server), LIFETIME_MS).unref();
  servers.push(server);
  return `http://127.0.0.1:${server.address().port}`;
}

function stop(server) {
  server.closeAllConnections?.();
  server.close();
}

const CLIENT_DIR = new URL('..', import.meta.url); // clients/js/

/**
 * The Content-Security-Policy dpdist serve gives an HTML page (src/dpdist/_guard/_security_headers.py): inline scripts and
 * styles by hash, everything else from its own origin, and ``connect`` the origins it may also fetch from.
 */
export function pageSecurityPolicy(page, connect = []) {
  const hashes = (pattern) => [...page.matchAll(pattern)].map((match) => `'sha256-${createHash('sha256').update(match[1]).digest('base64')}'`).join(' ');
  return [
    "default-src 'none'", `script-src 'self' ${hashes(/<script\b(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script\s*>/gi)}`,
    `style-src ${hashes(/<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi)}`, `connect-src 'self' ${connect.join(' ')}`.trim(),
    "img-src 'self' data:", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
  ].join('; ');
}

/** The participate page (with its CSP naming ``connect``) and the client's modules, as dpdist serve serves them. */
async function servePage(request, response, connect) {
  const path = new URL(request.url, 'http://x').pathname;
  if (/^\/campaigns\/[^/]+\/participate$/.test(path)) {
    const page = await readFile(new URL('participate.html', CLIENT_DIR), 'utf8');
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': pageSecurityPolicy(page, connect) });
    response.end(page);
    return true;
  }
  if (path === '/static/dpdist-client.js') {
    response.writeHead(200, { 'Content-Type': 'text/javascript' });
    response.end("export * from './dpdist-client/index.js';\n");
    return true;
  }
  const module = path.match(/^\/static\/dpdist-client\/((?:[a-z0-9_-]+\/)*[a-z0-9_-]+\.js)$/);
  if (module !== null) {
    response.writeHead(200, { 'Content-Type': 'text/javascript' });
    response.end(await readFile(new URL(`src/${module[1]}`, CLIENT_DIR)));
    return true;
  }
  const pageScript = path.match(/^\/static\/pages\/([a-z0-9_-]+\.js)$/); // the pages' own scripts (explain.js), package data of dpdist.serve
  if (pageScript !== null) {
    response.writeHead(200, { 'Content-Type': 'text/javascript' });
    response.end(await readFile(new URL(`../../src/dpdist/serve/_web/static/${pageScript[1]}`, CLIENT_DIR)));
    return true;
  }
  if (/^\/api\/campaigns\/[^/]+\/explain$/.test(path)) {
    json(response, 200, { plain: [] });
    return true;
  }
  return false;
}

/**
 * The CORS answers a relay or an issuer gives the page of the collector at ``origin`` (null: none): a preflight
 * (OPTIONS) allows ``method`` with the ``headers`` (the relay: Authorization, Content-Type and Dpdist-Pin; the issuer:
 * Authorization and Content-Type); every answer names the origin and exposes Retry-After.  True if the request was a
 * preflight (answered here).
 */
function cors(request, response, origin, method, headers = 'Authorization, Content-Type') {
  if (origin === null || request.headers.origin !== origin) return request.method === 'OPTIONS' && (response.writeHead(403).end(), true);
  response.setHeader('Access-Control-Allow-Origin', origin);
  response.setHeader('Access-Control-Expose-Headers', 'Retry-After');
  response.setHeader('Vary', 'Origin');
  if (request.method !== 'OPTIONS') return false;
  response.writeHead(204, {
    'Access-Control-Allow-Methods': method, 'Access-Control-Allow-Headers': headers, 'Access-Control-Max-Age': '600',
  });
  response.end();
  return true;
}

/** The public side of an issuer's token key (base64url SPKI with the id-RSASSA-PSS OID), for verifying tokens. */
function externalKey(tokenKeyText) {
  const tokenKey = new Uint8Array(Buffer.from(tokenKeyText, 'base64url'));
  return { tokenKey, tokenKeyText, publicKey: createPublicKey({ key: Buffer.from(tokenKey), format: 'der', type: 'spki' }) };
}

/** Stop every server these helpers started. */
export function stopAll() {
  for (const server of servers.splice(0)) stop(server);
}

/**
 * A relayed campaign's three parties.  ``issuer``: with an issuer (default), none (false), or another process's
 * (``{url, name, key, tokenKey}``: ``dpdist issuer``, its name, the key's name and its base64url token key); ``swap``: the relay serves its own
 * HPKE key; ``tamperIdentity``: the relay serves the identity with its own key too (else the collector's bytes);
 * ``tokensEach``: tokens per credential, the ceiling the issuer publishes with its key; ``identityTokensEach``: the one
 * the identity states (default ``tokensEach``; null: none, an identity made before issuers published it, whose
 * tokens take the v2 redemption context); ``credentials``: the credentials the issuer gave.
 */
export async function startRelayedCampaign({ campaign = 'c1', config = CONFIG, issuer: withIssuer = true, swap = false,
  tamperIdentity = false, tokensEach = 10, identityTokensEach = tokensEach, credentials = ['device-credential-1'], page = null } = {}) {
  // page: {connect: [origins], cors: bool} the collector serves the participate page, with that CSP (null: the relay's
  // and the issuer's origins); the relay and the issuer answer its CORS requests if cors
  const collectorKey = await ohttpKey();
  const relayKey = await ohttpKey(); // the attacking relay's own
  // an issuer of another process (``{url, name, key, tokenKey}``: dpdist issuer), or this one's own
  const external = withIssuer !== null && typeof withIssuer === 'object' ? withIssuer : null;
  const issuerKey = external !== null ? externalKey(external.tokenKey)
    : withIssuer ? (sharedIssuerKey ??= newIssuerKey()) : null; // one RSA key for all (0.5 s each to make)
  const issuerName = external?.name ?? 'issuer.test';
  const keyName = external?.key ?? campaign;
  const state = {
    relayReceived: [], // {reportId, token, sealed, openedByRelay}
    spentNonces: new Map(), // nonce -> {reportId, token}
    issuerRequests: [], // {credential, blinded (hex), answered: 'new'|'stored'|refusal code}
    issuerAnswers: new Map(), // credential + blinded -> answer
    issuerLeft: new Map(credentials.map((credential) => [credential, tokensEach])),
    loseAnswers: 0,
    collectorRequests: [],
    relayRequests: [],
    relayPinned: null, // {pin, challenge}: the identity the relay pinned at the first report it admitted
    relayRefusals: [], // {reportId, pin, code}: reports the relay refused for their pin
    relayDown: false, // the relay drops every report's connection unread
    tag: null, // the collector's own documents (``tagged``), served while set instead of the campaign's
    relayChallenge: null, // the challenge the relay verifies tokens under, when not the pinned identity's (a relay of an earlier version)
  };
  // the servers' origins are known once they listen; the documents are made after
  let collectorUrl;
  let relayUrl;
  let issuerUrl;
  let documents;

  // the identity names the issuer without a challenge; the config adds the challenge its pin gives (design, section 5)
  const issuerDoc = () => (issuerKey === null ? null : {
    url: issuerUrl, name: issuerName, key: keyName, token_type: 2, token_key: issuerKey.tokenKeyText, independent: true,
    ...(identityTokensEach === null ? {} : { tokens_each: identityTokensEach }),
  });
  const makeDocuments = async (key, documentConfig = config) => {
    const relay = { ohttp: key.ohttp, url: relayUrl };
    const issuer = issuerDoc();
    const identity = Buffer.from(sortedJson({ campaign, config: documentConfig, relay, issuer, colluding: 0, delta: 1e-8 }), 'ascii');
    const pin = sha256(identity).toString('hex');
    const label = issuer !== null && Object.hasOwn(issuer, 'tokens_each') ? CAMPAIGN_CONTEXT : EARLIER_CAMPAIGN_CONTEXT;
    const challenge = issuer === null ? null : Buffer.from(tokenChallenge(issuerName, await redemptionContext(pin, label)));
    const configDocument = {
      campaign, state: 'open', config: documentConfig,
      relay: { ...relay, pin, issuer: issuer === null ? null : { ...issuer, challenge: challenge.toString('base64url') } }, submit_token_required: false,
    };
    return { identity, pin, challenge, configDocument };
  };
  const serveCampaign = (request, response, docs) => {
    const path = new URL(request.url, 'http://x').pathname;
    if (path === `/api/campaigns/${campaign}/config`) return json(response, 200, docs.configDocument), true;
    if (path === `/api/campaigns/${campaign}/identity`) {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(docs.identity);
      return true;
    }
    return false;
  };

  const pageOrigin = () => (page !== null && page.cors !== false ? collectorUrl : null);
  collectorUrl = await listen(async (request, response) => {
    state.collectorRequests.push(`${request.method} ${request.url}`);
    if (request.method === 'GET' && serveCampaign(request, response, state.tag ?? documents.collector)) return;
    if (page !== null && request.method === 'GET' && await servePage(request, response, page.connect ?? [relayUrl, issuerUrl].filter(Boolean))) return;
    json(response, 404, { error: 'not_found', detail: request.url });
  });

  relayUrl = await listen(async (request, response) => {
    state.relayRequests.push(`${request.method} ${request.url}`);
    if (cors(request, response, pageOrigin(), 'PUT', 'Authorization, Content-Type, Dpdist-Pin')) return;
    if (request.method === 'GET') {
      const docs = swap ? { configDocument: documents.swapped.configDocument, identity: tamperIdentity ? documents.swapped.identity : documents.collector.identity } : documents.collector;
      if (serveCampaign(request, response, docs)) return;
    }
    const match = new URL(request.url, 'http://x').pathname.match(/^\/relay\/v1\/campaigns\/([^/]+)\/ohttp\/([^/]+)$/);
    if (request.method !== 'PUT' || match === null || decodeURIComponent(match[1]) !== campaign) return json(response, 404, { error: 'not_found' });
    const reportId = decodeURIComponent(match[2]);
    if (state.relayDown) {
      request.socket.destroy(); // the relay is down: nothing read, nothing stored
      return undefined;
    }
    const sealed = new Uint8Array(await readBody(request));
    // the identity the relay holds: pinned at the first report it admitted, from the collector (design, section 5)
    const held = state.relayPinned ?? { pin: documents.collector.pin, challenge: documents.collector.challenge };
    const pin = request.headers['dpdist-pin'] ?? null;
    const refuse = (code, detail) => (state.relayRefusals.push({ reportId, pin, code }), json(response, 409, { error: code, detail }));
    if (state.relayPinned !== null && documents.collector.pin !== state.relayPinned.pin) {
      return refuse('identity_changed', "the collector's config names another identity than the one this relay pinned");
    }
    if (pin !== held.pin) return refuse('pin_mismatch', 'the device was given another identity of the campaign than the relay holds');
    let token = null;
    if (issuerKey !== null) {
      const header = request.headers.authorization ?? '';
      const found = header.match(/^PrivateToken token="([A-Za-z0-9_-]+={0,2})"$/);
      const challenge = state.relayChallenge ?? held.challenge; // relayChallenge: a relay that derives another
      const unauthorized = (code) => json(response, 401, { error: code, detail: 'a report needs a token' }, {
        'WWW-Authenticate': `PrivateToken challenge="${challenge.toString('base64url')}", token-key="${issuerKey.tokenKeyText}"`,
      });
      if (found === null) return unauthorized('token_required');
      token = found[1];
      let nonce;
      try {
        ({ nonce } = verifyToken(Buffer.from(token, 'base64url'), { publicKey: issuerKey.publicKey, tokenKey: issuerKey.tokenKey, challenge }));
      } catch (error) {
        return unauthorized('invalid_token');
      }
      if (!boundTo(Buffer.from(token, 'base64url'), sealed)) {
        return json(response, 403, { error: 'token_not_bound', detail: 'this token was made for another report' });
      }
      const spent = state.spentNonces.get(nonce);
      if (spent !== undefined) {
        if (spent.reportId === reportId) return json(response, 202, { campaign, report_id: reportId, duplicate: true });
        return json(response, 403, { error: 'token_spent', detail: 'this token was spent on another report' });
      }
      state.spentNonces.set(nonce, { reportId, token });
    }
    state.relayPinned ??= held;
    const duplicate = state.relayReceived.some((entry) => entry.reportId === reportId);
    state.relayReceived.push({ reportId, token, sealed, openedByRelay: await openReport(relayKey, campaign, sealed) });
    json(response, 202, { campaign, report_id: reportId, duplicate });
  });

  issuerUrl = external !== null ? external.url.replace(/\/+$/, '') : issuerKey === null ? null : await listen(async (request, response) => {
    const path = new URL(request.url, 'http://x').pathname;
    if (cors(request, response, pageOrigin(), 'POST')) return;
    if (request.method === 'GET' && path === `/issuer/v1/keys/${campaign}`) {
      return json(response, 200, {
        name: campaign, token_type: 2, token_key: state.issuerServesKey ?? issuerKey.tokenKeyText, tokens_each: tokensEach,
      });
    }
    if (request.method !== 'POST' || path !== `/issuer/v1/keys/${campaign}/token-request`) return json(response, 404, { error: 'not_found' });
    const body = await readBody(request);
    const credential = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    const record = { credential, blinded: body.subarray(3).toString('hex') };
    state.issuerRequests.push(record);
    if (!state.issuerLeft.has(credential)) return (record.answered = 'unauthorized'), json(response, 401, { error: 'unauthorized', detail: 'unknown credential' });
    if (request.headers['content-type'] !== 'application/private-token-request' || body.length !== 259 || body.readUInt16BE(0) !== 2 ||
      body[2] !== issuerKey.tokenKeyId[31]) {
      return (record.answered = 'bad_request'), json(response, 422, { error: 'invalid_token_request', detail: 'not a TokenRequest of this key' });
    }
    const stored = `${credential} ${record.blinded}`;
    let answer = state.issuerAnswers.get(stored);
    if (answer === undefined) {
      if (state.issuerLeft.get(credential) <= 0) return (record.answered = 'exhausted'), json(response, 403, { error: 'exhausted', detail: 'no token left' });
      state.issuerLeft.set(credential, state.issuerLeft.get(credential) - 1); // lowered before the answer
      answer = blindSign(issuerKey, body.subarray(3));
      state.issuerAnswers.set(stored, answer);
      record.answered = 'new';
    } else {
      record.answered = 'stored';
    }
    if (state.loseAnswers > 0) {
      state.loseAnswers -= 1;
      record.lost = true;
      request.socket.destroy(); // the answer is lost on its way
      return undefined;
    }
    response.writeHead(200, { 'Content-Type': 'application/private-token-response' });
    response.end(answer);
    return undefined;
  });

  documents = { collector: await makeDocuments(collectorKey), swapped: await makeDocuments(relayKey) };
  return {
    campaign, config, collectorUrl, relayUrl, issuerUrl, collectorKey, relayKey, issuerKey, state,
    pin: documents.collector.pin, swappedPin: documents.swapped.pin, identity: documents.collector.identity,
    challenge: documents.collector.challenge,
    /** The collector's documents of the campaign with ``other`` as its config (its key): a tag, or a changed identity. */
    tagged: (other) => makeDocuments(collectorKey, other),
    /** The collector now serves the campaign with ``other`` as its config to everyone (its identity changed). */
    changeIdentity: async (other) => {
      documents.collector = await makeDocuments(collectorKey, other);
      return documents.collector.pin;
    },
  };
}
