#!/usr/bin/env node
// Submit values to a relayed campaign as one device, for tests driven from Python (or any other process):
//
//   node tests/relayed_submit_driver.mjs '{"server": URL, "campaign": ID, "values": [...], "pin": HEX?,
//     "issuer": {"credential": TEXT?, "url": URL}?, "batchSize": N?, "retries": N?, "storage": PATH?,
//     "ohttp": {"relay": URL, "keys": HEX?}?, "relayEnvelope": "dpdist"|"ohttp"?}'
//
// ``server`` is the collector's URL (or any server's, with ``pin``); ``issuer.url`` is required with a credential (the
// issuer it is of: the device refuses a campaign naming no issuer or another); ``storage`` a JSON file holding the
// device's memoStorage (its ledger and its tokens) across runs, created if missing; ``ohttp`` sends a direct campaign's
// requests through a standard Oblivious HTTP relay (``keys``: the application/ohttp-keys bytes in hex); ``relayEnvelope``
// how a relayed campaign's reports travel to its dpdist relay (RFC 9458 requests or dpdist's envelope).  The last line of stdout is JSON:
// {"acks": [...]} (exit 0), or {"error": {"name", "code", "status", "message"}} for a refusal of the client
// (exit 3: ServiceError, InvalidParameterError, PrivacyBudgetError, ...); exit 2 for a malformed request.
//
//   node tests/relayed_submit_driver.mjs '[request, request, ...]'
//
// runs many devices in one process, one after another, each a Client of its own with its own storage (a device's
// state is its Client's and its memoStorage's, not the process's); the last line of stdout is the JSON array of their
// answers, {"acks"} or {"error"} each (exit 0, or 3 once one was refused).

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Client, DPDistError } from '../clients/js/src/index.js';

function fail(message) {
  process.stderr.write(`relayed-driver: ${message}\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = JSON.parse(process.argv[2] ?? '');
} catch (error) {
  fail(`the argument must be a JSON object or an array of them (${error.message})`);
}
const requests = Array.isArray(parsed) ? parsed : [parsed];
for (const request of requests) {
  if (request === null || typeof request !== 'object' || typeof request.server !== 'string' || typeof request.campaign !== 'string' ||
    !Array.isArray(request.values)) {
    fail('each request needs "server" and "campaign" (strings) and "values" (an array)');
  }
}

function storageOf(request) {
  const map = new Map(request.storage && existsSync(request.storage) ? Object.entries(JSON.parse(readFileSync(request.storage, 'utf8'))) : []);
  return {
    getItem: (key) => (map.has(key) ? map.get(key) : null),
    setItem: (key, value) => {
      map.set(key, String(value));
      if (request.storage) {
        writeFileSync(`${request.storage}.tmp`, JSON.stringify(Object.fromEntries(map)));
        renameSync(`${request.storage}.tmp`, request.storage);
      }
    },
  };
}

async function device(request) {
  try {
    const client = new Client(request.server, request.campaign, {
      pin: request.pin ?? null, issuer: request.issuer ?? null, batchSize: request.batchSize ?? 1000, retries: request.retries ?? 5,
      retryDelayMs: request.retryDelayMs ?? 200, memoStorage: storageOf(request), locks: null,
      ohttp: request.ohttp ? { relay: request.ohttp.relay, keys: request.ohttp.keys ? new Uint8Array(Buffer.from(request.ohttp.keys, 'hex')) : null } : null,
      relayEnvelope: request.relayEnvelope ?? null,
    });
    return { acks: await client.submitMany(request.values) };
  } catch (error) {
    if (!(error instanceof DPDistError)) throw error;
    const { name, message } = error;
    return { error: { name, code: error.code ?? null, status: error.status ?? null, message } };
  }
}

const answers = [];
for (const request of requests) answers.push(await device(request));
process.stdout.write(`${JSON.stringify(Array.isArray(parsed) ? answers : answers[0])}\n`);
if (answers.some((answer) => answer.error)) process.exit(3);
