// A relayed campaign's route from the device (client.js) to its dpdist relay, as dpdist.client._relay_route is Python's:
// the Privacy Pass tokens of the campaign's issuer, one per report, held before any draw (tokens.js), and each report
// an RFC 9458 request to the key configuration of the campaign's identity (relay.js), sent alone under its one token.

import { ServiceError } from './errors.js';
import { ReportBatch } from './protocols/_base.js';
import { encodeRecord } from './wire.js';
import { bindingNonce, encapsulateForRelay, relayReportPath } from './relay.js';
import { PIN_HEADER, originOf } from './identity.js';
import { TokenWallet } from './tokens.js';
import { relayAck } from './acks.js';
import { REQUEST_CONTENT_TYPE } from './ohttp.js';

/** Privacy Pass (privacypass.js, with its 228 KB of vendored libraries), imported for a campaign with an issuer only. */
const privacyPass = () => import('./privacypass.js');

/**
 * The issuer's refusal ``error`` of a token request, after this device obtained ``obtained`` tokens in the same call: the
 * same status and code, saying that those tokens are kept (``held`` spare of the ``needed``) for the next reports.
 */
function tokensKept(error, obtained, held, needed, campaignId) {
  const kept = new ServiceError(
    `${error.message} The ${obtained} token(s) obtained before this refusal are kept for the next reports of campaign ` +
      `'${campaignId}': ${held} held of the ${needed} needed. Nothing was drawn or sent.`,
    { status: error.status, code: error.code },
  );
  kept.cause = error;
  return kept;
}

/** The route of one relayed campaign of a Client: its relay, key configuration, issuer and the device's tokens. */
export class RelayRoute {
  /**
   * @param {import('./client.js').Client} client the device's Client: its requests, ledger lock, storage and issuer option
   * @param {object} relay the campaign's relay as its identity names it (``{url, ohttp, pin, issuer}``)
   * @param {object} config its Oblivious HTTP key configuration (relay.js relayKeyConfig)
   * @param {object|null} info its issuer, checked (identity.js checkedIssuer), or null for a campaign without tokens
   */
  constructor(client, relay, config, info) {
    this.client = client;
    this.relay = relay;
    this.config = config;
    this.info = info;
    this.wallet = new TokenWallet(client._memoStorage);
    this._issuerKeyChecked = false; // the issuer's live token key was compared with the campaign's
  }

  /**
   * Hold tokens of the campaign's issuer for ``count`` reports (resolves to how many the device holds), before they
   * are drawn: a relayed campaign with an issuer takes one token per report, so that
   * ``submit``, ``submitMany`` and ``add`` call this first and a refusal (no credential, the issuer's) never follows a
   * draw.  A request whose answer was lost is sent again, the same bytes: the issuer answers it from its store.
   * Tokens are kept (``memoStorage``, key ``dpdist-tokens``) until a report spends them, also those obtained before the
   * issuer refuses a later one (a credential exhausted): the refusal says how many.  Other campaigns: 0.
   */
  async tokens(count) {
    const { info } = this;
    if (info === null) return 0;
    const { base64UrlEncode, createTokenRequest, finalizeToken } = await privacyPass();
    for (let obtained = 0; ; obtained++) {
      const { spare, pending } = await this.client._withLedgerLock(() => this.wallet.view(info.scope));
      if (spare.length >= count) return spare.length;
      const credential = this.client.issuer?.credential;
      if (typeof credential !== 'string' || credential === '') {
        throw new ServiceError(
          `Campaign '${this.client.campaignId}' takes each report with a token of its issuer (${info.origin}): give this device's ` +
            'credential from that issuer (the issuer option, {credential, url}). Nothing was drawn or sent.',
          { code: 'credential_required' },
        );
      }
      await this._checkIssuerKey();
      let entry = pending[0];
      if (entry === undefined) { // the token's nonce commits to the key its report will be sealed with (relay.js)
        const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
        entry = { ...await createTokenRequest(info.tokenKey, info.challenge, await bindingNonce(info.challenge, seed)), seed: base64UrlEncode(seed) };
        await this.client._withLedgerLock(() => this.wallet.addPending(info.scope, entry));
      }
      const response = await this._requestToken(entry.request, credential).catch((error) => {
        throw obtained > 0 && error instanceof ServiceError ? tokensKept(error, obtained, spare.length, count, this.client.campaignId) : error;
      });
      let token;
      try {
        token = await finalizeToken(info.tokenKey, entry, response);
      } catch (error) {
        // the issuer keeps its answer to this request: asking again would give the same bad one
        await this.client._withLedgerLock(() => this.wallet.drop(info.scope, entry.request));
        throw error;
      }
      await this.client._withLedgerLock(() => this.wallet.finish(info.scope, entry.request, base64UrlEncode(token)));
    }
  }

