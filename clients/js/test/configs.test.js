// The client reads every config Python writes for a supported protocol (normalized to exactly
// Python's config), and refuses unsupported protocols and bad parameters with a clear error.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  InvalidParameterError,
  InvalidValueTypeError,
  OutOfDomainError,
  SUPPORTED_PROTOCOLS,
  UnsupportedProtocolError,
  fromConfig,
  privatize,
} from '../src/index.js';
import { deterministicSource, fixture } from './helpers.js';

test('every Python-written config of a supported protocol parses to the same config', () => {
  let parsed = 0;
  for (const config of fixture.configs) {
    assert.deepEqual(fromConfig(config).config, config);
    assert.deepEqual(fromConfig(JSON.stringify(config)).config, config);
    parsed += 1;
  }
  assert.ok(parsed >= 15, `only ${parsed} supported configs in the fixture`);
});

test('configs of unsupported protocols are refused, naming the protocol and the supported ones', () => {
  // every registered Python protocol outside SUPPORTED_PROTOCOLS, and every one inside, is checked live by
  // tests/clients/test_js_client.py (the supported protocols are the modules of src/protocols: test/package.test.js)
  for (const config of [{ protocol: 'cp', version: 1, epsilon: 1, domain_size: 6 }, { protocol: 'toString', epsilon: 1 }]) {
    assert.throws(() => fromConfig(config), (error) => {
      assert.ok(error instanceof UnsupportedProtocolError);
      assert.match(error.message, new RegExp(`protocol '${config.protocol}'`));
      assert.ok(error.message.includes(`it implements ${[...SUPPORTED_PROTOCOLS].sort().join(', ')}.`), error.message);
      return true;
    });
  }
});

test('defaults are filled in and numbers normalized as Python does', () => {
  assert.deepEqual(fromConfig({ protocol: 'sw', epsilon: 1 }).config, {
    protocol: 'sw', version: 1, epsilon: 1, bounds: [0, 1], bins: 1024, output_bins: null, b: null, discrete: false,
  });
  assert.deepEqual(fromConfig({ protocol: 'olh', epsilon: 2, domain_size: 10 }).config, {
    protocol: 'olh', version: 1, epsilon: 2, domain_size: 10, hash_range: null, hash_prime: 2147483647,
  });
});

test("epsilon outside Python's and Java's range, a number no double computes with, a null version: refused", () => {
  const cases = [ // epsilon 1e308 made OUE send the true value half the time; b = 1e308 a raw RangeError
    [{ protocol: 'grr', epsilon: 1e308, domain_size: 5 }, /'epsilon' parameter of GRR must be a finite float >= 1e-06 and <= 30/],
    [{ protocol: 'grr', epsilon: 30.000001, domain_size: 5 }, /'epsilon' parameter of GRR/],
    [{ protocol: 'grr', epsilon: 1e-7, domain_size: 5 }, /'epsilon' parameter of GRR/],
    [{ protocol: 'l-grr', epsilon: 2, epsilon_1: 1e-320, domain_size: 5 }, /'epsilon_1' parameter of L-GRR/],
    [{ protocol: 'sw', epsilon: 1, b: 1e308 }, /protocol 'sw' holds a number this client cannot compute with/],
    [{ protocol: 'grr', version: null, epsilon: 1, domain_size: 5 }, /Config version null .* not supported/],
  ];
  for (const [config, message] of cases) {
    assert.throws(() => fromConfig(config), (error) => error instanceof InvalidParameterError && message.test(error.message));
  }
  assert.equal(fromConfig({ protocol: 'grr', epsilon: 30, domain_size: 5 }).epsilon, 30); // both ends taken
  assert.equal(fromConfig({ protocol: 'grr', epsilon: 1e-6, domain_size: 5 }).epsilon, 1e-6);
});

test('bad configs are refused with the parameter, the value and what is allowed', () => {
  const cases = [
    [{ protocol: 'grr', epsilon: 0, domain_size: 5 }, /'epsilon' parameter of GRR must be a finite float >= 1e-06 and <= 30\. Got 0/],
    [{ protocol: 'grr', epsilon: 1 }, /GRR needs the parameter 'domain_size'/],
    [{ protocol: 'grr', epsilon: 1, domain_size: 1 }, /'domain_size' parameter of GRR must be an int in \[2, 2147483647\]\. Got 1/],
    [{ protocol: 'oue', epsilon: 1, domain_size: 2.5 }, /'domain_size' parameter of OUE/],
    [{ protocol: 'grr', epsilon: 1, domain_size: 5, extra: 1 }, /unknown parameter/],
    [{ protocol: 'olh', epsilon: 1, domain_size: 5, hash_prime: 9 }, /'hash_prime' parameter of OLH must be a prime\. Got 9/],
    [{ protocol: 'sw', epsilon: 1, bounds: [1, 0] }, /'bounds' parameter of SW must be a pair/],
    [{ protocol: 'sw', epsilon: 1, discrete: true, output_bins: 8 }, /'output_bins' parameter of SW must be None/],
    [{ protocol: 'gw', epsilon: 1, shape: 'triangle', ratio: 0.3 }, /'ratio' parameter of GW must be None/],
    [{ protocol: 'grr', version: 2, epsilon: 1, domain_size: 5 }, /Config version 2 .* not supported/],
    [{ epsilon: 1 }, /must be an object with a 'protocol' key/],
    ['{not json', /not valid JSON/],
  ];
  for (const [config, message] of cases) {
    assert.throws(() => fromConfig(config), (error) => error instanceof InvalidParameterError && message.test(error.message));
  }
});

