// Ledger.statement: the charges at a delta, as Python's PrivacyLedger.statement states them (the cross-check with
// Python on the same ledgers is tests/clients/test_js_ledger_statement.py).
import assert from 'node:assert/strict';
import test from 'node:test';

import { InvalidParameterError } from '../src/errors.js';
import {
  FRESH_RANDOMNESS, Ledger, MEMO_ASSUMPTION, NO_CHARGE_ASSUMPTION, STABLE_ASSUMPTION, composedRandomizedResponse, fsum,
  windowAssumption,
} from '../src/ledger.js';
import { fromConfig } from '../src/index.js';

function charges(epsilon, days, protocol = 'grr') {
  return Array.from({ length: days }, (_, day) => ({ at: 1000 + day, epsilon, collector: 'c', protocol, reports: 1 }));
}

test('a year of daily reports of 0.1 is stated as 11.952 at 1e-8, never above the sum', () => {
  const ledger = Ledger.fromJSON({ format: 'dpdist-ledger', version: 1, budget: 400, window: null, accounting: 'history',
    streams: {}, charges: charges(0.1, 365) });
  const stated = ledger.statement(1e-8, 'tightest', 2000);
  assert.equal(stated.accountant, 'pld');
  assert.ok(Math.abs(stated.epsilon - 11.9521834) < 1e-6, String(stated.epsilon));
  assert.equal(ledger.statement(1e-8, 'basic', 2000).epsilon, ledger.spent(2000));
  assert.equal(ledger.statement(0, 'tightest', 2000).accountant, 'basic');
  assert.equal(composedRandomizedResponse([], 1e-8), 0);
});

test('a memo\'s charges are one mechanism, not fresh ones', () => {
  const state = { format: 'dpdist-ledger', version: 1, budget: 400, window: null, accounting: 'history', streams: {},
    charges: charges(0.1, 100, 'l-grr') };
  const memo = Ledger.fromJSON(state).statement(1e-8, 'tightest', 2000);
  const fresh = Ledger.fromJSON({ ...state, charges: charges(0.1, 100) }).statement(1e-8, 'tightest', 2000);
  assert.ok(memo.epsilon > 1.5 * fresh.epsilon, `${memo.epsilon} ${fresh.epsilon}`);
});

test('a bad delta or accountant is refused by name', () => {
  const ledger = new Ledger();
  assert.throws(() => ledger.statement(1), (error) => error instanceof InvalidParameterError && /'delta'/.test(error.message));
  assert.throws(() => ledger.statement(1e-8, 'zcdp'), (error) => error instanceof InvalidParameterError && /'accountant'/.test(error.message));
});

test('under stable accounting the statement names the stable relation, not replace', () => {
  const state = { format: 'dpdist-ledger', version: 1, budget: 400, window: null, accounting: 'stable', streams: {},
    charges: charges(1, 8, 'dbitflippm') };
  for (const accountant of ['tightest', 'basic', 'pld']) {
    assert.equal(Ledger.fromJSON(state).statement(1e-8, accountant, 2000).relation, 'stable');
    assert.equal(Ledger.fromJSON({ ...state, accounting: 'history' }).statement(1e-8, accountant, 2000).relation, 'replace');
  }
});

test('a windowed ledger states its window only and says so; an empty one says nothing was charged', () => {
  const ledger = new Ledger({ budget: 2, window: 86400 });
  const state = { format: 'dpdist-ledger', version: 1, budget: 2, window: 86400, accounting: 'history', streams: {},
    charges: Array.from({ length: 730 }, (_, index) => ({ at: 86400 * Math.floor(index / 2) + (index % 2), epsilon: 0.5,
      collector: 'c', protocol: 'grr', reports: 1 })) };
  const year = Ledger.fromJSON(state);
  const lastDay = year.statement(1e-8, 'tightest', 86400 * 364 + 10);
  assert.ok(Math.abs(lastDay.epsilon - 1) < 1e-6, String(lastDay.epsilon));
  assert.deepEqual(lastDay.assumptions, [FRESH_RANDOMNESS, windowAssumption(86400)]);
  const later = year.statement(1e-8, 'tightest', 86400 * 400);
  assert.deepEqual(later.assumptions, [NO_CHARGE_ASSUMPTION, windowAssumption(86400)]);
  assert.deepEqual(new Ledger().statement(1e-8).assumptions, [NO_CHARGE_ASSUMPTION]);
  assert.equal(ledger.statement(1e-8).assumptions.length, 2);
});

test("a statement assumes what Python's does, in its order: a memo's one memo, then fresh randomness", () => {
  const charge = (protocol, epsilon, at) => ({ at, epsilon, collector: 'c', protocol, reports: 1 });
  const state = (accounting, charges) => ({ format: 'dpdist-ledger', version: 1, budget: 100, window: null, accounting,
    streams: {}, charges });
  assert.deepEqual(Ledger.fromJSON(state('history', [charge('grr', 0.1, 1)])).statement(1e-8).assumptions,
    [FRESH_RANDOMNESS]);
  const memo = [charge('l-grr', 0.5, 1), charge('l-grr', 0.25, 2), charge('grr', 0.1, 3)];
  for (const accountant of ['tightest', 'basic', 'pld']) {
    assert.deepEqual(Ledger.fromJSON(state('history', memo)).statement(1e-8, accountant, 10).assumptions,
      [MEMO_ASSUMPTION, FRESH_RANDOMNESS]);
    assert.deepEqual(Ledger.fromJSON(state('stable', memo)).statement(1e-8, accountant, 10).assumptions,
      [MEMO_ASSUMPTION, FRESH_RANDOMNESS, STABLE_ASSUMPTION]);
  }
});

test('the ledger sums its charges as Python does (math.fsum): a budget of 36.5 takes 365 reports of 0.1', () => {
  const grr = fromConfig({ protocol: 'grr', version: 1, epsilon: 0.1, domain_size: 16 });
  const ledger = new Ledger({ budget: 36.5 });
  for (let day = 0; day < 365; day += 1) ledger.report(grr, [day % 16], { collector: 'https://c.example', now: 86400 * day });
  assert.equal(ledger.spent(), 36.5);
  assert.equal(fsum([0.1, 0.2, 0.3]), 0.6);
  assert.equal(fsum([1e100, 1, -1e100]), 1);
});
