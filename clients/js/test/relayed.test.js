// The device algorithm of a relayed campaign (docs/explanation/threat-model.md) against a collector, a relay and
// a Privacy Pass issuer in-process (relayed-fakes.js: node http servers on 127.0.0.1 that stop by themselves): where the
// config and keys come from (the identity and its pin: key substitution by the relay, a config of the collector's own
// for one device), one token per report before its draw, retries that resend the same token request and the same token
// (a relay outage burns none), and the refusals, each before anything is drawn.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { Client, InvalidParameterError, OutOfDomainError, RandomSource, ServiceError } from '../src/index.js';
import { checkedIssuer } from '../src/identity.js';
import { tokenChallenge } from '../src/privacypass.js';
import { TOKENS_KEY } from '../src/tokens.js';
import { memoryStorage } from './helpers.js';
import { verifyToken } from './privacypass-helpers.js';
import { openReport, startRelayedCampaign, stopAll } from './relayed-fakes.js';

after(stopAll);

const CREDENTIAL = 'device-credential-1';

/** crypto.getRandomValues for the randomizers, counting how often they draw (0: nothing was drawn). */
function countingSource() {
  const counter = { fills: 0 };
  const source = new RandomSource((words) => {
    counter.fills += 1;
    return crypto.getRandomValues(words);
  });
  return { source, counter };
}

function device(server, options = {}) {
  const storage = options.memoStorage ?? memoryStorage();
  const { source, counter } = countingSource();
  const client = new Client(server, 'c1', { memoStorage: storage, locks: null, retryDelayMs: 1, source, ...options });
  return { client, storage, counter };
}

/** The report a relayed message holds, if ``key`` opens it: the dpdist record's one report byte. */
async function reportIn(key, message) {
  const body = await openReport(key, 'c1', message.sealed);
  return body === null ? null : body.at(-1);
}

function charges(storage) {
  const text = storage.getItem('dpdist-ledger');
  return text === null ? [] : JSON.parse(text).charges;
}

/** ``promise`` is refused with ``code`` with nothing drawn, charged or sent (the relay holds ``relayed`` reports still). */
async function refusedBeforeAnyDraw(promise, code, parties, { storage, counter }, { relayed = 0 } = {}) {
  await assert.rejects(promise, (error) => error instanceof ServiceError && error.code === code);
  assert.equal(counter.fills, 0, 'nothing was drawn');
  assert.deepEqual(charges(storage), [], 'nothing was charged');
  assert.equal(parties.state.relayReceived.length, relayed, 'nothing reached the relay');
  assert.equal(parties.state.relayRefusals.length, 0, 'nothing was sent to the relay');
}

/** The tokens the device holds for the campaign (its one entry in the token store): {pending, spare, bound}. */
function heldTokens(storage) {
  const campaigns = Object.values(JSON.parse(storage.getItem(TOKENS_KEY) ?? '{"campaigns": {}}').campaigns);
  assert.ok(campaigns.length <= 1);
  return campaigns[0] ?? { pending: [], spare: [], bound: {} };
}

/** globalThis.fetch, with ``change(document)`` applied to the campaign config the server returns. */
function changingConfig(change) {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!String(url).endsWith('/config')) return response;
    return Response.json(change(await response.json()));
  };
}

test("a device given the collector's URL takes the campaign from its identity, one token per report, each sealed report to the relay with its pin and token", async () => {
  const parties = await startRelayedCampaign();
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const { client, storage } = device(parties.collectorUrl, { issuer, batchSize: 3 });
  const acks = await client.submitMany([1, 2, 3, 4, 5]);
  assert.deepEqual(acks.map((ack) => ack.relayed), [3, 2]);
  // the config, then the identity's bytes (always: the config must name their SHA-256); nothing sent to the collector
  assert.deepEqual(parties.state.collectorRequests, ['GET /api/campaigns/c1/config', 'GET /api/campaigns/c1/identity']);
  assert.deepEqual(parties.state.relayRequests.filter((line) => line.startsWith('GET')), []);
  const campaign = await client.campaign();
  assert.equal(campaign.relay.pin, parties.pin);
  assert.equal(campaign.relay.issuer.challenge, undefined); // the identity's issuer: no challenge, the device derives it
  assert.equal(parties.state.relayReceived.length, 5);
  assert.deepEqual(parties.state.relayPinned?.pin, parties.pin); // every report named the pin (Dpdist-Pin)
  assert.deepEqual(parties.state.relayRefusals, []);
  assert.equal(parties.state.spentNonces.size, 5); // five different tokens, each valid for the pin's challenge
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new', 'new', 'new', 'new', 'new']);
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 5);
  const reports = [];
  for (const message of parties.state.relayReceived) {
    assert.equal(message.openedByRelay, null);
    reports.push(await reportIn(parties.collectorKey, message));
  }
  assert.ok(reports.every((report) => Number.isInteger(report) && report < 8));
  assert.equal(charges(storage).reduce((total, charge) => total + charge.reports, 0), 5);
  assert.equal(storage.getItem(TOKENS_KEY), JSON.stringify({ format: 'dpdist-tokens', version: 2, campaigns: {} })); // all spent
});