test('ocms refuses a bound on the frequencies below 1/d, as Python does', () => {
  assert.throws(
    () => fromConfig({ protocol: 'ocms', epsilon: 1, domain_size: 16, max_frequency: 0.01 }),
    (error) => error instanceof InvalidParameterError && /'max_frequency' parameter of OCMS must be in \[1\/d, 1\] = \[0\.0625, 1\].*Got 0\.01/.test(error.message),
  );
  assert.equal(fromConfig({ protocol: 'ocms', epsilon: 1, domain_size: 16, max_frequency: 0.0625 }).config.max_frequency, 0.0625);
});

test('bad values are refused before anything is drawn', () => {
  const source = deterministicSource(1);
  const grr = { protocol: 'grr', epsilon: 1, domain_size: 5 };
  assert.throws(() => privatize(grr, [0, 5], { source }), (e) => e instanceof OutOfDomainError
    && /The value at position 1 is outside it \(not shown: a user's value is private\)\.$/.test(e.message) && !/5 at/.test(e.message));
  assert.throws(() => privatize(grr, [1.5], { source }), InvalidValueTypeError);
  assert.throws(() => privatize(grr, ['1'], { source }), InvalidValueTypeError);
  assert.throws(() => privatize(grr, 3, { source }), InvalidValueTypeError);
  const sw = { protocol: 'sw', epsilon: 1, bounds: [0, 10] };
  assert.throws(() => privatize(sw, [NaN], { source }), OutOfDomainError);
  // outside the bounds (infinities included): randomized as the nearest bound, as Python and Java clip
  const [clipped, nearest] = [[-Infinity, 10.5, 1e300], [0, 10, 10]].map((values) => privatize(sw, values, { source: deterministicSource(7) }));
  assert.deepEqual(clipped, nearest);
  // opm-circular wraps a finite value around the circle (25 h is 1 h) and clips an infinity, as Python
  const circle = { protocol: 'opm-circular', epsilon: 4, bounds: [0, 24] };
  const draws = (value) => privatize(circle, new Array(200).fill(value), { source: deterministicSource(3) });
  for (const [outside, inside] of [[25, 1], [-1, 23], [48, 0], [Infinity, 24], [-Infinity, 0]]) assert.deepEqual(draws(outside), draws(inside));
  assert.notDeepEqual(draws(25), draws(24));
  assert.equal(privatize(sw, [0, 10, 3.3], { source }).length, 3);
});

test('labels: a public label domain, values by label or item, labels kept in the config', () => {
  const config = { protocol: 'oue', version: 1, epsilon: 1.0, labels: ['ja', 'nein', 'vielleicht', 'über'] };
  const protocol = fromConfig(config);
  assert.equal(protocol.domainSize, 4);
  assert.deepEqual(protocol.config, { ...config, domain_size: 4 });
  assert.equal(protocol.labelOf(3), 'über');
  const source = deterministicSource(8);
  const batch = privatize(protocol, ['über', 'ja', 2], { source });
  assert.equal(batch.length, 3);
  assert.throws(() => privatize(protocol, ['vielleicht ', 0], { source }), (e) => e instanceof OutOfDomainError
    && /The value at position 0 is not a label \(not shown/.test(e.message) && !e.message.includes('vielleicht'));
  assert.throws(() => fromConfig({ ...config, domain_size: 5 }), /must hold domain_size=5 labels\. Got 4/);
  assert.throws(() => fromConfig({ ...config, labels: ['a', 'a'] }), /'labels' parameter of OUE must be None \(null\) or a list of at least 2 distinct non-empty strings/);
  assert.deepEqual(fromConfig({ protocol: 'grr', epsilon: 1, domain_size: 3, labels: null }).config, { protocol: 'grr', version: 1, epsilon: 1, domain_size: 3 });
  assert.throws(() => privatize({ protocol: 'grr', epsilon: 1, domain_size: 3 }, ['a'], { source }), InvalidValueTypeError);
});

test('hashing protocols work at the top of the epsilon range (a hash range above 2^32)', () => {
  const configs = [
    { protocol: 'olh', version: 1, epsilon: 30.0, domain_size: 100, hash_range: null, hash_prime: 2 ** 31 - 1 },
    { protocol: 'loloha', version: 1, epsilon: 30.0, epsilon_1: 29.0, domain_size: 100, variant: 'optimal', hash_prime: 2 ** 31 - 1 },
    { protocol: 'pem', version: 1, epsilon: 30.0, bits: 16, alphabet: null, max_chars: 12, k: 4, step: null, hash_count: 64, family_seed: 0 },
  ];
  for (const config of configs) {
    const protocol = fromConfig(config);
    const source = deterministicSource(3);
    const word = source.word.bind(source);
    let budget = 100_000; // a rejection loop that never ends fails here instead of hanging
    source.word = () => {
      if (--budget < 0) throw new Error('drew 100,000 words for 4 reports');
      return word();
    };
    const batch = protocol.privatize([1, 2, 3, 99], source);
    assert.equal(batch.length, 4);
    if (config.protocol !== 'pem') {
      assert.ok(protocol.g > 2 ** 32, `${config.protocol}: g = ${protocol.g}`);
      for (let i = 0; i < batch.length; i++) assert.ok(protocol.decode(batch.row(i)).value < protocol.g);
    }
  }
});
