// The consent sentence: the bound of the protocol's epsilon beside chance (Python's dpdist.accounting.guess_bound),
// in the words the Java client writes too.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { consentText, fromConfig, guessBound, guessOdds, percent } from '../src/index.js';

const make = (config) => fromConfig({ version: 1, ...config });
/** The prior the figures assume, and what holds whatever the attacker knows (e^epsilon, at most the values). */
const prior = (times) => `, if every answer is equally likely; whatever else they know, at most ${times} times a blind guess.`;

test('GRR states its exact odds and the other protocols an upper bound', () => {
  assert.ok(Math.abs(guessBound(1, 1 / 8) - Math.E / (Math.E + 7)) < 1e-15);
  assert.equal(consentText(make({ protocol: 'grr', epsilon: 1, domain_size: 8 })),
    `Someone who sees your report can guess your value with a probability of 28%, against 12.5% by chance${prior('2.72')}`);
  assert.equal(consentText(make({ protocol: 'oue', epsilon: 1, domain_size: 8 })),
    `Someone who sees your report can guess your value with a probability of at most 28%, against 12.5% by chance${prior('2.72')}`);
  assert.equal(consentText(make({ protocol: 'grr', epsilon: 3, domain_size: 8 })),
    `Someone who sees your report can guess your value with a probability of 74.2%, against 12.5% by chance${prior('8')}`);
  assert.equal(guessOdds(make({ protocol: 'grr', epsilon: 1, domain_size: 8 })).exact, true);
});

test('a longitudinal protocol states one report and every report of an unchanged value', () => {
  const odds = guessOdds(make({ protocol: 'l-grr', epsilon: 2, epsilon_1: 1, domain_size: 8 }));
  assert.equal(odds.memo.probability, guessBound(odds.memo.epsilon, 1 / 8));
  assert.equal(consentText(make({ protocol: 'l-grr', epsilon: 2, epsilon_1: 1, domain_size: 8 })),
    'Someone who sees one of your reports can guess your value with a probability of at most 28%; all of your ' +
      'reports of a value that does not change, at most 51.4%; against 12.5% by chance' + prior('7.39'));
});

test('numbers, records and words are guessed among ranges, answers and words', () => {
  assert.equal(consentText(make({ protocol: 'sw', epsilon: 1, bounds: [0, 100], bins: 20 })),
    'Someone who sees your report can guess which of 10 equal ranges of [0, 100] your value lies in with a ' +
      `probability of at most 23.2%, against 10% by chance${prior('2.72')}`);
  assert.equal(consentText(make({ protocol: 'spl', epsilon: 2, attributes: [{ name: 'a', domain_size: 3 }, { name: 'b', bounds: [0, 1] }] })),
    'Someone who sees your report can guess your answer to one question with a probability of at most 78.7%, ' +
      `against 33.3% by chance${prior('3')}`);
  assert.equal(consentText(make({ protocol: 'pem', epsilon: 2, bits: 32 })),
    'Someone who sees your report can guess your word with a probability of at most 7.39 times that of a blind ' +
      `guess, a blind guess being right once in 4,290,000,000${prior('7.39')}`);
  assert.equal(consentText(make({ protocol: 'privkv', epsilon: 1, domain_size: 4 })), null);
});

test('a percentage is never rounded up to certainty', () => {
  assert.equal(percent(0.99999995), '99.999995%');
  assert.equal(percent(0.99999995, true), '99.999995%');
  assert.equal(percent(1), '100%');
  assert.equal(percent(0.51351916), '51.4%');
});

test('a bound is rounded up, chance to the nearest, both in decimal from twelve digits', () => {
  assert.deepEqual([0.28049, 0.28, 0.2800000000001, 0].map((v) => percent(v, true)), ['28.1%', '28%', '28%', '0%']);
  assert.deepEqual([0.28049, 1 / 32, 0.3145].map((v) => percent(v)), ['28%', '3.13%', '31.5%']);
});