test('key substitution: a relay serving its own HPKE key never gets a report it can open', async () => {
  const parties = await startRelayedCampaign({ swap: true, tamperIdentity: true });
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  // the collector's URL: the relay's config is never read
  const honest = device(parties.collectorUrl, { issuer });
  await honest.client.submit(3);
  assert.equal(parties.state.relayReceived.length, 1);
  assert.equal(parties.state.relayReceived[0].openedByRelay, null);
  assert.notEqual(await reportIn(parties.collectorKey, parties.state.relayReceived[0]), null); // the collector opens it
  // the relay's URL with the pin: its identity (its own key) does not hash to the pin
  const pinned = device(parties.relayUrl, { pin: parties.pin, issuer });
  await refusedBeforeAnyDraw(pinned.client.submit(3), 'pin_mismatch', parties, pinned, { relayed: 1 });
  // the relay's URL alone: refused, whatever key it serves (its own identity names it as the relay)
  const bare = device(parties.relayUrl, { issuer });
  await refusedBeforeAnyDraw(bare.client.submit(3), 'pin_required', parties, bare, { relayed: 1 });
  assert.equal(parties.state.issuerRequests.length, 1); // the honest device's token only
});

test("with the pin, a device takes the campaign from the relay's URL; a config naming another pin than the identity is refused", async () => {
  const parties = await startRelayedCampaign();
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const { client } = device(parties.relayUrl, { pin: parties.pin, issuer });
  await client.submitMany([0, 7]);
  assert.equal(parties.state.relayReceived.length, 2);
  for (const message of parties.state.relayReceived) assert.notEqual(await reportIn(parties.collectorKey, message), null);
  assert.deepEqual(parties.state.relayRequests.filter((line) => line.startsWith('GET')), ['GET /api/campaigns/c1/config', 'GET /api/campaigns/c1/identity']);
  // a relay that passes the identity on but serves a config of its own (its key, its pin): the two pins differ
  const lying = await startRelayedCampaign({ swap: true, tamperIdentity: false });
  const misled = device(lying.relayUrl, { pin: lying.pin, issuer: { credential: CREDENTIAL, url: lying.issuerUrl } });
  await refusedBeforeAnyDraw(misled.client.submit(1), 'pin_mismatch', lying, misled);
  // the pin of the relay's own identity is not the campaign's: a device given it is refused by the collector's identity
  assert.notEqual(lying.swappedPin, lying.pin);
  const collectorPinned = device(lying.collectorUrl, { pin: lying.swappedPin, issuer: { credential: CREDENTIAL, url: lying.issuerUrl } });
  await refusedBeforeAnyDraw(collectorPinned.client.submit(1), 'pin_mismatch', lying, collectorPinned);
  // a server whose config names no pin, or no relay, while the device has the pin: refused too
  for (const change of [(doc) => ({ ...doc, relay: { ...doc.relay, pin: undefined } }), (doc) => ({ ...doc, relay: undefined })]) {
    const other = device(parties.collectorUrl, { pin: parties.pin, issuer, fetch: changingConfig(change) });
    await refusedBeforeAnyDraw(other.client.submit(1), 'pin_mismatch', parties, other, { relayed: 2 });
  }
});

test("an honest relay's URL without the pin is refused too; a relayed campaign without an issuer sends with its pin and no token", async () => {
  const parties = await startRelayedCampaign({ issuer: false });
  const bare = device(parties.relayUrl);
  await refusedBeforeAnyDraw(bare.client.submit(3), 'pin_required', parties, bare);
  const { client } = device(parties.collectorUrl);
  const ack = await client.submit(4);
  assert.equal(ack.relayed, 1);
  assert.equal(parties.state.relayReceived[0].token, null);
  assert.equal(parties.state.relayPinned.pin, parties.pin); // the report named the pin: the relay admitted it
  assert.equal(await reportIn(parties.collectorKey, parties.state.relayReceived[0]) < 8, true);
  assert.equal(await client.prepareTokens(3), 0); // nothing to hold
});

