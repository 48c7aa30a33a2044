// Ledger.statement: the charges at a delta, as Python's PrivacyLedger.statement states them (the cross-check with
// Python on the same ledgers is tests/clients/test_js_ledger_statement.py).
import assert from 'node:assert/strict';
import test from 'node:test';

import { InvalidParameterError } from '../src/errors.js';
import { Ledger, composedRandomizedResponse } from '../src/ledger.js';

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
