// Longitudinal protocols on the device: l-grr, l-osue, loloha and dbitflippm with a memo (Python's
// MemoizedClient / BucketMemoClient).
//  1. one report is eps_1-LDP and any number of reports of one value eps_inf-LDP, on the JS
//     constants' exact laws (the adversary who sees all T reports of a device);
//  2. a memo written by Python loads in JS and writes back the same JSON;
//  3. reports from a memo follow Python's round-two law (chi-square), the permanent response
//     drawn once;
//  4. the Client keeps the memo in its storage before a report leaves, reuses it across rounds
//     (campaigns of the same config), and refuses to run a longitudinal campaign without storage.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  Client,
  IncompatibleStateError,
  InvalidParameterError,
  LEDGER_KEY,
  Ledger,
  Memo,
  PrivacyBudgetError,
  budgetScope,
  fromConfig,
  historyEpsilon,
  normalCollector,
} from '../src/index.js';
import { ALPHA, CHANNEL_SLACK, chiSquarePValue, deterministicSource, fixture, maxPrivacyLoss, memoryStorage } from './helpers.js';

const canonical = (config) => JSON.stringify(Object.fromEntries(Object.keys(config).sort().map((k) => [k, config[k]])));

/** Exact law of round one for ``item`` over its outputs (items for l-grr, bit vectors for l-osue). */
function permanentRow(protocol, item) {
  const d = protocol.domainSize;
  if (protocol.name === 'l-grr') {
    const row = new Float64Array(d).fill(protocol.q1);
    row[item] = protocol.p1;
    return row;
  }
  const row = new Float64Array(2 ** d);
  for (let s = 0; s < row.length; s++) {
    let probability = 1;
    for (let j = 0; j < d; j++) {
      const on = j === item ? protocol.p1 : protocol.q1;
      probability *= (s >> j) & 1 ? on : 1 - on;
    }
    row[s] = probability;
  }
  return row;
}

/** The packed memo bytes of bit vector ``s`` (bit j = item j), for l-osue. */
function packed(protocol, s) {
  const bytes = new Uint8Array(protocol.rowBytes);
  for (let j = 0; j < protocol.domainSize; j++) if ((s >> j) & 1) bytes[j >> 3] |= 0x80 >> (j & 7);
  return bytes;
}

/** Joint law of T reports of one value: sum over memo outcomes s of PRR(s | x) prod_t IRR(y_t | s). */
function jointRows(protocol, reports) {
  const secrets = permanentRow(protocol, 0).length;
  const irr = Array.from({ length: secrets }, (_, s) => protocol.instantaneousRow(protocol.name === 'l-grr' ? s : packed(protocol, s)));
  const outputs = irr[0].length;
  return protocol.inputs().map((item) => {
    const prr = permanentRow(protocol, item);
    const row = new Float64Array(outputs ** reports);
    for (let y = 0; y < row.length; y++) {
      let total = 0;
      for (let s = 0; s < secrets; s++) {
        let probability = prr[s];
        for (let t = 0, rest = y; t < reports; t++, rest = Math.floor(rest / outputs)) probability *= irr[s][rest % outputs];
        total += probability;
      }
      row[y] = total;
    }
    return row;
  });
}

/** LOLOHA's joint law of T reports of one value: one seed, one memoized PRR of the hashed value. */
function lolohaJointRows(protocol, reports) {
  const { g, prime } = protocol;
  const seeds = (prime - 1) * prime;
  const prr = (x) => Array.from({ length: g }, (_, m) => (m === x ? protocol.p1 : protocol.q1));
  const irr = Array.from({ length: g }, (_, m) => protocol.instantaneousRow(m));
  return protocol.inputs().map((item) => {
    const row = new Float64Array(seeds * g ** reports);
    for (let s = 0; s < seeds; s++) {
      const first = prr(protocol.bucketOf(item, protocol.checkUserRandomness([s])));
      for (let y = 0; y < g ** reports; y++) {
        let total = 0;
        for (let m = 0; m < g; m++) {
          let probability = first[m];
          for (let t = 0, rest = y; t < reports; t++, rest = Math.floor(rest / g)) probability *= irr[m][rest % g];
          total += probability;
        }
        row[s * g ** reports + y] = total / seeds;
      }
    }
    return row;
  });
}