test('a device given an issuer refuses a relayed campaign that admits anyone, before anything is drawn or its credential sent', async () => {
  const parties = await startRelayedCampaign({ issuer: false });
  const issuer = { credential: CREDENTIAL, url: 'https://issuer.example.org' };
  const given = device(parties.collectorUrl, { issuer });
  await refusedBeforeAnyDraw(given.client.submit(1), 'issuer_mismatch', parties, given);
  await assert.rejects(given.client.campaign(), (error) => error.code === 'issuer_mismatch' && /admits anyone/.test(error.message));
  const onlyUrl = device(parties.collectorUrl, { issuer: { url: 'https://issuer.example.org' } }); // expects that issuer, no credential yet
  await refusedBeforeAnyDraw(onlyUrl.client.submitMany([1, 2]), 'issuer_mismatch', parties, onlyUrl);
  // given the issuer after loading the campaign (as the page does): every way to draw or send refuses
  const late = device(parties.collectorUrl);
  await late.client.campaign();
  late.client.issuer = issuer;
  for (const attempt of [() => late.client.submit(1), () => late.client.add(1), () => late.client.prepareTokens(1)]) {
    await refusedBeforeAnyDraw(attempt(), 'issuer_mismatch', parties, late);
  }
  assert.throws(() => late.client.randomize([1]), (error) => error.code === 'issuer_mismatch');
  late.client.issuer = null;
  const batch = late.client.randomize([1]); // a report drawn before the device was given its issuer
  late.client.issuer = issuer;
  await assert.rejects(late.client.send(batch), (error) => error.code === 'issuer_mismatch');
  assert.equal(parties.state.relayReceived.length + parties.state.relayRefusals.length, 0);
});

test('the issuer option: a credential needs its issuer URL; malformed options are refused naming the option', async () => {
  const parties = await startRelayedCampaign();
  const secret = 'do-not-print-me';
  const refused = (issuer, pattern) => {
    assert.throws(() => new Client(parties.collectorUrl, 'c1', { memoStorage: null, issuer }), (error) =>
      error instanceof InvalidParameterError && pattern.test(error.message) && !error.message.includes(secret));
    const client = new Client(parties.collectorUrl, 'c1', { memoStorage: null });
    assert.throws(() => { client.issuer = issuer; }, (error) => error instanceof InvalidParameterError && pattern.test(error.message));
    assert.equal(client.issuer, null); // unchanged
  };
  refused({ credential: secret }, /'issuer\.url' option of Client is required with 'issuer\.credential'/);
  refused({ credential: secret, url: null }, /'issuer\.url' option of Client is required/);
  refused({ credential: secret, url: 'issuer.example.org' }, /'issuer\.url' option of Client must be an absolute http\(s\) URL/);
  refused({ credential: '', url: parties.issuerUrl }, /'issuer\.credential' option of Client must be a non-empty string/);
  refused({ credential: secret, issuerUrl: parties.issuerUrl }, /takes 'credential' and 'url' only/);
  refused('just-a-credential', /'issuer' option of Client must be null or \{credential, url\}/);
  const client = new Client(parties.collectorUrl, 'c1', { memoStorage: null, issuer: { credential: secret, url: `${parties.issuerUrl}/` } });
  assert.deepEqual(client.issuer, { credential: secret, url: `${parties.issuerUrl}/` });
  assert.deepEqual(new Client(parties.collectorUrl, 'c1', { memoStorage: null, issuer: { url: parties.issuerUrl } }).issuer, { credential: null, url: parties.issuerUrl });
  assert.equal(parties.state.issuerRequests.length + parties.state.collectorRequests.length, 0); // refused on the device
});

test('refusals about the issuer come before any draw: no credential, another issuer, another key, a wrong credential', async () => {
  const parties = await startRelayedCampaign();
  const none = device(parties.collectorUrl);
  await refusedBeforeAnyDraw(none.client.submit(1), 'credential_required', parties, none);
  // the collector names an issuer of its own (here: the campaign's issuer is not the one the credential is of)
  const elsewhere = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: 'https://issuer.example.org/' } });
  await refusedBeforeAnyDraw(elsewhere.client.submit(1), 'issuer_mismatch', parties, elsewhere);
  const wrong = device(parties.collectorUrl, { issuer: { credential: 'not-a-credential', url: parties.issuerUrl } });
  await refusedBeforeAnyDraw(wrong.client.submit(1), 'unauthorized', parties, wrong);
  parties.state.issuerServesKey = (await import('./privacypass-helpers.js')).newIssuerKey().tokenKeyText;
  const rotated = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: parties.issuerUrl } });
  await refusedBeforeAnyDraw(rotated.client.submit(1), 'issuer_key_mismatch', parties, rotated);
  // the credential went to the campaign's issuer once (the wrong one), never to another
  assert.deepEqual(parties.state.issuerRequests.map((request) => [request.credential, request.answered]), [['not-a-credential', 'unauthorized']]);
});

