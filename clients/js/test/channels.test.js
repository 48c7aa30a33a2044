// The JS randomizers implement the Python protocols' channels exactly:
//  1. the sampling constants derived from the config equal Python's, bit for bit;
//  2. the exact law of the JS sampler (channelRow, enumerated) equals Python's channel();
//  3. the exact JS law satisfies the epsilon-LDP bound;
//  4. sampling 2 x 10^5 reports per input with a seeded source matches Python's channel()
//     (Pearson chi-square, level ALPHA = 1e-6 per config, Bonferroni over its inputs).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromConfig } from '../src/index.js';
import { ALPHA, CHANNEL_SLACK, checkSampledChannel, chiSquarePValue, deterministicSource, drawTraces, fixture, maxPrivacyLoss } from './helpers.js';

const SAMPLES_PER_INPUT = 200_000;
const label = (config) => JSON.stringify(config);

/** The JS protocol's input for a fixture input (numerical: rescaled to the unit interval). */
function unitInput(protocol, value) {
  return protocol.kind === 'frequency' ? value : protocol.checkValue(value, 0);
}

function assertDerivedEqual(protocol, expected, where) {
  for (const [name, value] of Object.entries(expected)) {
    assert.deepEqual(protocol[name], value, `${where}: ${name}`);
  }
}

test('derived sampling constants equal Python for every fixture config', () => {
  const cases = [...fixture.channels, ...fixture.derived];
  assert.ok(cases.length > 1000);
  for (const { config, derived } of cases) assertDerivedEqual(fromConfig(config), derived, label(config));
});

for (const [index, { config, inputs, channel }] of fixture.channels.entries()) {
  const name = `${config.protocol} ${label(config)}`;

  test(`exact JS channel equals Python channel(): ${name}`, () => {
    const protocol = fromConfig(config);
    const trapezoid = protocol.halfWidths && protocol.halfWidths[1] > 0;
    if (trapezoid) return; // a sum of two 53-bit uniforms: not enumerable; sampled below
    for (const [row, value] of inputs.entries()) {
      const js = protocol.channelRow(unitInput(protocol, value));
      assert.equal(js.length, channel[row].length);
      const difference = Math.max(...js.map((p, y) => Math.abs(p - channel[row][y])));
      assert.ok(difference < 1e-12, `input ${value}: max |JS - Python| = ${difference}`);
    }
  });

  test(`exact JS channel satisfies epsilon-LDP: ${name}`, () => {
    const protocol = fromConfig(config);
    if (protocol.halfWidths && protocol.halfWidths[1] > 0) return;
    const rows = inputs.map((value) => protocol.channelRow(unitInput(protocol, value)));
    for (const row of rows) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-9, 'rows sum to 1');
    const loss = maxPrivacyLoss(rows);
    assert.ok(loss <= config.epsilon * (1 + CHANNEL_SLACK) + CHANNEL_SLACK, `privacy loss ${loss} > epsilon ${config.epsilon}`);
  });

  test(`sampled reports follow Python channel() (chi-square): ${name}`, () => {
    checkSampledChannel(assert, fromConfig(config), inputs, channel, SAMPLES_PER_INPUT, 1000 + index);
  });
}

test('the chi-square check catches a randomizer that leaks (keeps the true item too often)', () => {
  const { config, channel } = fixture.channels.find((c) => c.config.protocol === 'grr');
  const protocol = fromConfig(config);
  protocol.keep += 0.02; // a broken GRR
  const batch = protocol.privatize(new Array(SAMPLES_PER_INPUT).fill(0), deterministicSource(7));
  const counts = new Array(channel[0].length).fill(0);
  for (let i = 0; i < batch.length; i++) counts[protocol.reportIndex(batch.row(i))] += 1;
  assert.ok(chiSquarePValue(counts, channel[0]) < ALPHA);
  const rows = protocol.inputs().map((item) => protocol.channelRow(item));
  assert.ok(maxPrivacyLoss(rows) > config.epsilon * (1 + CHANNEL_SLACK) + CHANNEL_SLACK);
});

test('ss draws the same random numbers whether or not the report holds the value, whatever the value', () => {
  // a device's time is its work: the draws after the inclusion coin must not depend on it
  for (const config of [{ protocol: 'ss', epsilon: 5, domain_size: 20 }, { protocol: 'ss', epsilon: 1, domain_size: 9 }]) {
    const protocol = fromConfig(config);
    for (let seed = 1; seed <= 20; seed++) {
      const traces = new Set();
      for (const include of [false, true]) {
        for (const item of [0, 3, config.domain_size - 1]) {
          const inner = deterministicSource(seed);
          const drawn = [];
          const source = new Proxy(inner, {
            get(target, name) {
              if (name === 'bernoulli') return () => include;
              if (name === 'uniformInt') return (n) => { const x = target.uniformInt(n); drawn.push(`${n}:${x}`); return x; };
              const value = target[name];
              return typeof value === 'function' ? value.bind(target) : value;
            },
          });
          const row = protocol.privatize([item], source).bytes;
          const holds = ((row[item >> 3] >> (7 - (item & 7))) & 1) === 1;
          assert.equal(holds, include);
          traces.add(drawn.join(' '));
        }
      }
      assert.equal(traces.size, 1, `seed ${seed}: the draws differ with the inclusion or the value`);
    }
  }
});

test('ss takes subset_size as its config gives it, and ceil(d / (e^eps + 1)) from a config without it', () => {
  const stored = { protocol: 'ss', version: 1, epsilon: 4, domain_size: 128 };
  const legacy = fromConfig(stored);
  assert.equal(legacy.subsetSize, 3);
  assert.deepEqual(legacy.config, stored); // the record header states the config as it was given
  const given = fromConfig({ ...stored, subset_size: 2 });
  assert.equal(given.subsetSize, 2);
  assert.equal(given.config.subset_size, 2);
  assert.throws(() => fromConfig({ ...stored, subset_size: 128 }), /'subset_size' parameter of SS must be below 'domain_size' = 128/);
});

// Every randomizer's random draws (and so its work) are the same whatever its coins and the value: forced either
// way, and for several inputs, a seeded source sees the same calls (every protocol of the fixture's channels, up to
// three configs each; tests/clients/test_js_conformance.py checks the same for every protocol of the client).

test('randomizers draw the same random numbers whether or not they keep, whatever the value', () => {
  const perProtocol = new Map();
  for (const { config, inputs } of fixture.channels) {
    const done = perProtocol.get(config.protocol) ?? 0;
    if (done >= 3) continue;
    perProtocol.set(config.protocol, done + 1);
    const protocol = fromConfig(config);
    const values = [inputs[0], inputs[Math.floor(inputs.length / 2)], inputs.at(-1)];
    for (let seed = 1; seed <= 10; seed++) {
      assert.equal(drawTraces(protocol, values, seed).size, 1, `${label(config)} seed ${seed}: the draws differ with the coin or the value`);
    }
  }
  assert.ok(perProtocol.size >= 10 && perProtocol.has('grr'), [...perProtocol.keys()].join(' '));
});