  /**
   * ``tokens`` for ``reports`` new reports and every report drawn but not yet sent without a token bound to it
   * (``pending`` queued reports, and the reports of the ``unsent`` batches): the tokens they will take when sent.
   */
  async tokensFor(reports, pending, unsent) {
    if (this.info === null) return;
    const { bound } = await this.client._withLedgerLock(() => this.wallet.view(this.info.scope));
    let owed = pending;
    for (const { batch, batchId } of unsent) {
      for (let index = 0; index < batch.length; index++) if (!Object.hasOwn(bound, `${batchId}.${index}`)) owed += 1;
    }
    await this.tokens(owed + reports);
  }

  /** The issuer's token key (``GET /issuer/v1/keys/{key}``) must be the campaign's, else ``issuer_key_mismatch`` (once). */
  async _checkIssuerKey() {
    const { info } = this;
    if (this._issuerKeyChecked) return;
    const response = await this.client._request('GET', '', { url: `${info.url}/issuer/v1/keys/${encodeURIComponent(info.key)}` });
    const published = await response.json();
    const { base64UrlDecode } = await privacyPass();
    let key = null;
    try {
      key = base64UrlDecode(published?.token_key, 'token_key');
    } catch {
      // below
    }
    if (key === null || key.length !== info.tokenKey.length || !key.every((byte, index) => byte === info.tokenKey[index])) {
      throw new ServiceError(
        `The issuer ${info.origin} signs tokens of key '${info.key}' with another key than the one campaign '${this.client.campaignId}' ` +
          'names: its tokens would not be admitted (or the issuer could tell devices apart by key). Nothing was drawn or sent.',
        { code: 'issuer_key_mismatch' },
      );
    }
    if (info.tokensEach !== null && published?.tokens_each !== info.tokensEach) {
      throw new ServiceError(
        `Campaign '${this.client.campaignId}' states that a credential of the issuer's key '${info.key}' gives at most ${info.tokensEach} ` +
          `token(s); the issuer ${info.origin} publishes ${JSON.stringify(published?.tokens_each ?? null)}: the campaign's ` +
          'guarantee would count each colluding credential as fewer reports than it gives. Nothing was drawn or sent.',
        { code: 'tokens_each_mismatch' },
      );
    }
    this._issuerKeyChecked = true;
  }