test("a campaign's TokenChallenge is the one its pin and its issuer's name give (redemption context v3)", async () => {
  const parties = await startRelayedCampaign();
  const { relay } = await (await fetch(`${parties.collectorUrl}/api/campaigns/c1/config`)).json();
  const identity = JSON.parse(parties.identity.toString('ascii'));
  assert.equal(identity.issuer.challenge, undefined); // the identity names no challenge: it would depend on its own hash
  const published = relay.issuer.challenge;
  const checked = await checkedIssuer(identity.issuer, parties.pin, 'c1', published);
  assert.equal(checked.origin, parties.issuerUrl);
  assert.equal(Buffer.from(checked.challenge).toString('base64url'), published);
  assert.deepEqual(Buffer.from(checked.challenge), parties.challenge);
  assert.deepEqual((await checkedIssuer(identity.issuer, parties.pin, 'c1', null)).challenge, checked.challenge); // none published
  const otherPin = parties.pin.replace(/^./, (digit) => (digit === '0' ? '1' : '0'));
  await assert.rejects(checkedIssuer(identity.issuer, otherPin, 'c1', published), (error) => error.code === 'challenge_mismatch');
  await assert.rejects(checkedIssuer({ ...identity.issuer, name: 'other.test' }, parties.pin, 'c1', published), (error) => error.code === 'challenge_mismatch');
  await assert.rejects(checkedIssuer(identity.issuer, parties.pin, 'c1', 'not base64!'), (error) => error.code === 'challenge_mismatch');
  await assert.rejects(checkedIssuer({ ...identity.issuer, token_type: 1 }, parties.pin, 'c1', published), (error) => error.code === 'unsupported_token_type');
  // the identity states its issuer's tokens_each (v3): a device of the version before, which reads no tokens_each and
  // derives the v2 context, finds another challenge than the one published and refuses, before any draw
  assert.equal(identity.issuer.tokens_each, 10);
  const { tokens_each: ignored, ...previous } = identity.issuer;
  await assert.rejects(checkedIssuer(previous, parties.pin, 'c1', published), (error) => error.code === 'challenge_mismatch');
  for (const bad of [0, 10_001, 1.5, '10', null]) {
    await assert.rejects(checkedIssuer({ ...identity.issuer, tokens_each: bad }, parties.pin, 'c1', published), InvalidParameterError);
  }
  // a collector whose config publishes another challenge (the v1 one, of campaign id and key id): refused before any draw
  const v1 = Buffer.from(tokenChallenge(identity.issuer.name, new Uint8Array(createHash('sha256').update(Buffer.concat([
    Buffer.from('dpdist campaign v1\0c1\0', 'utf8'), Buffer.alloc(8)])).digest()))).toString('base64url');
  const stale = device(parties.collectorUrl, {
    issuer: { credential: CREDENTIAL, url: parties.issuerUrl },
    fetch: changingConfig((doc) => ({ ...doc, relay: { ...doc.relay, issuer: { ...doc.relay.issuer, challenge: v1 } } })),
  });
  await refusedBeforeAnyDraw(stale.client.submit(1), 'challenge_mismatch', parties, stale);
  assert.equal(parties.state.issuerRequests.length, 0);
});

test("the collector tags one device with a config of its own: the device takes it only with an identity whose pin the relay refuses", async () => {
  for (const withIssuer of [false, true]) {
    const parties = await startRelayedCampaign({ issuer: withIssuer, credentials: [CREDENTIAL, 'tagged-credential'] });
    const issuerOf = (credential) => (withIssuer ? { credential, url: parties.issuerUrl } : null);
    await device(parties.collectorUrl, { issuer: issuerOf(CREDENTIAL) }).client.submit(1); // an honest device: the relay pins
    // the collector answers one device's fetches with a config of its own, and the identity (and pin) that go with it
    const tagged = await parties.tagged({ ...parties.config, epsilon: 1.0000001 });
    parties.state.tag = tagged;
    const target = device(parties.collectorUrl, { issuer: issuerOf('tagged-credential') });
    assert.equal((await target.client.protocol()).epsilon, 1.0000001);
    const error = await target.client.submit(1).catch((caught) => caught);
    assert.deepEqual([error.status, error.code], [409, 'pin_mismatch']);
    assert.equal(parties.state.relayReceived.length, 1); // the honest report alone: the tagged one never reaches a batch
    assert.deepEqual(parties.state.relayRefusals.map((refusal) => refusal.pin), [tagged.pin]);
    // a collector that serves the tag in the config only, with the campaign's identity: the pins differ, refused at once
    parties.state.tag = { ...tagged, identity: parties.identity };
    const halfTagged = device(parties.collectorUrl, { issuer: issuerOf(CREDENTIAL) });
    await assert.rejects(halfTagged.client.submit(1), (caught) => caught.code === 'pin_mismatch' && caught.status === null);
    assert.equal(halfTagged.counter.fills, 0);
    // a device given the campaign's pin (from elsewhere) takes no tag at all
    parties.state.tag = tagged;
    const pinned = device(parties.collectorUrl, { pin: parties.pin, issuer: issuerOf(CREDENTIAL) });
    await assert.rejects(pinned.client.submit(1), (caught) => caught.code === 'pin_mismatch');
    assert.equal(pinned.counter.fills, 0);
    parties.state.tag = null;
  }
});

