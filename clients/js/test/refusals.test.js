// A person's values are never shown: each refusal of a value, through every protocol, the Client and a device's
// ledger, says where the value is and what is wrong with it, never what it is (src/refusals.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, Ledger, Memo, fromConfig } from '../src/index.js';
import { memoKey } from '../src/protocols/_longitudinal.js';
import { deterministicSource, fixture, memoryStorage } from './helpers.js';

/** What the values below are marked with: no message may hold one. */
const MARKS = ['73519', 'hovercraft', '\u0416'];

/** The text of ``error`` and of the errors it was raised from. */
function texts(error) {
  const found = [];
  for (let at = error; at instanceof Error && found.length < 50; at = at.cause) found.push(String(at), at.message, at.stack ?? '');
  return found;
}

/** Batches holding a marked value the protocol refuses (or, a number past numerical bounds, clips). */
function marked(protocol) {
  const other = [[{ value: 73519 }], [73519n], ['hovercraft-73519'], 'hovercraft-73519'];
  if (protocol.kind === 'multi') {
    return [...protocol.attributes.flatMap((attribute, at) => {
      const record = (value) => protocol.attributes.map((_, j) => (j === at ? value : 0));
      const inside = attribute.bounds === undefined ? [record(attribute.domain_size + 73519), record(-73519)] : [];
      return [...inside, record('hovercraft-73519'), record(73519n), [Object.fromEntries([[attribute.name, 'hovercraft-73519']])]];
    }), [73519], ['hovercraft-73519']];
  }
  if (protocol.kind === 'key_value') {
    return [[{ 73519: 0.5 }], [[[0, 73519.5]]], [[['hovercraft', 0.1]]], [[[0, 'hovercraft']]], [[[73519n, 0.1]]], [{ '073519': 0.1 }],
      [[[0, 0.1], [0, 0.2]]], [73519], ['hovercraft-73519'], [[73519]]];
  }
  if (protocol.kind === 'numerical') return other;
  const d = protocol.domainSize;
  const words = protocol.symbols ? [['hovercraft\u0416'], ['\u0416'], [`${protocol.symbols[0]}\u0416`]] : [];
  return [[0, typeof d === 'bigint' ? d + 73519n : d + 73519], [-73519], [73519.5], [2n ** 200n + 73519n], ...words, ...other];
}

test('no refusal of privatize shows a value it was given, for every protocol of the Python fixture', () => {
  const configs = [...fixture.configs, ...fixture.multi.map((item) => item.view.config)];
  const messages = [];
  for (const config of configs) {
    const protocol = fromConfig(config);
    for (const values of marked(protocol)) {
      try {
        protocol.privatize(values, deterministicSource(1));
      } catch (error) {
        messages.push(...texts(error));
      }
    }
  }
  assert.ok(messages.length > 3 * 8 * configs.length, `${messages.length} messages of ${configs.length} protocols`);
  const shown = messages.filter((message) => MARKS.some((mark) => message.includes(mark)));
  assert.deepEqual(shown, []);
});

/** A server answering ``config``'s campaign and acknowledging every batch. */
function server(config) {
  return async (url, { method }) => {
    if (method === 'GET') return Response.json({ campaign: 'c1', state: 'open', config });
    return Response.json({ campaign: 'c1', batch_id: url.split('/').at(-1), n_read: 1, accepted: 1, rejected: {}, duplicate: false });
  };
}

test('no refusal of a device shows its value: submit, submitMany and add, with and without a ledger, and a damaged memo', async () => {
  const messages = [];
  const refused = async (call) => {
    try {
      await call();
    } catch (error) {
      messages.push(...texts(error));
    }
  };
  const campaigns = [
    [{ protocol: 'grr', version: 1, epsilon: 1, labels: ['bus', 'bike', 'car'] }, ['hovercraft-73519', 73519, 'bus\u0416']],
    [{ protocol: 'l-grr', version: 1, epsilon: 2, epsilon_1: 1, domain_size: 5 }, [73519, -73519, 73519.5, 'hovercraft']],
    [{ protocol: 'sw', version: 1, epsilon: 1, bounds: [0, 10] }, ['hovercraft-73519', { minutes: 73519 }]],
    [{ protocol: 'pem', version: 1, epsilon: 2, alphabet: 'abc', max_chars: 3, k: 1 }, ['ab\u0416', 73519n, 'hovercraft']],
  ];
  for (const [config, values] of campaigns) {
    for (const memoStorage of [null, memoryStorage()]) {
      const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage, fetch: server(config), retries: 0, source: deterministicSource(3) });
      for (const value of values) {
        await refused(() => client.submit(value));
        await refused(() => client.submitMany([value]));
        await refused(() => client.add(value));
      }
    }
  }
  // a ledger whose memo is keyed by a person's past values, damaged in its keys or its entries, is refused unshown
  const config = { protocol: 'l-grr', version: 1, epsilon: 2, epsilon_1: 1, domain_size: 5 };
  for (const memo of [{ 73519: 2 }, { 1: 'hovercraft-73519' }, { 1: 73519 }, 'hovercraft-73519']) {
    await refused(() => new Memo(fromConfig(config), { config, memo }));
    const stream = { collector: 'local', reports: 1, config, memo };
    await refused(() => Ledger.fromJSON({ format: 'dpdist-ledger', version: 2, budget: 10, charges: [], streams: { 'local l-grr': stream } }));
    const storage = memoryStorage();
    storage.setItem('dpdist-ledger', JSON.stringify({ format: 'dpdist-ledger', version: 2, budget: 10, charges: [],
      streams: { 'x y': stream }, answered: 'hovercraft-73519' }));
    const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: storage, fetch: server(config), retries: 0 });
    await refused(() => client.submit(1));
  }
  // a ledger, an earlier memo or tokens that are no JSON: refused without the parser's words (V8 quotes the text)
  for (const [key, text] of [['dpdist-ledger', 'hovercraft-73519'], [memoKey(fromConfig(config)), '{"73519": hovercraft'],
    ['dpdist-tokens', 'hovercraft-73519']]) {
    const storage = memoryStorage();
    storage.setItem(key, text);
    const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: storage, fetch: server(config), retries: 0 });
    await refused(() => client.submit(1));
    await refused(() => client.prepareTokens(1));
  }
  for (const broken of [{ format: 'hovercraft-73519' }, { format: 'dpdist-ledger', version: 2, budget: 10, streams: {}, charges: ['hovercraft-73519'] },
    { format: 'dpdist-ledger', version: 2, budget: 10, streams: {}, charges: [], answered: { 'a b': 'hovercraft-73519' } },
    { format: 'dpdist-ledger', version: 2, budget: 10, streams: {}, charges: [], rounds: { 'a b': 'hovercraft-73519' } }]) {
    await refused(() => Ledger.fromJSON(broken));
  }
  assert.ok(messages.length > 60, `${messages.length} messages`);
  const shown = messages.filter((message) => MARKS.some((mark) => message.includes(mark)));
  assert.deepEqual(shown, []);
});
