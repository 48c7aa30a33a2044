// The device algorithm of a relayed campaign (issue 44 design, sections 1, 3 and 4) against a collector, a relay and a
// Privacy Pass issuer in-process (relayed-fakes.js: node http servers on 127.0.0.1 that stop by themselves): where the
// config and keys come from (the key substitution attack), one token per report before its draw, retries that resend
// the same token request and the same token, and the refusals, each before anything is drawn.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { Client, OutOfDomainError, RandomSource, ServiceError } from '../src/index.js';
import { checkedIssuer } from '../src/identity.js';
import { TOKENS_KEY } from '../src/tokens.js';
import { memoryStorage } from './helpers.js';
import { verifyToken } from './privacypass-helpers.js';
import { openSealed, startRelayedCampaign, stopAll } from './relayed-fakes.js';

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
  const body = await openSealed(key, 'c1', message.sealed);
  return body === null ? null : body.at(-1);
}

function charges(storage) {
  const text = storage.getItem('dpdist-ledger');
  return text === null ? [] : JSON.parse(text).charges;
}

async function refusedBeforeAnyDraw(promise, code, parties, { storage, counter }) {
  await assert.rejects(promise, (error) => error instanceof ServiceError && error.code === code);
  assert.equal(counter.fills, 0, 'nothing was drawn');
  assert.deepEqual(charges(storage), [], 'nothing was charged');
  assert.equal(parties.state.relayReceived.length, 0, 'nothing reached the relay');
}

test("a device given the collector's URL takes the campaign from it, one token per report, each sealed report to the relay with its token", async () => {
  const parties = await startRelayedCampaign();
  const { client, storage } = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL }, batchSize: 3 });
  const acks = await client.submitMany([1, 2, 3, 4, 5]);
  assert.deepEqual(acks.map((ack) => ack.relayed), [3, 2]);
  assert.deepEqual(parties.state.collectorRequests, ['GET /api/campaigns/c1/config']); // nothing sent to the collector
  assert.deepEqual(parties.state.relayRequests.filter((line) => line.startsWith('GET')), []);
  assert.equal(parties.state.relayReceived.length, 5);
  assert.equal(parties.state.spentNonces.size, 5); // five different tokens, each valid (the relay verified them)
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new', 'new', 'new', 'new', 'new']);
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 5);
  const reports = [];
  for (const message of parties.state.relayReceived) {
    assert.equal(message.openedByRelay, null);
    reports.push(await reportIn(parties.collectorKey, message));
  }
  assert.ok(reports.every((report) => Number.isInteger(report) && report < 8));
  assert.equal(charges(storage).reduce((total, charge) => total + charge.reports, 0), 5);
  assert.equal(storage.getItem(TOKENS_KEY), JSON.stringify({ format: 'dpdist-tokens', version: 1, campaigns: {} })); // all spent
});

test('key substitution: a relay serving its own HPKE key never gets a report it can open', async () => {
  const parties = await startRelayedCampaign({ swap: true, tamperIdentity: true });
  // the collector's URL: the relay's config is never read
  const honest = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL } });
  await honest.client.submit(3);
  assert.equal(parties.state.relayReceived.length, 1);
  assert.equal(parties.state.relayReceived[0].openedByRelay, null);
  assert.notEqual(await reportIn(parties.collectorKey, parties.state.relayReceived[0]), null); // the collector opens it
  // the relay's URL with the pin: its identity (its own key) does not hash to the pin
  const pinned = device(parties.relayUrl, { pin: parties.pin, issuer: { credential: CREDENTIAL } });
  parties.state.relayReceived.length = 0;
  await refusedBeforeAnyDraw(pinned.client.submit(3), 'pin_mismatch', parties, pinned);
  // the relay's URL alone: refused, whatever key it serves
  const bare = device(parties.relayUrl, { issuer: { credential: CREDENTIAL } });
  await refusedBeforeAnyDraw(bare.client.submit(3), 'pin_required', parties, bare);
  assert.equal(parties.state.issuerRequests.length, 1); // the honest device's token only
});