  /** The issuer's TokenResponse to the TokenRequest ``request`` (base64url), retried with the same bytes. */
  async _requestToken(request, credential) {
    const { info } = this;
    const { TOKEN_REQUEST_TYPE, TOKEN_RESPONSE_TYPE, base64UrlDecode } = await privacyPass();
    const response = await this.client._request('POST', '', {
      url: `${info.url}/issuer/v1/keys/${encodeURIComponent(info.key)}/token-request`,
      body: base64UrlDecode(request),
      headers: { 'Content-Type': TOKEN_REQUEST_TYPE, Accept: TOKEN_RESPONSE_TYPE },
      authorization: `Bearer ${credential}`,
    });
    const type = response.headers?.get?.('Content-Type') ?? '';
    if (type.split(';')[0].trim().toLowerCase() !== TOKEN_RESPONSE_TYPE) {
      throw new ServiceError(`The issuer answered a token request with ${JSON.stringify(type)}, not ${TOKEN_RESPONSE_TYPE}.`, { code: 'bad_token_response' });
    }
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * A campaign collected through a relay (its config has ``relay``): each report an RFC 9458 request to the identity's
   * key configuration, sent alone to the relay the identity names (``relay.url``), under ``<batchId>.<row>``, without a batch id inside
   * (nothing per device reaches the collector), with the identity's pin (``Dpdist-Pin``: the relay refuses a report
   * made under another identity of the campaign than the one it holds) and, when the campaign has an issuer, its own
   * Privacy Pass token: the one bound to that report id, the report encapsulated once with the token's key (its nonce
   * commits to it: relay.js) and kept, so that a resend carries the same token and bytes.  The tokens of a batch stay bound
   * until the relay has acknowledged every report of it: a resend after a failure (the relay down, an answer lost) sends
   * the reports already acknowledged again with their own tokens (duplicates), never new ones.  Resolves to the relay's
   * acks.
   */
  async send(batch, batchId) {
    const { relay } = this;
    const base = String(relay.url ?? '').replace(/\/+$/, '');
    originOf(base, `The relay URL of campaign '${this.client.campaignId}' (relay.url of its identity)`);
    const { info } = this;
    const acks = [];
    try {
      for (let index = 0; index < batch.length; index++) {
        const reportId = `${batchId}.${index}`;
        const { sealed, authorization } = await this._report(batch, index, reportId);
        let ack;
        try {
          ack = await this.client._request('PUT', relayReportPath(this.client.campaignId, reportId), {
            url: `${base}${relayReportPath(this.client.campaignId, reportId)}`,
            body: sealed,
            headers: { 'Content-Type': REQUEST_CONTENT_TYPE, [PIN_HEADER]: relay.pin },
            authorization,
            acknowledges: relayAck(this.client.campaignId, reportId),
          });
        } catch (error) {
          throw await this._refused(reportId, error);
        }
        acks.push(ack);
      }
    } catch (error) {
      if (error instanceof ServiceError) Object.assign(error, { batch, batchId }); // resend with send(batch, {batchId})
      throw error;
    }
    if (info !== null) { // every report of the batch acknowledged: their tokens are spent, and forgotten
      const ids = Array.from({ length: batch.length }, (_, index) => `${batchId}.${index}`);
      await this.client._withLedgerLock(() => this.wallet.release(info.scope, ...ids));
    }
    return { batch_id: batchId, relayed: acks.length, duplicates: acks.filter((ack) => ack.duplicate).length };
  }

  /**
   * The report ``index`` of ``batch`` as an RFC 9458 request for the relay, and its ``authorization``: encapsulated with
   * its token's key once and kept in the wallet before it is sent (a resend takes the kept bytes; a report an earlier
   * version sealed in dpdist's envelope is encapsulated again with its token's seed, kept until its batch is
   * acknowledged), else (a campaign without tokens) with a fresh key.
   */
  async _report(batch, index, reportId) {
    const rowBytes = batch.bytes.length / Math.max(batch.length, 1);
    const one = new ReportBatch(batch.config, batch.floatKeys, batch.descr, [1, ...batch.shape.slice(1)], batch.bytes.slice(index * rowBytes, (index + 1) * rowBytes));
    const seal = (seed) => encapsulateForRelay(this.config, this.client.campaignId, encodeRecord(one), 'application/octet-stream', seed);
    const { info } = this;
    if (info === null) return { sealed: await seal(undefined), authorization: undefined };
    const { authorizationHeader, base64UrlDecode, base64UrlEncode } = await privacyPass();
    let bound = await this.client._withLedgerLock(() => this.wallet.bind(info.scope, reportId));
    if (bound === null) {
      await this.tokens(1); // a batch drawn by randomize() and sent here: its token now
      bound = await this.client._withLedgerLock(() => this.wallet.bind(info.scope, reportId));
    }
    let sealed = bound.ohttp === undefined ? null : base64UrlDecode(bound.ohttp);
    if (sealed === null) { // encapsulated once with its token's key, kept before it leaves the device
      sealed = await seal(base64UrlDecode(bound.seed));
      await this.client._withLedgerLock(() => this.wallet.seal(info.scope, reportId, base64UrlEncode(sealed)));
    }
    return { sealed, authorization: authorizationHeader(base64UrlDecode(bound.token)) };
  }

  /**
   * The error to throw for the relay's refusal ``error`` of report ``reportId``: a token the relay saw spent on another
   * report is released (a resend takes another, and encapsulates again); one the relay does not admit (401, 403 ``token_not_bound``) was checked against the identity's key and challenge when it was
   * finalized and bound to the report's key when it was asked for: the relay checks otherwise (a relay older than the
   * identity's redemption context), and another token would be refused too, and spent: this one stays with its report.
   */
  async _refused(reportId, error) {
    const { info } = this;
    if (info === null || !(error instanceof ServiceError)) return error;
    if (error.code === 'token_spent') {
      await this.client._withLedgerLock(() => this.wallet.release(info.scope, reportId));
    }
    if (error.status !== 401 && error.code !== 'token_not_bound') return error;
    const kept = new ServiceError(
      `${error.message} This report's token verifies under the issuer key and the token challenge of the ` +
        "campaign's identity, bound to the report: the relay checks tokens otherwise (a relay older than the identity's " +
        "redemption context, or one that does not verify as the campaign states). The token is kept for the report's resend.",
      { status: error.status, code: error.code },
    );
    kept.cause = error;
    return kept;
  }
}