test("after the relay pinned a campaign's identity, another identity of it is refused (identity_changed), its token kept", async () => {
  const parties = await startRelayedCampaign();
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const early = device(parties.collectorUrl, { issuer, retries: 0 });
  await early.client.submit(2);
  await early.client.prepareTokens(1); // a token for the next report, under the campaign's first identity
  const newPin = await parties.changeIdentity({ ...parties.config, epsilon: 2 }); // the collector rewrites its identity
  assert.notEqual(newPin, parties.pin);
  const error = await early.client.submit(3).catch((caught) => caught);
  assert.deepEqual([error.status, error.code], [409, 'identity_changed']);
  assert.equal(Object.keys(heldTokens(early.storage).bound).length, 1); // refused, not spent: the token stays with the report
  const late = device(parties.collectorUrl, { issuer });
  await assert.rejects(late.client.submit(3), (caught) => caught.code === 'identity_changed');
  assert.equal((await late.client.protocol()).epsilon, 2);
  assert.equal(parties.state.relayReceived.length, 1);
});

test('a relay outage burns no token: the report failed for good keeps its token, and the resend after the relay is back spends it', async () => {
  const parties = await startRelayedCampaign({ tokensEach: 1 }); // the credential's one token
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const first = device(parties.collectorUrl, { issuer, retries: 1 });
  parties.state.relayDown = true;
  const error = await first.client.submit(5).catch((caught) => caught);
  assert.ok(error instanceof ServiceError && /gave up after 2 attempts/.test(error.message), String(error));
  assert.ok(error.batch && error.batchId);
  assert.equal(parties.state.relayReceived.length, 0);
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 0);
  const { bound } = heldTokens(first.storage);
  assert.deepEqual(Object.keys(bound), [`${error.batchId}.0`]); // the token stays bound to the report, sealed once
  assert.deepEqual(Object.keys(bound[`${error.batchId}.0`]), ['token', 'seed', 'ohttp']);
  // still down: a resend fails the same way, and the token stays
  await assert.rejects(first.client.send(error.batch, { batchId: error.batchId }), /gave up/);
  assert.deepEqual(heldTokens(first.storage).bound, bound);
  parties.state.relayDown = false;
  // the page reloads (a new client on the same storage, the same credential): the kept report goes with its token
  const reloaded = device(parties.collectorUrl, { issuer, memoStorage: first.storage });
  const ack = await reloaded.client.send(error.batch, { batchId: error.batchId });
  assert.deepEqual([ack.relayed, ack.duplicates], [1, 0]);
  assert.equal(parties.state.relayReceived.length, 1);
  assert.equal(parties.state.relayReceived[0].token, bound[`${error.batchId}.0`].token); // the same token and bytes
  assert.equal(Buffer.from(parties.state.relayReceived[0].sealed).toString('base64url'), bound[`${error.batchId}.0`].ohttp);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new']); // one token in all
  assert.deepEqual(heldTokens(first.storage), { pending: [], spare: [], bound: {} });
  assert.equal(charges(first.storage).reduce((total, charge) => total + charge.reports, 0), 1); // drawn once
});

