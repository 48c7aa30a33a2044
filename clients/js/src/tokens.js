// The Privacy Pass tokens a device holds for its relayed campaigns (docs/how-to/anonymous-collection.md, "Anonymous collection"): one
// token per report, obtained from the campaign's issuer before the report is drawn, each with the seed of the HPKE key
// its report will be encapsulated with (the token's nonce commits to that key: relay.js, dpdist._wire._binding), then
// bound to the report's id when it is first sent; the report is encapsulated once with the seed's key and its request's
// bytes kept, so that a resend of the report carries the same token and bytes (the relay calls it a duplicate) and no
// token is spent twice.  Tokens are scarce (the issuer gives a credential a few), so nothing obtained is thrown away:
//
// * pending: a token request sent to the issuer whose answer has not arrived (with its seed); it is sent again, the same
//   bytes, until it is answered (the issuer answers a repeated request from its store, without counting another token);
// * spare: ``{token, seed}`` not yet bound to a report (one obtained for a value the ledger then refused waits for the next);
// * bound: report id -> ``{token, seed}``, with ``ohttp`` (its request's bytes) once encapsulated, until the relay
//   acknowledges every report of its batch (a resend of the batch carries the same tokens and bytes, also for the
//   reports acknowledged before the failure: the relay calls them duplicates).  An entry an earlier version kept
//   with ``dpdist`` (the report sealed in dpdist's deprecated envelope) is encapsulated again with its seed.
//
// A seed, with the request's bytes, opens the report: the storage is the device's own.
//
// Kept per campaign under its TokenChallenge (base64url), in the Client's storage (``memoStorage``) under the key
// ``dpdist-tokens`` when it has one (a page reloaded keeps them), else in memory.  Every change reads the storage
// again first (another tab of the origin may have changed it) and runs under the Client's Web Lock.

import { IncompatibleStateError } from './errors.js';

/** The storage key of the device's tokens. */
export const TOKENS_KEY = 'dpdist-tokens';
const FORMAT = 'dpdist-tokens';
const VERSION = 2; // tokens with their seeds and sealed reports (version 1: tokens bound to no report)

function emptyState() {
  return { format: FORMAT, version: VERSION, campaigns: {} };
}

/** The tokens of a device, in ``storage`` (getItem/setItem) or in memory (null). */
export class TokenWallet {
  constructor(storage = null) {
    this._storage = storage;
    this._memory = emptyState();
  }

  _load() {
    if (this._storage === null) return this._memory;
    const text = this._storage.getItem(TOKENS_KEY);
    if (text === null || text === undefined) return emptyState();
    let state;
    try {
      state = JSON.parse(text);
    } catch {
      // (not JSON.parse's message: V8 quotes the text, tokens)
      throw new IncompatibleStateError(`The tokens under '${TOKENS_KEY}' are not valid JSON; they were not overwritten.`);
    }
    if (state === null || state.format !== FORMAT || state.version !== VERSION || typeof state.campaigns !== 'object') {
      throw new IncompatibleStateError(`The value under '${TOKENS_KEY}' is not a dpdist token store (version ${VERSION}); it was not overwritten.`);
    }
    return state;
  }

  _save(state) {
    if (this._storage === null) this._memory = state;
    else this._storage.setItem(TOKENS_KEY, JSON.stringify(state));
  }

  /** ``change(campaign)`` on the campaign ``scope``'s entry, saved after; resolves to what ``change`` returns. */
  _update(scope, change) {
    const state = this._load();
    const campaign = (state.campaigns[scope] ??= { pending: [], spare: [], bound: {} });
    const result = change(campaign);
    if (campaign.pending.length === 0 && campaign.spare.length === 0 && Object.keys(campaign.bound).length === 0) {
      delete state.campaigns[scope];
    }
    this._save(state);
    return result;
  }

  /** ``{pending, spare, bound}`` of the campaign ``scope`` (copies). */
  view(scope) {
    const campaign = this._load().campaigns[scope];
    return campaign === undefined
      ? { pending: [], spare: [], bound: {} }
      : { pending: [...campaign.pending], spare: [...campaign.spare], bound: { ...campaign.bound } };
  }

  /** Keep a token request until its answer arrives (``{request, tokenInput, inv, seed}``, base64url). */
  addPending(scope, pending) {
    this._update(scope, (campaign) => campaign.pending.push(pending));
  }

  /**
   * The request ``request`` was answered with ``token`` (base64url): the token becomes spare.  False (and nothing kept)
   * if the request was no longer pending: another tab finished it already, and keeps that same token.
   */
  finish(scope, request, token) {
    return this._update(scope, (campaign) => {
      const index = campaign.pending.findIndex((entry) => entry.request === request);
      if (index < 0) return false;
      const [{ seed }] = campaign.pending.splice(index, 1);
      campaign.spare.push({ token, seed });
      return true;
    });
  }

  /** Forget the pending request ``request`` (its answer was not a token: asking again would get the same answer). */
  drop(scope, request) {
    this._update(scope, (campaign) => {
      campaign.pending = campaign.pending.filter((entry) => entry.request !== request);
    });
  }

  /**
   * The token of report ``reportId``, ``{token, seed}`` with its request's bytes once encapsulated: the one bound to it,
   * else a spare one bound to it now; null if none is left.
   */
  bind(scope, reportId) {
    return this._update(scope, (campaign) => {
      if (Object.hasOwn(campaign.bound, reportId)) return { ...campaign.bound[reportId] };
      const entry = campaign.spare.shift();
      if (entry === undefined) return null;
      campaign.bound[reportId] = entry;
      return { ...entry };
    });
  }

  /** Report ``reportId`` was encapsulated with its token's seed: its request's bytes ``sealed`` (base64url) are kept. */
  seal(scope, reportId, sealed) {
    this._update(scope, (campaign) => {
      campaign.bound[reportId].ohttp = sealed;
    });
  }

  /** Reports ``reportIds`` were acknowledged (or their tokens refused for good): their tokens are spent, and forgotten. */
  release(scope, ...reportIds) {
    this._update(scope, (campaign) => {
      for (const reportId of reportIds) delete campaign.bound[reportId];
    });
  }
}