for (const config of [
  { protocol: 'loloha', epsilon: 3.0, epsilon_1: 1.0, domain_size: 4, hash_prime: 5 },
  { protocol: 'loloha', epsilon: 2.0, epsilon_1: 0.5, domain_size: 3, hash_prime: 3, variant: 'binary' },
]) {
  test(`LOLOHA: one report is eps_1-LDP, T reports of one value never beyond eps_inf: ${canonical(config)}`, () => {
    const protocol = fromConfig(config);
    const bound = (epsilon) => epsilon * (1 + CHANNEL_SLACK) + CHANNEL_SLACK;
    const single = maxPrivacyLoss(protocol.inputs().map((item) => protocol.channelRow(item)));
    assert.ok(single <= bound(config.epsilon_1), `one report: loss ${single} > eps_1 ${config.epsilon_1}`);
    for (const reports of [2, 3]) {
      const loss = maxPrivacyLoss(lolohaJointRows(protocol, reports));
      assert.ok(loss <= bound(config.epsilon), `${reports} reports: loss ${loss} > eps_inf ${config.epsilon}`);
    }
  });
}

for (const config of [
  { protocol: 'l-grr', epsilon: 2.0, epsilon_1: 1.0, domain_size: 3 },
  { protocol: 'l-grr', epsilon: 4.0, epsilon_1: 0.5, domain_size: 2 },
  { protocol: 'l-osue', epsilon: 2.0, epsilon_1: 1.0, domain_size: 2 },
  { protocol: 'l-osue', epsilon: 3.0, epsilon_1: 0.7, domain_size: 3 },
]) {
  test(`one report is eps_1-LDP, T reports of one value never beyond eps_inf: ${canonical(config)}`, () => {
    const protocol = fromConfig(config);
    const bound = (epsilon) => epsilon * (1 + CHANNEL_SLACK) + CHANNEL_SLACK;
    const single = maxPrivacyLoss(protocol.inputs().map((item) => protocol.channelRow(item)));
    assert.ok(single <= bound(config.epsilon_1), `one report: loss ${single} > eps_1 ${config.epsilon_1}`);
    assert.ok(single > config.epsilon_1 - 1e-6, `one report: loss ${single} well below eps_1 (budget wasted)`);
    let previous = single;
    for (const reports of [2, 3, 4]) {
      const loss = maxPrivacyLoss(jointRows(protocol, reports));
      assert.ok(loss <= bound(config.epsilon), `${reports} reports: loss ${loss} > eps_inf ${config.epsilon}`);
      assert.ok(loss >= previous - 1e-12, 'more reports never reveal less');
      previous = loss;
    }
  });
}

for (const { state, instantaneous } of fixture.memos) {
  const protocol = fromConfig(state.config);

  test(`a memo written by Python loads and writes back the same JSON: ${protocol.name}`, () => {
    const memo = new Memo(protocol, state);
    assert.deepEqual(memo.items, Object.keys(state.memo).map(Number).sort((a, b) => a - b));
    const written = memo.toJSON();
    assert.deepEqual(written.memo, state.memo);
    assert.deepEqual(written.randomness, state.randomness);
    assert.equal(canonical(written.config), canonical(state.config));
  });

  test(`reports from a memo follow Python's round-two law; round one is drawn once: ${protocol.name}`, () => {
    const memo = new Memo(protocol, null);
    const source = deterministicSource(31);
    const value = 3;
    if (instantaneous === null) {
      // dbitflippm: no second round, every report of the value replays the memoized bits
      const first = memo.report(value, source).row(0);
      for (let i = 0; i < 20; i++) assert.deepEqual(memo.report(value, source).row(0), first);
      const { indices, bits } = protocol.decode(first);
      assert.deepEqual(indices, memo.randomness);
      assert.deepEqual(bits, memo.toJSON().memo[String(value)]);
      assert.deepEqual(memo.items, [value]);
      return;
    }
    const reports = 100_000;
    const counts = new Array(instantaneous[0].length).fill(0);
    const hashed = protocol.name === 'loloha';
    const seeds = new Set();
    for (let i = 0; i < reports; i++) {
      const row = memo.report(value, source).row(0);
      if (hashed) {
        const { a, b, value: reported } = protocol.decode(row);
        seeds.add(`${a} ${b}`);
        counts[reported] += 1;
      } else counts[protocol.reportIndex(row)] += 1;
    }
    if (hashed) {
      assert.equal(seeds.size, 1, 'every report carries the device seed');
      const { a, b } = protocol.checkUserRandomness(memo.randomness);
      assert.deepEqual([...seeds], [`${a} ${b}`]);
    }
    const [key] = memo.items;
    assert.equal(memo.items.length, 1);
    assert.equal(key, hashed ? protocol.bucketOf(value, protocol.checkUserRandomness(memo.randomness)) : value);
    const memoized = memo.toJSON().memo[String(key)];
    const secret = protocol.name === 'l-osue' ? protocol.reportIndex(Uint8Array.from(memoized)) : memoized;
    assert.ok(chiSquarePValue(counts, instantaneous[secret]) > ALPHA, 'reports follow IRR(. | memoized)');
    const fresh = new Memo(protocol, null);
    for (let i = 0; i < 50; i++) fresh.report(i % protocol.domainSize, source);
    assert.equal(fresh.items.length, hashed ? protocol.g : protocol.domainSize); // one per value (or hash value)
  });
}