test("a report an earlier version sealed in dpdist's envelope goes again as an RFC 9458 request under its one token", async () => {
  const parties = await startRelayedCampaign({ tokensEach: 1 }); // the credential's one token
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const first = device(parties.collectorUrl, { issuer, retries: 0 });
  parties.state.relayDown = true;
  const error = await first.client.submit(5).catch((caught) => caught);
  assert.ok(error.batch && error.batchId, String(error));
  // the wallet as an earlier version left it: the report's token and seed, its bytes in dpdist's envelope
  const stored = JSON.parse(first.storage.getItem(TOKENS_KEY));
  const [held] = Object.values(stored.campaigns);
  const { token, seed } = held.bound[`${error.batchId}.0`];
  held.bound[`${error.batchId}.0`] = { token, seed, dpdist: Buffer.from([1, ...new Uint8Array(40)]).toString('base64url') };
  first.storage.setItem(TOKENS_KEY, JSON.stringify(stored));
  parties.state.relayDown = false;
  const ack = await first.client.send(error.batch, { batchId: error.batchId });
  assert.deepEqual([ack.relayed, ack.duplicates], [1, 0]);
  assert.equal(parties.state.relayRequests.at(-1), `PUT /relay/v1/campaigns/c1/ohttp/${error.batchId}.0`);
  assert.equal(parties.state.relayReceived.length, 1);
  const [message] = parties.state.relayReceived;
  assert.equal(message.token, token); // its one token, bound to the request's enc (the relay checked it)
  assert.notEqual(await openReport(parties.collectorKey, 'c1', message.sealed), null); // the collector's key opens it
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new']); // one token in all
  assert.deepEqual(heldTokens(first.storage), { pending: [], spare: [], bound: {} });
});

test('a batch the relay acknowledged in part keeps every token: the resend sends the acknowledged reports again with theirs (duplicates)', async () => {
  const parties = await startRelayedCampaign({ tokensEach: 2 }); // one token for each of the two reports, none more
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  let failed = false;
  const goesDown = async (url, init) => {
    const response = await fetch(url, init);
    if (init.method === 'PUT' && !failed) [failed, parties.state.relayDown] = [true, true]; // down after the first report
    return response;
  };
  const { client, storage } = device(parties.collectorUrl, { issuer, retries: 0, batchSize: 2, fetch: goesDown });
  await assert.rejects(client.submitMany([1, 2]), /gave up/);
  assert.equal(parties.state.relayReceived.length, 1);
  assert.equal(client.unsentReports, 2); // the batch stays queued, under its id
  assert.equal(Object.keys(heldTokens(storage).bound).length, 2); // both tokens stay bound, the acknowledged one's too
  const first = parties.state.relayReceived[0];
  parties.state.relayDown = false;
  const [ack] = await client.flush();
  assert.deepEqual([ack.relayed, ack.duplicates], [2, 1]);
  assert.equal(parties.state.relayReceived.length, 2);
  // the first report went twice, under its id with its token: the relay answered the second a duplicate
  assert.equal(parties.state.relayRequests.filter((line) => line === `PUT /relay/v1/campaigns/c1/ohttp/${first.reportId}`).length, 2);
  assert.equal(parties.state.spentNonces.get([...parties.state.spentNonces.keys()][0]).token, first.token);
  assert.equal(parties.state.spentNonces.size, 2);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new', 'new']); // no third token
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 0);
  assert.deepEqual(heldTokens(storage), { pending: [], spare: [], bound: {} });
});

test('a token request whose answer was lost is sent again, the same bytes; the issuer counts it once', async () => {
  const parties = await startRelayedCampaign();
  parties.state.loseAnswers = 1;
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const patient = device(parties.collectorUrl, { issuer, retries: 2 });
  await patient.client.submit(2);
  const [first, second] = parties.state.issuerRequests;
  assert.equal(first.blinded, second.blinded);
  assert.deepEqual([first.answered, first.lost, second.answered], ['new', true, 'stored']);
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 9);
  // lost past every retry: the request stays pending (in the device's storage) and the next report sends it again
  parties.state.issuerRequests.length = 0;
  parties.state.loseAnswers = 1;
  const hasty = device(parties.collectorUrl, { issuer, retries: 0 });
  await assert.rejects(hasty.client.submit(5), (error) => error instanceof ServiceError && /gave up/.test(error.message));
  assert.equal(hasty.counter.fills, 0);
  const later = device(parties.collectorUrl, { issuer, memoStorage: hasty.storage });
  await later.client.submit(5);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new', 'stored']);
  assert.equal(parties.state.issuerRequests[0].blinded, parties.state.issuerRequests[1].blinded);
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 8);
  assert.equal(parties.state.relayReceived.length, 2);
});