test('with the pin, a device takes config and keys from the identity, whatever config the relay serves', async () => {
  const parties = await startRelayedCampaign({ swap: true, tamperIdentity: false }); // the identity passed on verbatim
  const { client } = device(parties.relayUrl, { pin: parties.pin, issuer: { credential: CREDENTIAL } });
  await client.submitMany([0, 7]);
  assert.equal(parties.state.relayReceived.length, 2);
  for (const message of parties.state.relayReceived) {
    assert.equal(message.openedByRelay, null); // sealed to the collector's key of the identity, not the relay's
    assert.notEqual(await reportIn(parties.collectorKey, message), null);
  }
  assert.deepEqual(parties.state.relayRequests.filter((line) => line.startsWith('GET')), ['GET /api/campaigns/c1/config', 'GET /api/campaigns/c1/identity']);
  // the pin of the relay's own identity is not the campaign's: a device given it would be refused by the collector's
  assert.notEqual(parties.swappedPin, parties.pin);
  const collectorPinned = device(parties.collectorUrl, { pin: parties.swappedPin, issuer: { credential: CREDENTIAL } });
  parties.state.relayReceived.length = 0;
  await refusedBeforeAnyDraw(collectorPinned.client.submit(1), 'pin_mismatch', parties, collectorPinned);
});

test("an honest relay's URL without the pin is refused too; a relayed campaign without an issuer sends without a token", async () => {
  const parties = await startRelayedCampaign({ issuer: false });
  const bare = device(parties.relayUrl);
  await refusedBeforeAnyDraw(bare.client.submit(3), 'pin_required', parties, bare);
  const { client } = device(parties.collectorUrl);
  const ack = await client.submit(4);
  assert.equal(ack.relayed, 1);
  assert.equal(parties.state.relayReceived[0].token, null);
  assert.equal(await reportIn(parties.collectorKey, parties.state.relayReceived[0]) < 8, true);
  assert.equal(await client.prepareTokens(3), 0); // nothing to hold
});

test('refusals about the issuer come before any draw: no credential, another issuer, another key, a wrong credential', async () => {
  const parties = await startRelayedCampaign();
  const none = device(parties.collectorUrl);
  await refusedBeforeAnyDraw(none.client.submit(1), 'credential_required', parties, none);
  const elsewhere = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: 'https://issuer.example.org/' } });
  await refusedBeforeAnyDraw(elsewhere.client.submit(1), 'issuer_mismatch', parties, elsewhere);
  const wrong = device(parties.collectorUrl, { issuer: { credential: 'not-a-credential' } });
  await refusedBeforeAnyDraw(wrong.client.submit(1), 'unauthorized', parties, wrong);
  parties.state.issuerServesKey = (await import('./privacypass-helpers.js')).newIssuerKey().tokenKeyText;
  const rotated = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL, url: parties.issuerUrl } });
  await refusedBeforeAnyDraw(rotated.client.submit(1), 'issuer_key_mismatch', parties, rotated);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['unauthorized']);
});

test("a campaign's TokenChallenge must be the one its id, key id and issuer name give", async () => {
  const parties = await startRelayedCampaign();
  const { relay } = await (await fetch(`${parties.collectorUrl}/api/campaigns/c1/config`)).json();
  const checked = await checkedIssuer(relay.issuer, relay, 'c1');
  assert.equal(checked.origin, parties.issuerUrl);
  await assert.rejects(checkedIssuer(relay.issuer, relay, 'c2'), (error) => error.code === 'challenge_mismatch');
  await assert.rejects(checkedIssuer(relay.issuer, { ...relay, key_id: '00'.repeat(8) }, 'c1'), (error) => error.code === 'challenge_mismatch');
  await assert.rejects(checkedIssuer({ ...relay.issuer, name: 'other.test' }, relay, 'c1'), (error) => error.code === 'challenge_mismatch');
  await assert.rejects(checkedIssuer({ ...relay.issuer, token_type: 1 }, relay, 'c1'), (error) => error.code === 'unsupported_token_type');
});

test('a token request whose answer was lost is sent again, the same bytes; the issuer counts it once', async () => {
  const parties = await startRelayedCampaign();
  parties.state.loseAnswers = 1;
  const patient = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL }, retries: 2 });
  await patient.client.submit(2);
  const [first, second] = parties.state.issuerRequests;
  assert.equal(first.blinded, second.blinded);
  assert.deepEqual([first.answered, first.lost, second.answered], ['new', true, 'stored']);
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 9);
  // lost past every retry: the request stays pending (in the device's storage) and the next report sends it again
  parties.state.issuerRequests.length = 0;
  parties.state.loseAnswers = 1;
  const hasty = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL }, retries: 0 });
  await assert.rejects(hasty.client.submit(5), (error) => error instanceof ServiceError && /gave up/.test(error.message));
  assert.equal(hasty.counter.fills, 0);
  const later = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL }, memoStorage: hasty.storage });
  await later.client.submit(5);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new', 'stored']);
  assert.equal(parties.state.issuerRequests[0].blinded, parties.state.issuerRequests[1].blinded);
  assert.equal(parties.state.issuerLeft.get(CREDENTIAL), 8);
  assert.equal(parties.state.relayReceived.length, 2);
});