test('a memo refuses a state of another config or a malformed entry', () => {
  const [{ state }] = fixture.memos;
  const other = fromConfig({ ...state.config, epsilon_1: 0.5 });
  assert.throws(() => new Memo(other, state), IncompatibleStateError);
  const protocol = fromConfig(state.config);
  assert.throws(() => new Memo(protocol, { config: state.config, memo: { 1: 99 } }), IncompatibleStateError);
  assert.throws(() => new Memo(protocol, { config: state.config, memo: { 9: 1 } }), IncompatibleStateError);
  assert.throws(() => new Memo(protocol, { config: state.config, memo: { '': 1 } }), IncompatibleStateError);
  // a bucket memo without the randomness its buckets were drawn under (as Python's BucketMemoClient.from_dict)
  const bucketed = fixture.memos.map((memo) => memo.state).find((saved) => saved.randomness != null);
  const bucketProtocol = fromConfig(bucketed.config);
  assert.throws(() => new Memo(bucketProtocol, { ...bucketed, randomness: null }), /no randomness/);
  assert.doesNotThrow(() => new Memo(bucketProtocol, bucketed));
  assert.throws(() => fromConfig({ protocol: 'l-grr', epsilon: 1, epsilon_1: 1, domain_size: 4 }), InvalidParameterError);
});

function fakeServer(config, { fail = false } = {}) {
  const puts = [];
  const fetch = async (url, { method, body }) => {
    if (method === 'GET') return Response.json({ campaign: url.split('/').at(-2), state: 'open', config });
    if (fail) throw new TypeError('fetch failed');
    puts.push(new Uint8Array(body));
    return Response.json({ campaign: url.split('/').at(-3), batch_id: url.split('/').at(-1), accepted: 1, rejected: {}, duplicate: false });
  };
  return { fetch, puts };
}

test('the client keeps the memo in its ledger before sending, and every round of the config reuses it', async () => {
  const config = { protocol: 'l-grr', version: 1, epsilon: 3.0, epsilon_1: 1.0, domain_size: 50 };
  const storage = memoryStorage();
  storage.setItem(LEDGER_KEY, JSON.stringify(new Ledger({ budget: 100 }).toJSON())); // the owner's budget
  const down = fakeServer(config, { fail: true });
  const first = new Client('', 'day-1', { fetch: down.fetch, memoStorage: storage, retries: 0, source: deterministicSource(5) });
  await assert.rejects(first.submit(7));
  const [[key, saved]] = [...storage.map.entries()];
  assert.equal(key, LEDGER_KEY);
  const streamOf = (text) => Object.values(JSON.parse(text).streams)[0];
  const memoized = streamOf(saved).memo['7'];
  assert.ok(Number.isInteger(memoized), 'the permanent response was stored although the send failed');
  assert.equal(streamOf(saved).reports, 1);
  const up = fakeServer(config);
  for (const day of ['day-2', 'day-3']) {
    const client = new Client('', day, { fetch: up.fetch, memoStorage: storage, source: deterministicSource(day.length + 9) });
    await client.submitMany([7, 7, 7]);
    assert.equal(streamOf(storage.map.get(key)).memo['7'], memoized, `${day} reuses the permanent response`);
  }
  assert.equal(up.puts.length, 2);
  assert.equal(storage.map.size, 1);
  const ledger = JSON.parse(storage.map.get(key));
  assert.equal(streamOf(storage.map.get(key)).reports, 7);
  const protocol = fromConfig(config);
  assert.ok(Math.abs(ledger.charges.reduce((t, c) => t + c.epsilon, 0) - historyEpsilon(7, protocol.memoized)) < 1e-9);
});

