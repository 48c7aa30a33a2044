// Records of several attributes ("spl", "smp", "rsfd", "rsrfd", "calm", "hdg"), against the client views
// and exact channels Python publishes (fixture "multi", clients/js/test/make_fixture.py):
//  1. the published client view is accepted (each attribute's or group's protocol, budget, format and
//     design constants equal this client's derivation) and gives back Python's config;
//  2. the exact JS law of a record's report equals Python's channel() over the same records;
//  3. that law satisfies the epsilon-LDP bound over the records;
//  4. 2 x 10^5 seeded reports per record follow Python's channel() (Pearson chi-square at
//     ALPHA = 1e-6, Bonferroni over the records);
//  5. a view with a changed constant or format is refused; bad records are refused naming the attribute;
//  6. rsrfd's priors are realized as Python realizes them, hdg's granularities derived as Python derives them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, InvalidValueTypeError, OutOfDomainError, fromConfig, privatize } from '../src/index.js';
import { quantizePrior } from '../src/fake.js';
import { guidelineGranularities } from '../src/protocols/_marginals.js';
import { RecordProtocol } from '../src/records.js';
import { CHANNEL_SLACK, checkSampledChannel, deterministicSource, fixture, maxPrivacyLoss } from './helpers.js';

const SAMPLES_PER_RECORD = 200_000;

test("the fixture's record cases are the client's protocols over records, of several kinds", () => {
  // every record protocol of the client is compared with Python over its conformance examples by
  // tests/clients/test_js_conformance.py; these hand-picked cases add attribute and oracle mixes
  const kinds = new Set(fixture.multi.map(({ view }) => view.config.protocol));
  for (const name of kinds) assert.ok(fromConfig(fixture.multi.find(({ view }) => view.config.protocol === name).view) instanceof RecordProtocol, name);
  assert.ok(kinds.size >= 4, [...kinds].join(' '));
});

/** What a case is called: the protocol, each attribute's protocol or each group's oracle, and epsilon. */
function caseName(view) {
  const parts = view.design.attributes ?? view.design.groups;
  return `${view.config.protocol} ${JSON.stringify(parts.map((part) => part.protocol))} epsilon ${view.config.epsilon}`;
}

