// Multi-attribute records ("spl", "smp", "rsfd"), against the client views and exact channels Python
// publishes (fixture "multi", clients/js/test/make_fixture.py):
//  1. the published client view is accepted (each attribute's protocol, budget, format and design
//     constants equal this client's derivation) and gives back Python's config;
//  2. the exact JS law of a record's report equals Python's channel() over the same records;
//  3. that law satisfies the epsilon-LDP bound over the records;
//  4. 2 x 10^5 seeded reports per record follow Python's channel() (Pearson chi-square at
//     ALPHA = 1e-6, Bonferroni over the records);
//  5. a view with a changed constant or format is refused; bad records are refused naming the attribute.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, InvalidValueTypeError, OutOfDomainError, fromConfig, privatize } from '../src/index.js';
import { CHANNEL_SLACK, checkSampledChannel, deterministicSource, fixture, maxPrivacyLoss } from './helpers.js';

const SAMPLES_PER_RECORD = 200_000;

test('the fixture holds spl, smp and rsfd cases', () => {
  assert.deepEqual([...new Set(fixture.multi.map(({ view }) => view.config.protocol))].sort(), ['rsfd', 'smp', 'spl']);
});

for (const [index, { view, inputs, channel }] of fixture.multi.entries()) {
  const name = `${view.config.protocol} ${JSON.stringify(view.config.attributes.map((a) => a.protocol))} epsilon ${view.config.epsilon}`;

  test(`Python's client view is accepted and gives its config: ${name}`, () => {
    const protocol = fromConfig(view);
    assert.deepEqual(protocol.config, view.config);
    assert.deepEqual(protocol.format.describe(), view.format);
    assert.deepEqual(fromConfig(view.config).config, view.config);
  });

  test(`exact JS law of a record's report equals Python channel(): ${name}`, () => {
    const protocol = fromConfig(view);
    for (const [row, record] of inputs.entries()) {
      const js = protocol.channelRow(protocol.checkValue(record, 0));
      assert.equal(js.length, channel[row].length);
      const difference = Math.max(...js.map((p, y) => Math.abs(p - channel[row][y])));
      assert.ok(difference < 1e-12, `record ${JSON.stringify(record)}: max |JS - Python| = ${difference}`);
    }
  });

  test(`exact JS law satisfies epsilon-LDP over the records: ${name}`, () => {
    const protocol = fromConfig(view);
    const rows = inputs.map((record) => protocol.channelRow(protocol.checkValue(record, 0)));
    for (const row of rows) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-9, 'rows sum to 1');
    const loss = maxPrivacyLoss(rows);
    assert.ok(loss <= view.config.epsilon * (1 + CHANNEL_SLACK) + CHANNEL_SLACK, `privacy loss ${loss} > epsilon ${view.config.epsilon}`);
  });

  test(`sampled reports follow Python channel() (chi-square): ${name}`, () => {
    checkSampledChannel(assert, fromConfig(view), inputs, channel, SAMPLES_PER_RECORD, 3000 + index);
  });

  test(`a view with another constant, budget or format is refused: ${name}`, () => {
    const attributes = view.design.attributes;
    const first = attributes[0];
    const [constant, value] = Object.entries(first.design)[0];
    const changed = typeof value === 'number' ? (Number.isInteger(value) ? value + 1 : Math.min(1, value * 1.25 + 1e-3)) : null;
    const tampered = [
      { ...view, design: { attributes: [{ ...first, design: { ...first.design, [constant]: changed } }, ...attributes.slice(1)] } },
      { ...view, design: { attributes: [{ ...first, epsilon: first.epsilon * 2 }, ...attributes.slice(1)] } },
      { ...view, design: { attributes: attributes.slice(1) } },
      { ...view, design: { ...view.design, keep: 0.9 } },
      { ...view, format: { ...view.format, dtype: [['attribute', '<u2'], ...view.format.dtype.slice(1)] } },
      { ...view, format: { ...view.format, fields: view.format.fields.map((f, i) => (i ? f : { ...f, high: 1, reason: 'wide' })) } },
    ];
    for (const bad of tampered) {
      assert.throws(() => fromConfig(bad), (error) => error instanceof InvalidParameterError && /The view is refused/.test(error.message));
    }
  });
}