test('a collector that rotates the budgets cannot reset the memo: the ledger refuses', async () => {
  // the audit varied epsilon_1 by 1e-12 per round and got 20 fresh permanent responses in 20 rounds
  const storage = memoryStorage();
  storage.setItem(LEDGER_KEY, JSON.stringify(new Ledger({ budget: 1000 }).toJSON()));
  let refused = 0;
  for (let round = 0; round < 20; round++) {
    const config = { protocol: 'l-grr', version: 1, epsilon: 1.0, epsilon_1: 0.5 + round * 1e-12, domain_size: 4 };
    const client = new Client('', `round-${round}`, { fetch: fakeServer(config).fetch, memoStorage: storage, source: deterministicSource(round + 1) });
    try {
      await client.submit(2);
    } catch (error) {
      assert.ok(error instanceof PrivacyBudgetError && /does not report under the new parameters/.test(error.message), error.message);
      refused += 1;
    }
  }
  assert.equal(refused, 19);
  const ledger = JSON.parse(storage.map.get(LEDGER_KEY));
  assert.equal(Object.keys(ledger.streams).length, 1);
  assert.equal(Object.values(ledger.streams)[0].reports, 1);
});

test('a report past the budget is refused with the reason and the budget left; the refusal does not depend on the value', async () => {
  const config = { protocol: 'l-grr', version: 1, epsilon: 4.0, epsilon_1: 1.0, domain_size: 8 };
  const protocol = fromConfig(config);
  const sentBeforeRefusal = (values) => {
    const ledger = new Ledger({ budget: 5 });
    for (let index = 0; index < values.length; index++) {
      try {
        ledger.report(protocol, [values[index]], { source: deterministicSource(index + 1), now: 1000 + index });
      } catch (error) {
        assert.ok(error instanceof PrivacyBudgetError && error.remaining >= 0 && /budget of 5/.test(error.message));
        return index;
      }
    }
    return values.length;
  };
  const steady = sentBeforeRefusal([3, 3, 3, 3, 3, 3, 3, 3]);
  const changing = sentBeforeRefusal([3, 5, 3, 5, 1, 2, 7, 0]);
  assert.equal(steady, changing);
  assert.ok(steady >= 2 && steady < 8);
  // a window lets the budget recover: what was spent a day ago no longer counts
  const daily = new Ledger({ budget: 1.5, window: 86400 });
  daily.report(fromConfig({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 4 }), [1], { now: 0 });
  assert.throws(() => daily.report(fromConfig({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 4 }), [1], { now: 10 }), PrivacyBudgetError);
  daily.report(fromConfig({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 4 }), [1], { now: 86401 });
});

test('memo hygiene: a seeded memo refuses the CSPRNG, keys are canonical, and a ledger round-trips', () => {
  const protocol = fromConfig({ protocol: 'l-grr', version: 1, epsilon: 2.0, epsilon_1: 1.0, domain_size: 4 });
  const memo = new Memo(protocol);
  memo.report(1, deterministicSource(3));
  assert.equal(memo.toJSON().seeded, true);
  assert.throws(() => memo.report(1), /seeded/);
  assert.throws(() => new Memo(protocol, { config: protocol.config, memo: { '01': 1 } }), IncompatibleStateError);
  assert.throws(() => new Memo(protocol, { config: protocol.config, memo: { 1: 1, '01': 2 } }), IncompatibleStateError);
  const ledger = new Ledger({ budget: 50, accounting: 'stable' });
  ledger.report(protocol, [1, 2, 1], { collector: 'https://c.example', source: deterministicSource(4) });
  const copy = Ledger.fromJSON(JSON.parse(JSON.stringify(ledger.toJSON())));
  assert.deepEqual(copy.toJSON(), ledger.toJSON());
  // stable: eps_inf for each of a memo's first K = 4 reports, nothing after
  assert.equal(copy.cost(protocol, 5, 'https://c.example'), protocol.memoized.epsilonInf);
  copy.report(protocol, [1], { collector: 'https://c.example', source: deterministicSource(5) });
  assert.equal(copy.cost(protocol, 5, 'https://c.example'), 0);
});