test('the issuer refuses the last tokens: nothing is drawn, the tokens obtained wait, and serve with another credential', async () => {
  const parties = await startRelayedCampaign({ tokensEach: 2, credentials: ['first', 'second'] });
  const { client, storage, counter } = device(parties.collectorUrl, { issuer: { credential: 'first' } });
  await assert.rejects(client.submitMany([1, 2, 3]), (error) => error instanceof ServiceError && error.code === 'exhausted');
  assert.equal(counter.fills, 1); // the values' order only (a uniform permutation, drawn first), no report
  assert.deepEqual(charges(storage), []);
  assert.equal(parties.state.relayReceived.length, 0);
  const [held] = Object.values(JSON.parse(storage.getItem(TOKENS_KEY)).campaigns);
  assert.deepEqual([held.spare.length, held.pending.length], [2, 1]); // the refused request waits, to be sent again
  client.issuer = { credential: 'second' };
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
  const { client } = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL } });
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
  const first = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL }, memoStorage: storage });
  await first.client.campaign();
  await first.client.prepareTokens(1);
  const batch = first.client.randomize([5]); // a page draws once and keeps the report
  const realFetch = globalThis.fetch;
  const lossy = async (url, init) => {
    const response = await realFetch(url, init);
    if (init.method === 'PUT') throw new TypeError('connection reset after the relay stored the report');
    return response;
  };
  const flaky = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL }, memoStorage: storage, fetch: lossy, retries: 0 });
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
  assert.ok(verifyToken(Buffer.from(token, 'base64url'), {
    publicKey: issuerKey.publicKey, tokenKey: issuerKey.tokenKey,
    challenge: Buffer.from((await (await realFetch(`${parties.collectorUrl}/api/campaigns/c1/config`)).json()).relay.issuer.challenge, 'base64url'),
  }));
});

test('tests/relayed_submit_driver.mjs: a node command a Python test can run, printing the acks or the refusal as JSON', async () => {
  const parties = await startRelayedCampaign();
  const driver = fileURLToPath(new URL('../../../tests/relayed_submit_driver.mjs', import.meta.url));
  // asynchronously: spawnSync would block this process's event loop, and with it the fake servers
  const run = (request) => new Promise((resolve) => {
    execFile(process.execPath, [driver, JSON.stringify(request)], { timeout: 60_000 },
      (error, stdout) => resolve({ code: error?.code ?? 0, result: JSON.parse(stdout.trim().split('\n').at(-1)) }));
  });
  const sent = await run({ server: parties.collectorUrl, campaign: 'c1', values: [1, 2, 3], issuer: { credential: CREDENTIAL } });
  assert.equal(sent.code, 0);
  assert.deepEqual(sent.result.acks.map((ack) => ack.relayed), [3]);
  const refused = await run({ server: parties.relayUrl, campaign: 'c1', values: [1], issuer: { credential: CREDENTIAL } });
  assert.equal(refused.code, 3);
  assert.deepEqual([refused.result.error.name, refused.result.error.code], ['ServiceError', 'pin_required']);
  assert.equal(spawnSync(process.execPath, [driver, '{"values": 1}']).status, 2);
});

test('a token the relay saw spent on another report is dropped: the resend of the report takes a fresh one', async () => {
  const parties = await startRelayedCampaign();
  const { client, storage } = device(parties.collectorUrl, { issuer: { credential: CREDENTIAL }, retries: 0 });
  await client.prepareTokens(1);
  const batch = client.randomize([2]);
  // someone else spends this device's spare token first (as a copy of its storage would)
  const [held] = Object.values(JSON.parse(storage.getItem(TOKENS_KEY)).campaigns);
  const stolen = await fetch(`${parties.relayUrl}/relay/v1/campaigns/c1/reports/elsewhere.0`, {
    method: 'PUT', headers: { Authorization: `PrivateToken token="${held.spare[0]}"` }, body: new Uint8Array(10),
  });
  assert.equal(stolen.status, 202);
  const error = await client.send(batch).catch((caught) => caught);
  assert.deepEqual([error.status, error.code], [403, 'token_spent']);
  const ack = await client.send(error.batch, { batchId: error.batchId });
  assert.deepEqual([ack.relayed, ack.duplicates], [1, 0]);
  assert.deepEqual(parties.state.issuerRequests.map((request) => request.answered), ['new', 'new']);
  assert.deepEqual(JSON.parse(storage.getItem(TOKENS_KEY)).campaigns, {}); // nothing held: the second token is spent
});