test('the issuer refuses the last tokens: nothing is drawn, the tokens obtained wait, and serve with another credential', async () => {
  const parties = await startRelayedCampaign({ tokensEach: 2, credentials: ['first', 'second'] });
  const { client, storage, counter } = device(parties.collectorUrl, { issuer: { credential: 'first', url: parties.issuerUrl } });
  const refused = await client.submitMany([1, 2, 3]).catch((error) => error);
  assert.ok(refused instanceof ServiceError && refused.code === 'exhausted' && refused.status === 403, String(refused));
  assert.match(refused.message, /The 2 token\(s\) obtained before this refusal are kept for the next reports of campaign 'c1': 2 held of the 3 needed/);
  assert.equal(counter.fills, 1); // the values' order only (a uniform permutation, drawn first), no report
  assert.deepEqual(charges(storage), []);
  assert.equal(parties.state.relayReceived.length, 0);
  const [held] = Object.values(JSON.parse(storage.getItem(TOKENS_KEY)).campaigns);
  assert.deepEqual([held.spare.length, held.pending.length], [2, 1]); // the refused request waits, to be sent again
  client.issuer = { credential: 'second', url: parties.issuerUrl };
  const acks = await client.submitMany([1, 2, 3]);
  assert.equal(acks[0].relayed, 3);
  assert.deepEqual([parties.state.issuerLeft.get('first'), parties.state.issuerLeft.get('second')], [0, 1]);
  const requests = parties.state.issuerRequests;
  assert.deepEqual(requests.map((request) => [request.credential, request.answered]),
    [['first', 'new'], ['first', 'new'], ['first', 'exhausted'], ['second', 'new']]);
  assert.equal(requests[3].blinded, requests[2].blinded);
});

test('a token is asked for whatever the value: an out-of-domain value keeps its token for the next report', async () => {
  const parties = await startRelayedCampaign();
  const { client } = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: parties.issuerUrl } });
  await assert.rejects(client.submit(99), OutOfDomainError);
  assert.equal(parties.state.issuerRequests.length, 1); // the same traffic as for a value in the domain
  assert.equal(parties.state.relayReceived.length, 0);
  await client.submit(6);
  assert.equal(parties.state.issuerRequests.length, 1); // the token kept served
  assert.equal(parties.state.relayReceived.length, 1);
});

test('a report resent after a lost acknowledgement carries the same token: a duplicate, never token_spent', async () => {
  const parties = await startRelayedCampaign();
  const storage = memoryStorage();
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const first = device(parties.collectorUrl, { issuer, memoStorage: storage });
  await first.client.campaign();
  await first.client.prepareTokens(1);
  const batch = first.client.randomize([5]); // a page draws once and keeps the report
  const realFetch = globalThis.fetch;
  const lossy = async (url, init) => {
    const response = await realFetch(url, init);
    if (init.method === 'PUT') throw new TypeError('connection reset after the relay stored the report');
    return response;
  };
  const flaky = device(parties.collectorUrl, { issuer, memoStorage: storage, fetch: lossy, retries: 0 });
  const error = await flaky.client.send(batch).catch((caught) => caught);
  assert.ok(error instanceof ServiceError && error.batchId);
  assert.equal(parties.state.relayReceived.length, 1);
  // the page reloads: a new client on the same storage sends the kept report under the same id
  const reloaded = device(parties.collectorUrl, { memoStorage: storage }); // no credential needed: the token is bound
  const ack = await reloaded.client.send(error.batch, { batchId: error.batchId });
  assert.deepEqual([ack.relayed, ack.duplicates], [1, 1]);
  assert.equal(parties.state.issuerRequests.length, 1);
  assert.equal(parties.state.spentNonces.size, 1);
  const token = [...parties.state.spentNonces.values()][0].token;
  const { issuerKey } = parties;
  assert.ok(verifyToken(Buffer.from(token, 'base64url'), { publicKey: issuerKey.publicKey, tokenKey: issuerKey.tokenKey, challenge: parties.challenge }));
});

test('tests/relayed_submit_driver.mjs: a node command a Python test can run, printing the acks or the refusal as JSON', async () => {
  const parties = await startRelayedCampaign();
  const driver = fileURLToPath(new URL('../../../tests/relayed_submit_driver.mjs', import.meta.url));
  // asynchronously: spawnSync would block this process's event loop, and with it the fake servers
  const run = (request) => new Promise((resolve) => {
    execFile(process.execPath, [driver, JSON.stringify(request)], { timeout: 60_000 },
      (error, stdout) => resolve({ code: error?.code ?? 0, result: JSON.parse(stdout.trim().split('\n').at(-1)) }));
  });
  const issuer = { credential: CREDENTIAL, url: parties.issuerUrl };
  const sent = await run({ server: parties.collectorUrl, campaign: 'c1', values: [1, 2, 3], issuer });
  assert.equal(sent.code, 0);
  assert.deepEqual(sent.result.acks.map((ack) => ack.relayed), [3]);
  const pinned = await run({ server: parties.relayUrl, campaign: 'c1', values: [4], pin: parties.pin, issuer });
  assert.deepEqual(pinned.result.acks.map((ack) => ack.relayed), [1]);
  const refused = await run({ server: parties.relayUrl, campaign: 'c1', values: [1], issuer });
  assert.equal(refused.code, 3);
  assert.deepEqual([refused.result.error.name, refused.result.error.code], ['ServiceError', 'pin_required']);
  const unbound = await run({ server: parties.collectorUrl, campaign: 'c1', values: [1], issuer: { credential: CREDENTIAL } });
  assert.equal(unbound.code, 3);
  assert.deepEqual([unbound.result.error.name, unbound.result.error.code], ['InvalidParameterError', null]);
  assert.match(unbound.result.error.message, /'issuer\.url' option of Client is required/);
  assert.equal(parties.state.relayReceived.length, 4);
  assert.equal(spawnSync(process.execPath, [driver, '{"values": 1}']).status, 2);
});