test('records are arrays in the schema order or objects by name; bad ones are refused naming the attribute', () => {
  const { view } = fixture.multi.find(({ view: v }) => v.config.protocol === 'spl');
  const protocol = fromConfig(view);
  const source = deterministicSource(5);
  const byName = protocol.privatize([{ a: 'x', b: 2, age: 3 }], deterministicSource(9)).bytes;
  assert.deepEqual(protocol.privatize([['x', 2, 3]], deterministicSource(9)).bytes, byName);
  const refused = [
    [[{ a: 'x', b: 2 }], InvalidValueTypeError, /has no 'age'/],
    [[['x', 2]], InvalidValueTypeError, /records of 3 attributes/],
    [[['w', 2, 3]], OutOfDomainError, /attribute 'a'/],
    [[['x', 3, 3]], OutOfDomainError, /attribute 'b'/],
    [[['x', 1, 11]], OutOfDomainError, /attribute 'age'.*bounds \[0, 10\]/],
    [[7], InvalidValueTypeError, /must hold records/],
    ['x', InvalidValueTypeError, /array of records/],
  ];
  for (const [values, type, message] of refused) {
    assert.throws(() => protocol.privatize(values, source), (error) => error instanceof type && message.test(error.message), JSON.stringify(values));
  }
});

test('configs are normalized as Python does: default protocols at the budget, spl at epsilon / k', () => {
  const spl = fromConfig({ protocol: 'spl', epsilon: 2, attributes: [{ name: 'c', domain_size: 4 }, { name: 'd', domain_size: 40 }, { name: 'x', bounds: [0, 1] }] });
  assert.deepEqual(spl.inners.map((inner) => [inner.name, inner.epsilon]), [['grr', 2 / 3], ['oue', 2 / 3], ['sw', 2 / 3]]);
  assert.deepEqual(spl.config.attributes.map((a) => a.protocol), ['grr', 'oue', 'sw']);
  const smp = fromConfig({ protocol: 'smp', epsilon: 2, attributes: [{ name: 'd', domain_size: 20 }] });
  assert.equal(smp.inners[0].name, 'grr'); // 20 < 3 e^2 + 2
  assert.throws(() => fromConfig({ protocol: 'rsfd', epsilon: 1, attributes: [{ name: 'x', bounds: [0, 1] }] }), /categorical attributes/);
  assert.throws(() => fromConfig({ protocol: 'rsfd', epsilon: 1, attributes: [{ name: 'c', domain_size: 3 }] }), /names no protocol/);
  assert.throws(() => fromConfig({ protocol: 'smp', epsilon: 1, attributes: [{ name: 'c', domain_size: 3, protocol: 'sw' }] }), /attribute 'c'/);
  assert.throws(() => fromConfig({ protocol: 'smp', epsilon: 1, attributes: [{ name: 'x', bounds: [0, 1], protocol: 'pm' }] }), /attribute 'x' names protocol 'pm'/);
  assert.throws(() => fromConfig({ protocol: 'spl', epsilon: 1, attributes: [{ name: 'payload', domain_size: 3 }] }), /'attributes' parameter of SPL/);
  assert.throws(() => fromConfig({ protocol: 'spl', epsilon: 1, attributes: [{ name: 'c', domain_size: 3, options: { epsilon: 2 } }] }), /'attributes'/);
});

test('smp pads the payload with zeros and writes the sampled attribute; privatize takes a config', () => {
  const { view } = fixture.multi.find(({ view: v }) => v.config.protocol === 'smp');
  const protocol = fromConfig(view);
  const batch = privatize(view, new Array(2000).fill(['y', 1, 5]), { source: deterministicSource(11) });
  assert.deepEqual(batch.shape, [2000]);
  const seen = new Set();
  for (let i = 0; i < batch.length; i++) {
    const row = batch.row(i);
    seen.add(row[0]);
    const used = protocol.inners[row[0]].rowBytes;
    assert.ok(row.subarray(1 + used).every((byte) => byte === 0));
  }
  assert.deepEqual([...seen].sort(), [0, 1, 2]);
});