for (const [index, { view, inputs, channel }] of fixture.multi.entries()) {
  const name = caseName(view);

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
    const key = 'attributes' in view.design ? 'attributes' : 'groups';
    const parts = view.design[key];
    const first = parts[0];
    const [constant, value] = Object.entries(first.design)[0];
    const changed = typeof value === 'number' ? (Number.isInteger(value) ? value + 1 : Math.min(1, value * 1.25 + 1e-3)) : null;
    const tampered = [
      { ...view, design: { ...view.design, [key]: [{ ...first, design: { ...first.design, [constant]: changed } }, ...parts.slice(1)] } },
      { ...view, design: { ...view.design, [key]: [{ ...first, epsilon: first.epsilon * 2 }, ...parts.slice(1)] } },
      { ...view, design: { ...view.design, [key]: [{ ...first, protocol: first.protocol === 'grr' ? 'oue' : 'grr' }, ...parts.slice(1)] } },
      { ...view, design: { ...view.design, [key]: parts.slice(1) } },
      { ...view, design: { ...view.design, keep: 0.9 } },
      { ...view, format: { ...view.format, dtype: [[view.format.dtype[0][0], '<u2'], ...view.format.dtype.slice(1)] } },
      { ...view, format: { ...view.format, fields: view.format.fields.map((f, i) => (i ? f : { ...f, high: 1, reason: 'wide' })) } },
      ...('g1' in view.design ? [{ ...view, design: { ...view.design, g1: view.design.g1 * 2 } }, { ...view, design: { ...view.design, g2: 1 } }] : []),
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
    [[7], InvalidValueTypeError, /must hold records/],
    ['x', InvalidValueTypeError, /array of records/],
  ];
  for (const [values, type, message] of refused) {
    assert.throws(() => protocol.privatize(values, source), (error) => error instanceof type && message.test(error.message), JSON.stringify(values));
  }
  // a number outside its attribute's bounds is randomized as the nearest bound, as Python clips it
  assert.deepEqual(protocol.privatize([['x', 1, 11]], deterministicSource(9)).bytes, protocol.privatize([['x', 1, 10]], deterministicSource(9)).bytes);
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

test("rsrfd's priors are realized on Python's 2^-32 grid, weight for weight", () => {
  assert.ok(fixture.priors.length >= 14 && fixture.priors.some(({ prior }) => prior.length > 128));
  for (const { prior, weights } of fixture.priors) {
    assert.deepEqual(quantizePrior(prior), weights, `prior of ${prior.length} entries`);
    assert.equal(weights.reduce((a, b) => a + b, 0), 2 ** 32);
  }
});

test("hdg's granularities are Python's guideline, over users, epsilons, attributes and resolutions", () => {
  assert.ok(fixture.granularities.length > 500);
  for (const [n, epsilon, k, hybrid, resolution, g1, g2] of fixture.granularities) {
    assert.deepEqual(guidelineGranularities(n, epsilon, k, hybrid, resolution), [g1, g2], JSON.stringify([n, epsilon, k, hybrid, resolution]));
  }
});

test('calm, hdg and rsrfd configs are normalized and refused as Python does', () => {
  const calm = fromConfig({ protocol: 'calm', epsilon: 1, attributes: [{ name: 'a', domain_size: 3 }, { name: 'b', domain_size: 3 }, { name: 'c', domain_size: 9 }] });
  assert.deepEqual(calm.config.order, 2);
  assert.deepEqual(calm.groups.names, ['a,b', 'a,c', 'b,c']);
  assert.deepEqual(calm.groups.inners.map((inner) => [inner.name, inner.domainSize]), [['grr', 9], ['oue', 27], ['oue', 27]]); // 3e + 2 = 10.15
  const hdg = fromConfig({ protocol: 'hdg', epsilon: 1, attributes: [{ name: 'x', bounds: [0, 1] }, { name: 'y', bounds: [0, 2] }, { name: 'z', bounds: [0, 3] }] });
  assert.deepEqual(hdg.groups.names, ['x,y', 'x,z', 'y,z', 'x', 'y', 'z']);
  assert.deepEqual([hdg.g1, hdg.g2], guidelineGranularities(1e6, 1, 3, true, 64));
  const tdg = fromConfig({ protocol: 'hdg', epsilon: 1, hybrid: false, g1: 64, g2: 4, attributes: hdg.attributes.map(({ name, bounds }) => ({ name, bounds })) });
  assert.deepEqual([tdg.g1, tdg.g2, tdg.groups.count], [4, 4, 3]);
  const two = [{ name: 'a', domain_size: 2 }, { name: 'b', domain_size: 2 }];
  const refused = [
    [{ protocol: 'calm', epsilon: 1, order: 3, attributes: two }, /'order' parameter of CALM must be at most the number of attributes \(2\)/],
    [{ protocol: 'calm', epsilon: 1, order: 5, attributes: two }, /'order' parameter of CALM must be an int in \[1, 4\]/],
    [{ protocol: 'calm', epsilon: 1, oracle: 'olh', attributes: two }, /'oracle' parameter of CALM/],
    [{ protocol: 'calm', epsilon: 1, attributes: [{ name: 'a', domain_size: 2, protocol: 'grr' }, two[1]] }, /without 'protocol' or 'options'.*'a' is categorical with a protocol/],
    [{ protocol: 'calm', epsilon: 1, attributes: [{ name: 'a', domain_size: 300 }, { name: 'b', domain_size: 300 }] }, /90000 cells; at most 65536/],
    [{ protocol: 'calm', epsilon: 1, attributes: [two[0], { name: 'x', bounds: [0, 1] }] }, /must hold categorical attributes/],
    [{ protocol: 'hdg', epsilon: 1, attributes: two }, /must hold numerical attributes/],
    [{ protocol: 'hdg', epsilon: 1, attributes: [{ name: 'x', bounds: [0, 1] }] }, /at least two numerical attributes/],
    [{ protocol: 'hdg', epsilon: 1, resolution: 48, attributes: hdg.attributes }, /'resolution' parameter of HDG must be a power of two from 4 to 1024/],
    [{ protocol: 'hdg', epsilon: 1, g1: 4, g2: 8, attributes: hdg.attributes }, /g2 <= g1 <= resolution \(64\)\. Got g1=4, g2=8/],
    [{ protocol: 'rsrfd', epsilon: 1, priors: [[0.5, 0.5]], attributes: [{ name: 'a', domain_size: 2, protocol: 'grr' }, { name: 'b', domain_size: 2, protocol: 'grr' }] }, /one prior per attribute \(2\)\. Got 1/],
    [{ protocol: 'rsrfd', epsilon: 1, priors: [[0.5, 0.6]], attributes: [{ name: 'a', domain_size: 2, protocol: 'grr' }] }, /'priors' parameter of RSRFD must be/],
    [{ protocol: 'rsrfd', epsilon: 1, priors: [[0.2, 0.3, 0.5]], attributes: [{ name: 'a', domain_size: 2, protocol: 'grr' }] }, /prior of attribute 'a' must hold domain_size=2/],
    [{ protocol: 'rsrfd', epsilon: 1, fake: 'zero', attributes: [{ name: 'a', domain_size: 2, protocol: 'oue' }] }, /unknown parameter 'fake'/],
  ];
  for (const [config, message] of refused) {
    assert.throws(() => fromConfig(config), (error) => error instanceof InvalidParameterError && message.test(error.message), JSON.stringify(config));
  }
});

test('calm and hdg records are checked per attribute; a report names its cell', () => {
  const { view } = fixture.multi.find(({ view: v }) => v.config.protocol === 'hdg');
  const hdg = fromConfig(view);
  assert.deepEqual(hdg.privatize([[11, 0]], deterministicSource(1)).bytes, hdg.privatize([[10, 0]], deterministicSource(1)).bytes); // clipped
  assert.throws(() => hdg.privatize([{ x: 1 }], deterministicSource(1)), (error) => error instanceof InvalidValueTypeError && /has no 'y'/.test(error.message));
  const batch = hdg.privatize(new Array(200).fill([9.9, 0.99]), deterministicSource(3));
  const described = new Set(Array.from({ length: 200 }, (_, i) => hdg.describeReport(batch.row(i))));
  assert.ok([...described].some((text) => /^grid x,y: reports the cell x in \[(0|5), (5|10)[)\]], y in \[/.test(text)), [...described].join(' | '));
  const calm = fromConfig(fixture.multi.find(({ view: v }) => v.config.protocol === 'calm').view);
  assert.throws(() => calm.privatize([['w', 0, 0]], deterministicSource(1)), (error) => error instanceof OutOfDomainError && /attribute 'a'/.test(error.message));
  const reports = calm.privatize(new Array(100).fill(['z', 1, 0]), deterministicSource(4));
  assert.ok(Array.from({ length: 100 }, (_, i) => calm.describeReport(reports.row(i))).some((text) => /^marginal a,b: reports the cell a=[xyz], b=[01]$/.test(text)));
});

test('past 65,536 marginals the group index is a uint32, as in Python (it wrapped at uint16)', () => {
  const calm = fromConfig({ protocol: 'calm', epsilon: 1, order: 4, attributes: Array.from({ length: 40 }, (_, i) => ({ name: `a${i}`, domain_size: 2 })) });
  assert.equal(calm.groups.count, 91390);
  assert.deepEqual(calm.descr, [['marginal', '<u4'], ['payload', '|u1', [2]]]);
  const batch = calm.privatize(new Array(2000).fill(new Array(40).fill(1)), deterministicSource(6));
  const groups = Array.from({ length: 2000 }, (_, i) => calm.groups.split(batch.row(i))[0]);
  assert.ok(Math.max(...groups) > 65535 && groups.every((g) => g < 91390)); // P(all below 65,536) = (0.717)^2000: nil
});

test('an opm-circular attribute of a record wraps around the circle as one value does, as Python records do', () => {
  const spl = fromConfig({ protocol: 'spl', epsilon: 4, attributes: [{ name: 'c', domain_size: 2 }, { name: 'h', bounds: [0, 24], protocol: 'opm-circular' }] });
  const draws = (hour) => spl.privatize(new Array(200).fill([1, hour]), deterministicSource(3)).bytes;
  assert.deepEqual(draws(25), draws(1));
  assert.notDeepEqual(draws(25), draws(24));
  assert.deepEqual(draws(-1), draws(23));
  assert.deepEqual(draws(48.5), draws(0.5));
  assert.deepEqual(draws(Infinity), draws(24)); // an infinity has no place on the circle: clipped
  assert.deepEqual(draws(-Infinity), draws(0));
  assert.throws(() => spl.privatize([[1, NaN]], deterministicSource(3)), /attribute 'h'.*missing value \(NaN\)/);
});