test('a token the relay saw spent on another report is dropped: the resend of the report takes a fresh one', async () => {
  const parties = await startRelayedCampaign();
  const { client, storage } = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: parties.issuerUrl }, retries: 0 });
  await client.prepareTokens(1);
  const batch = client.randomize([2]);
  // someone else spends this device's spare token first (as a copy of its storage would: its seed seals a report)
  const [held] = Object.values(JSON.parse(storage.getItem(TOKENS_KEY)).campaigns);
  const { encapsulateForRelay, relayKeyConfig } = await import('../src/relay.js');
  const other = await encapsulateForRelay(relayKeyConfig((await client.campaign()).relay), 'c1', new Uint8Array(10),
    'application/octet-stream', Buffer.from(held.spare[0].seed, 'base64url'));
  const stolen = await fetch(`${parties.relayUrl}/relay/v1/campaigns/c1/ohttp/elsewhere.0`, {
    method: 'PUT', headers: { Authorization: `PrivateToken token="${held.spare[0].token}"`, 'Dpdist-Pin': parties.pin }, body: other,
  });
  assert.equal(stolen.status, 202);
  const error = await client.send(batch).catch((caught) => caught);
  assert.deepEqual([error.status, error.code], [403, 'token_spent']);
  const ack = await client.send(error.batch, { batchId: error.batchId });
  assert.deepEqual([ack.relayed, ack.duplicates], [1, 0]);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new', 'new']);
  assert.deepEqual(JSON.parse(storage.getItem(TOKENS_KEY)).campaigns, {}); // nothing held: the second token is spent
});

test("a collector that states fewer tokens per credential than the issuer publishes is refused (tokens_each_mismatch)", async () => {
  // the guarantee counts each colluding credential as tokens_each reports: an identity that understates it overclaims
  const parties = await startRelayedCampaign({ tokensEach: 50, identityTokensEach: 1 });
  const understated = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: parties.issuerUrl } });
  await refusedBeforeAnyDraw(understated.client.submit(1), 'tokens_each_mismatch', parties, understated);
  assert.equal(parties.state.issuerRequests.length, 0); // no token asked for
});

test('a campaign whose identity was made before issuers published tokens_each still takes reports (redemption context v2)', async () => {
  const parties = await startRelayedCampaign({ identityTokensEach: null });
  assert.equal(JSON.parse(parties.identity.toString('ascii')).issuer.tokens_each, undefined);
  const earlier = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: parties.issuerUrl } });
  await earlier.client.submit(4);
  assert.equal(parties.state.relayReceived.length, 1); // its token verified under the v2 challenge the relay holds
});

test('a relay that refuses a token valid for the campaign (401) burns none: the token stays with its report for the resend', async () => {
  const parties = await startRelayedCampaign({ tokensEach: 1 }); // the credential's one token
  const { EARLIER_CAMPAIGN_CONTEXT, redemptionContext } = await import('../src/privacypass.js');
  // a relay of the version before derives the v2 challenge of this identity (which states tokens_each: v3)
  parties.state.relayChallenge = Buffer.from(tokenChallenge('issuer.test', await redemptionContext(parties.pin, EARLIER_CAMPAIGN_CONTEXT)));
  const first = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: parties.issuerUrl }, retries: 0 });
  const error = await first.client.submit(5).catch((caught) => caught);
  assert.deepEqual([error.status, error.code], [401, 'invalid_token']);
  assert.match(error.message, /The token is kept for the report's resend/);
  assert.equal(Object.keys(heldTokens(first.storage).bound).length, 1);
  await assert.rejects(first.client.send(error.batch, { batchId: error.batchId }), (caught) => caught.status === 401);
  parties.state.relayChallenge = null; // the relay upgraded
  const ack = await first.client.send(error.batch, { batchId: error.batchId });
  assert.equal(ack.relayed, 1);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new']); // one token, never another
  assert.equal(parties.state.relayReceived.length, 1);
});