test('a longitudinal campaign without memo storage is refused with the reason', async () => {
  const config = { protocol: 'l-osue', version: 1, epsilon: 3.0, epsilon_1: 1.0, domain_size: 8 };
  const client = new Client('', 'c1', { fetch: fakeServer(config).fetch, memoStorage: null });
  await assert.rejects(client.submit(2), (error) => error instanceof InvalidParameterError && /memoStorage/.test(error.message));
});

test('a Memo without a Client draws from the CSPRNG when no source is given', () => {
  // the README's `memo.report(v)`: it threw "Cannot read properties of undefined (reading 'bernoulli')",
  // and the secure source is not exported, so a page had no way to call it
  for (const { state } of fixture.memos) {
    const protocol = fromConfig(state.config);
    const memo = new Memo(protocol, null);
    const report = memo.report(1);
    assert.equal(report.shape[0], 1);
    assert.deepEqual(memo.toJSON().memo, new Memo(protocol, memo.toJSON()).toJSON().memo);
  }
});

test('two tabs (two Clients on one storage) share one memo and one ledger: the second reads what the first stored', async () => {
  const config = { protocol: 'l-grr', version: 1, epsilon: 0.5, epsilon_1: 0.3, domain_size: 8 };
  const storage = memoryStorage();
  storage.setItem(LEDGER_KEY, JSON.stringify(new Ledger({ budget: 100 }).toJSON()));
  const server = fakeServer(config);
  const first = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage });
  const second = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage });
  await first.campaign();
  await second.campaign(); // both loaded the ledger before either drew
  await first.submit(3);
  await second.submit(3);
  const ledger = JSON.parse(storage.getItem(LEDGER_KEY));
  const [stream] = Object.values(ledger.streams);
  assert.equal(stream.reports, 2);
  assert.equal(Object.keys(stream.memo).length, 1);
  assert.equal(ledger.charges.length, 2);
});

test('stable accounting charges eps_inf for each of the first K reports; a NaN never passes; scopes match Python', () => {
  const dbit = fromConfig({ protocol: 'dbitflippm', version: 1, epsilon: 1.0, domain_size: 8, sampled_bits: 2 });
  const stable = new Ledger({ budget: 100, accounting: 'stable' });
  stable.report(dbit, [3, 3], { source: deterministicSource(1) });
  assert.throws(() => Ledger.fromJSON(stable.toJSON(), { settings: { accounting: 'history' } }), IncompatibleStateError);
  const forced = Ledger.fromJSON(stable.toJSON());
  forced.accounting = 'history';
  assert.equal(forced.cost(dbit, 1), Infinity);
  assert.throws(() => forced.report(dbit, [3]), PrivacyBudgetError);
  stable.report(dbit, Array(20).fill(3), { source: deterministicSource(2) });
  assert.ok(Math.abs(stable.spent() - 8 * dbit.memoized.epsilonInf) < 1e-9);
  assert.equal(budgetScope('https://c.example/', { protocol: 'l-grr', labels: ['café', 'b'], epsilon: 1 }),
    'https://c.example {"labels":["café","b"],"protocol":"l-grr"}');
});

test('spellings of one collector are one collector, as Python names them (tests/local/test_ledger.py COLLECTORS)', () => {
  const expected = {
    'https://C.Example:443/': 'https://c.example', 'http://c.example:80': 'http://c.example',
    'http://c.example:8080/x/': 'http://c.example:8080/x', 'https://[::1]:443/': 'https://[::1]', local: 'local',
    'HTTPS://c.example/p//': 'https://c.example/p', 'https://u@c.example/': 'https://u@c.example',
    'http://c.example?x=1': 'http://c.example?x=1', 'https://c.example:80/': 'https://c.example:80',
    'ftp://c.example/': 'ftp://c.example', 'http://C.EXAMPLE/A/': 'http://c.example/A',
  };
  for (const [spelling, name] of Object.entries(expected)) assert.equal(normalCollector(spelling), name, spelling);
  const ledger = new Ledger();
  const round = fromConfig({ protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0, 1], cuts: [512], grid_size: 1024, round: 1 });
  ledger.report(round, [0.3], { collector: 'https://c.example', once: 'q', source: deterministicSource(2) });
  assert.throws(() => ledger.report(round, [0.3], { collector: 'https://C.example:443/', once: 'q' }), PrivacyBudgetError);
  const older = { ...ledger.toJSON(), answered: { 'https://C.EXAMPLE q': { at: 1, protocol: 'threshold' } } };
  assert.equal(Ledger.fromJSON(older).answered('q', 'https://c.example'), true);
});
