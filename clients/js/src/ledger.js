// A device's privacy ledger (Python's dpdist.local.ledger.PrivacyLedger, the same JSON): what each
// collector has spent on this device, the memos it keeps, and the budget its owner set.
//
// * Memos are kept per *scope*: the collector and the config without its budgets (epsilon,
//   epsilon_1).  A collector that changes a budget, even by 1e-12, cannot make the device draw its
//   permanent responses again: the report is refused.  Another domain or protocol is a new scope,
//   charged like any other.
// * Every report is charged before it is drawn, and refused (PrivacyBudgetError, with the reason and
//   the budget left) if it would spend more than the budget within the window.  Charges depend only on
//   public quantities (the config and how many reports the scope has had), never on the values, so a
//   refusal reveals nothing.
// * A question asked once per device (report(..., {once})) is answered at most once: a campaign in rounds
//   (adaptive quantiles) states epsilon per user by parallel composition, which holds only if each device answers
//   one round; every round has its own config, so without this the device would answer again (Python's ``once``).
// * accounting 'history' (default): against every other history of the device's values; the T-th report
//   through a memo costs eps_T - eps_{T-1} (Python's epsilon_over_changes); 'stable': eps_inf for each of a
//   memo's first K reports (K keys), nothing after.  A ledger's accounting cannot change once it has charges.

import { DPDistError, IncompatibleStateError, InvalidParameterError } from './errors.js';
import { ReportBatch } from './protocols/_base.js';
import { Memo, isLongitudinal } from './protocols/_longitudinal.js';
import { exp } from './libm.js';
import { SUPPORTED_PROTOCOLS, fromConfig } from './registry.js';
import { secureSource } from './random.js';

export const LEDGER_FORMAT = 'dpdist-ledger';
/** The total epsilon a device spends, over every collector, unless its owner sets another (as Python). */
export const DEFAULT_BUDGET = 10.0;
export const ACCOUNTINGS = ['history', 'stable'];
const BUDGET_KEYS = new Set(['epsilon', 'epsilon_1']);
/** The protocols that report through a memo (Python's tags.memoized; tests/clients/test_js_ledger_statement.py checks). */
export const MEMOIZED_PROTOCOLS = Object.freeze(['dbitflippm', 'l-grr', 'l-osue', 'loloha']);
/** The accountants of ``Ledger.statement`` (Python's PrivacyLedger.statement also states 'zcdp'). */
export const STATEMENT_ACCOUNTANTS = Object.freeze(['tightest', 'basic', 'pld']);
/** What a statement with no charge to cover says (Python's NO_CHARGE_ASSUMPTION, word for word). */
export const NO_CHARGE_ASSUMPTION = 'nothing charged: no report the statement covers cost any epsilon (none was sent, '
  + "its charges left the window, or stable accounting charges a memo's later reports nothing)";
/** What composing several mechanisms assumes of their randomness (Python's accounting.FRESH_RANDOMNESS, word for word):
 * every statement of a charge assumes it, as Python's sequential composition of the ledger's charges does. */
export const FRESH_RANDOMNESS = "each mechanism draws fresh randomness (no report, memo or shuffle's sample reused across "
  + 'them)';
/** What a memo's charges, stated as one mechanism, assume (Python's accounting.MEMO_ASSUMPTION, word for word). */
export const MEMO_ASSUMPTION = 'one memo per device and scope, kept across reports (the ledger keeps it): the reports '
  + 'are one mechanism, not fresh ones';
/** What stable accounting's statement assumes (Python's STABLE_ASSUMPTION, word for word). */
export const STABLE_ASSUMPTION = "stable accounting: the charges bound only histories of the device's values with the "
  + "same pattern of changes (RAPPOR's relation), nothing about when a value changes";

/**
 * The correctly rounded sum of ``values``, as Python's ``math.fsum`` (Shewchuk's partials, CPython's final rounding):
 * the ledger's spent sum, so that a budget refuses exactly where Python's ledger does (a naive sum of 365 charges of
 * 0.1 was 36.50000000000025, and refused the 365th report under a budget of 36.5).
 */
export function fsum(values) {
  const partials = [];
  for (let x of values) {
    let i = 0;
    for (let y of partials) {
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n];
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo !== 0) break;
  }
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x; // the half-way case: round as the exact sum would
  }
  return hi;
}

/** What a statement of a ledger with a ``window`` (seconds) covers (Python's window_assumption, word for word). */
export function windowAssumption(window) {
  return `the charges of the last ${String(window)} s only (the ledger's window): a budget per window bounds what the `
    + 'device spends per window, not in total; earlier charges are not in this statement';
}
/** The lattice step of composed randomized responses (Python's dpdist.accounting._randomized_response.STEP). */
const LATTICE_STEP = 1e-4;

// Fresh reports ([epsilon, count, share] triples: a randomized response of epsilon with probability share, default
// 1, nothing otherwise) composed on the lattice, epsilon at delta: the steps of Python's
// dpdist.accounting._randomized_response, in the same order (each epsilon rounded up to m * STEP, the exact law of
// J = sum m_g T_g by convolving the groups' scaled laws, then the smallest epsilon read off from the top).
function binomial(k, logOdds, logNone) {
  const masses = new Float64Array(k + 1);
  let logMass = k * logNone;
  for (let b = 0; b <= k; b += 1) {
    masses[b] = exp(logMass);
    if (b < k) logMass += Math.log((k - b) / (b + 1)) + logOdds;
  }
  return masses;
}

// The law of T = 2A + Z on 0..2k (Python's _group_law): A reports answer +epsilon, Z answer nothing.
function groupLaw(k, epsilon, share) {
  const law = new Float64Array(2 * k + 1);
  const responses = (count) => binomial(count, epsilon, -Math.log1p(exp(epsilon)));
  if (share >= 1) {
    responses(k).forEach((mass, b) => { law[2 * b] = mass; });
    return law;
  }
  const answered = binomial(k, Math.log(share / (1 - share)), Math.log1p(-share));
  for (let count = 0; count <= k; count += 1) {
    const inner = responses(count);
    for (let b = 0; b <= count; b += 1) law[k - count + 2 * b] += answered[count] * inner[b];
  }
  return law;
}

function latticeLaw(groups) {
  let law = new Float64Array([1]);
  let total = 0;
  const keys = [...groups.keys()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (const key of keys) {
    const [m, share] = key;
    const k = groups.get(key);
    const masses = groupLaw(k, m * LATTICE_STEP, share);
    const wider = new Float64Array(law.length + 2 * m * k);
    for (let t = 0; t < masses.length; t += 1) {
      const mass = masses[t];
      if (mass === 0) continue;
      for (let i = 0, at = m * t; i < law.length; i += 1, at += 1) wider[at] += mass * law[i];
    }
    law = wider;
    total += m * k;
  }
  return { law, total };
}

export function composedRandomizedResponse(responses, delta, rounding = 'up') {
  const counts = new Map(); // "m share" -> [m, share, count]
  for (const [epsilon, count, given = 1] of responses) {
    const share = Math.min(given, 1);
    if (!(count > 0) || !(epsilon > 0) || !(share > 0)) continue;
    const scaled = epsilon / LATTICE_STEP;
    const m = rounding === 'up' ? Math.ceil(scaled) : Math.max(Math.floor(scaled), 0);
    if (m > 0) {
      const kept = counts.get(`${m} ${share}`) ?? [m, share, 0];
      counts.set(`${m} ${share}`, [m, share, kept[2] + count]);
    }
  }
  if (counts.size === 0) return 0;
  const { law, total } = latticeLaw(new Map([...counts.values()].map(([m, share, count]) => [[m, share], count])));
  let above = 0;
  let weighted = 0;
  const shrink = exp(-LATTICE_STEP);
  for (let j = law.length - 1; j > 0; j -= 1) {
    above += law[j];
    weighted = (weighted + law[j]) * shrink; // now at x = L_(j-1)
    const point = LATTICE_STEP * (j - 1 - total);
    if (above - weighted > delta) return Math.max(point + Math.log((above - delta) / weighted), 0);
    if (point <= 0) return 0;
  }
  return 0;
}

function isMemoized(name) {
  return MEMOIZED_PROTOCOLS.includes(name) || !SUPPORTED_PROTOCOLS.includes(name); // unknown: gathered, as Python
}

/** A ledger refused a report: over budget, or a collector changed the budgets of a kept memo. */
export class PrivacyBudgetError extends DPDistError {
  constructor(message, remaining = 0) {
    super(message);
    this.reason = message;
    this.remaining = remaining;
  }
}

function sortedJSON(value) {
  if (Array.isArray(value)) return `[${value.map(sortedJSON).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort(); // Python's sort_keys: code-point order (ASCII keys here)
    return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJSON(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A collector's name as the ledger keeps it (Python's normal_collector): an http(s) URL's origin (scheme and host in
 * lower case, no default port) and its path without trailing slashes; any other name with its trailing slashes dropped.
 */
export function normalCollector(collector) {
  if (typeof collector !== 'string') throw new InvalidParameterError(`The 'collector' of a ledger report must be a string. Got ${typeof collector}.`);
  const plain = collector.replace(/\/+$/, '') || collector;
  if (!/^https?:\/\/[^/@?#]+(\/[^?#]*)?$/i.test(collector)) return plain; // user info, a query or a fragment: as given
  let url;
  try {
    url = new URL(collector);
  } catch {
    return plain;
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** A ledger key ``"<collector> <rest>"`` written under an earlier normalization, under this one. */
function renormalized(key) {
  const space = key.indexOf(' ');
  return space < 0 ? key : `${normalCollector(key.slice(0, space))}${key.slice(space)}`;
}

/** The memo scope of ``config`` at ``collector`` (Python's budget_scope: canonical JSON without budgets). */
export function budgetScope(collector, config) {
  const open = {};
  for (const [key, value] of Object.entries(config)) if (!BUDGET_KEYS.has(key)) open[key] = value;
  return `${normalCollector(collector)} ${sortedJSON(open)}`;
}

/**
 * eps_T of T reports through one memo against every other history (Python's history_epsilon): the smaller of
 * the chain bound eps_1 + (T-1) eps_I and the relabelling bound min(T, K) eps_inf + (T - ceil(T/K)) eps_I.
 */
export function historyEpsilon(reports, { epsilon1, epsilonInf, epsilonI, keys }) {
  if (reports === 1) return epsilon1;
  if (!Number.isFinite(epsilonI)) return Infinity;
  const chainBound = epsilon1 + (reports - 1) * epsilonI;
  const relabelled = Math.min(reports, keys) * epsilonInf + (reports - Math.ceil(reports / keys)) * epsilonI;
  return Math.min(chainBound, relabelled);
}

function checkBudget(budget) {
  if (typeof budget !== 'number' || !(budget > 0) || !Number.isFinite(budget)) {
    throw new InvalidParameterError(`The 'budget' of a privacy ledger must be a finite epsilon > 0. Got ${JSON.stringify(budget)}.`);
  }
  return budget;
}

function checkWindow(window) {
  if (window === null || window === undefined) return null;
  if (typeof window !== 'number' || !(window > 0) || !Number.isFinite(window)) {
    throw new InvalidParameterError(`The 'window' of a privacy ledger must be null (all time) or seconds > 0. Got ${JSON.stringify(window)}.`);
  }
  return window;
}

function checkAccounting(accounting) {
  if (!ACCOUNTINGS.includes(accounting)) {
    throw new InvalidParameterError(`The 'accounting' of a privacy ledger must be one of ${ACCOUNTINGS.join(', ')}. Got ${JSON.stringify(accounting)}.`);
  }
  return accounting;
}

/**
 * The chance one report of ``protocol`` is a randomized response of its epsilon, 1 for every protocol but these
 * (Python's randomized_response_share: on the outputs whose law differs between two inputs, mass ``share`` under
 * either, the pair is dominated by randomized response; the others reveal nothing).  GRR: p + q; SS:
 * (pIn (d - k) + (1 - pIn) k) / (d - 1); the unary encodings: p (1 - q) + q (1 - p).
 */
export function responseShare(protocol) {
  const d = protocol.domainSize;
  switch (protocol.name) {
    case 'grr':
      return Math.min(1, protocol.keep + 2 * (1 - protocol.keep) / d);
    case 'ss':
      return Math.min(1, (protocol.pIn * (d - protocol.subsetSize) + (1 - protocol.pIn) * protocol.subsetSize) / (d - 1));
    case 'oue':
    case 'sue':
      return Math.min(1, protocol.p * (1 - protocol.q) + protocol.q * (1 - protocol.p));
    default:
      return 1;
  }
}

function checkCharge(charge) {
  const ok =
    charge !== null &&
    typeof charge === 'object' &&
    ['at,collector,epsilon,protocol,reports', 'at,collector,epsilon,protocol,reports,share']
      .includes(Object.keys(charge).sort().join(',')) &&
    (charge.share === undefined || (typeof charge.share === 'number' && charge.share > 0 && charge.share <= 1)) &&
    Number.isFinite(charge.at) &&
    typeof charge.epsilon === 'number' &&
    charge.epsilon >= 0 &&
    Number.isFinite(charge.epsilon) &&
    typeof charge.collector === 'string' &&
    typeof charge.protocol === 'string' &&
    Number.isInteger(charge.reports) &&
    charge.reports >= 1;
  if (!ok) throw new IncompatibleStateError("A privacy ledger's charge is damaged: not an object with a time and an epsilon.");
  return { ...charge };
}

function onceKey(collector, once) {
  return `${normalCollector(collector)} ${once}`;
}

/** The ledger's ``rounds`` map (the round each campaign in rounds is answered in), checked: never dropped. */
function checkRounds(rounds) {
  if (rounds === null || typeof rounds !== 'object' || Array.isArray(rounds) ||
      !Object.entries(rounds).every(([key, round]) => key.includes(' ') && Number.isSafeInteger(round) && round >= 1)) {
    throw new IncompatibleStateError("A privacy ledger's 'rounds' is damaged: not an object of round numbers.");
  }
  return new Map(Object.entries(rounds).map(([key, round]) => [renormalized(key), round]));
}

/** The ledger's ``answered`` map, checked: a damaged one is refused, never dropped (it holds refusals). */
function checkAnswers(answered) {
  if (answered === null || typeof answered !== 'object' || Array.isArray(answered)) {
    throw new IncompatibleStateError(`A privacy ledger's 'answered' must be an object. Got a ${Array.isArray(answered) ? 'list' : typeof answered}.`);
  }
  const checked = new Map();
  for (const [key, answer] of Object.entries(answered)) {
    const ok =
      key.includes(' ') &&
      answer !== null &&
      typeof answer === 'object' &&
      Object.keys(answer).sort().join(',') === 'at,protocol' &&
      Number.isFinite(answer.at) &&
      typeof answer.protocol === 'string';
    if (!ok) throw new IncompatibleStateError(`A privacy ledger's answer ${JSON.stringify(key)} is damaged: not an object of 'at' and 'protocol'.`);
    checked.set(renormalized(key), { at: answer.at, protocol: answer.protocol });
  }
  return checked;
}

/** A device's budget, its memos per scope, and every charge made (Python's PrivacyLedger). */
export class Ledger {
  /**
   * @param {{budget?: number, window?: number|null, accounting?: string}} [settings]
   * @param {{onChange?: (ledger: Ledger) => void}} [options] called with the ledger before any report it
   *   charged or memoized leaves ``report`` (persist it there)
   */
  constructor({ budget = DEFAULT_BUDGET, window = null, accounting = 'history' } = {}, { onChange = null } = {}) {
    this.budget = checkBudget(budget);
    this.window = checkWindow(window);
    this.accounting = checkAccounting(accounting);
    this.onChange = onChange;
    this._streams = new Map(); // scope -> {collector, memo, reports}
    this._charges = [];
    this._answered = new Map(); // "<collector> <once>" -> {at, protocol}
    this._rounds = new Map(); // "<collector> <once>" -> the round (1-based) this device answers
  }

  /** The ledger of ``toJSON()`` (or of Python's to_dict); a memo of the earlier format becomes one stream. */
  static fromJSON(state, { collector = 'local', onChange = null, settings = {} } = {}) {
    if (state !== null && typeof state === 'object' && state.format !== LEDGER_FORMAT && 'memo' in state) {
      const ledger = new Ledger(settings, { onChange });
      const protocol = fromConfig(state.config);
      ledger._streams.set(budgetScope(collector, protocol.config), { collector, memo: new Memo(protocol, state), reports: 0 });
      return ledger;
    }
    if (state === null || typeof state !== 'object' || state.format !== LEDGER_FORMAT || (state.version !== 1 && state.version !== 2)) {
      throw new IncompatibleStateError(`Not a dpdist privacy ledger (format '${LEDGER_FORMAT}', version 1 or 2).`);
    }
    let ledger;
    try {
      ledger = new Ledger({ budget: state.budget, window: state.window, accounting: state.accounting, ...settings }, { onChange });
    } catch (error) {
      throw new IncompatibleStateError(`A privacy ledger's settings are damaged: ${error.message}`);
    }
    if (settings.accounting !== undefined && settings.accounting !== state.accounting && (state.charges?.length ?? 0) > 0) {
      throw new IncompatibleStateError(
        `This ledger charges under '${state.accounting}' accounting; its charges cannot be re-read as '${settings.accounting}' ` +
          '(they would under- or over-count). Keep the accounting, or start a new ledger.',
      );
    }
    if (state.streams === null || typeof state.streams !== 'object' || !Array.isArray(state.charges)) {
      throw new IncompatibleStateError("A privacy ledger needs 'streams' (an object) and 'charges' (a list).");
    }
    for (const [scope, stream] of Object.entries(state.streams)) {
      if (stream === null || typeof stream !== 'object' || typeof stream.collector !== 'string' || !Number.isInteger(stream.reports) || stream.reports < 0) {
        throw new IncompatibleStateError(`Ledger stream ${JSON.stringify(scope)} is damaged.`);
      }
      const { collector: owner, reports, ...memoState } = stream;
      let memo;
      try {
        memo = new Memo(fromConfig(memoState.config), memoState);
      } catch (error) {
        if (error instanceof DPDistError) throw new IncompatibleStateError(`Ledger stream ${JSON.stringify(scope)}: ${error.message}`);
        throw error;
      }
      const current = budgetScope(owner, memo.protocol.config);
      if (renormalized(scope) !== current) {
        throw new IncompatibleStateError(`Ledger stream ${JSON.stringify(scope)} holds a memo of another scope.`);
      }
      const kept = ledger._streams.get(current); // two spellings of one collector (an earlier normalization)
      if (kept !== undefined) {
        kept.reports += reports; // keep one memo; every report through either counts
        continue;
      }
      ledger._streams.set(current, { collector: normalCollector(owner), memo, reports });
    }
    ledger._charges = state.charges.map(checkCharge);
    ledger._answered = checkAnswers(state.answered ?? {}); // absent in ledgers written before rounds campaigns
    ledger._rounds = checkRounds(state.rounds ?? {}); // absent before devices drew their round
    return ledger;
  }

  /** Epsilon charged within the window ending ``now`` (seconds since 1970; default the clock). */
  spent(now = Date.now() / 1000) {
    const since = this.window === null ? -Infinity : now - this.window;
    return fsum(this._charges.filter((charge) => charge.at > since).map((charge) => charge.epsilon));
  }

  remaining(now = Date.now() / 1000) {
    return Math.max(0, this.budget - this.spent(now));
  }

  /**
   * What the charges within the window spend at ``delta`` (Python's PrivacyLedger.statement, the same total for the
   * same charges): each fresh report as randomized response of its epsilon, a memo's charges at one collector as one
   * such mechanism of their sum, composed on the lattice (``'pld'``); ``'tightest'`` (the default) is the smaller of
   * that and the sum (``'basic'``, what spent() says and the budget refuses by).  Returns ``{accountant, epsilon,
   * delta, basic, relation, assumptions}``: ``relation`` is ``'replace'`` (any two histories of the device's values)
   * under ``'history'`` accounting and ``'stable'`` under ``'stable'`` accounting, whose charges bound only histories
   * with the same pattern of changes (nothing about when a value changes), as Python's statement says;
   * ``assumptions`` are Python's, in the same words and order: its memos' (one memo per device and scope), fresh
   * randomness across the charges, or that there is no charge to state; a ledger with a ``window`` states the
   * window's charges only (a budget per window bounds a rate, not a total); stable accounting's relation.
   */
  statement(delta, accountant = 'tightest', now = Date.now() / 1000) {
    if (typeof delta !== 'number' || !(delta >= 0 && delta < 1)) {
      throw new InvalidParameterError(`The 'delta' of Ledger.statement must be a number in [0, 1). Got ${JSON.stringify(delta)}.`);
    }
    if (!STATEMENT_ACCOUNTANTS.includes(accountant)) {
      throw new InvalidParameterError(`The 'accountant' of Ledger.statement must be one of ${STATEMENT_ACCOUNTANTS.join(', ')}. Got ${JSON.stringify(accountant)}.`);
    }
    const since = this.window === null ? -Infinity : now - this.window;
    const fresh = [];
    const memos = new Map();
    for (const charge of this._charges) {
      if (charge.at <= since || !(charge.epsilon > 0)) continue;
      if (isMemoized(charge.protocol)) {
        const key = JSON.stringify([charge.collector, charge.protocol]);
        memos.set(key, (memos.get(key) ?? 0) + charge.epsilon);
      } else {
        fresh.push([charge.epsilon / charge.reports, charge.reports, charge.share ?? 1]);
      }
    }
    const responses = [...fresh, ...[...memos.values()].map((epsilon) => [epsilon, 1])];
    // the pure sum of the same charges, summed as spent() sums them (and Python's math.fsum)
    const basic = fsum(this._charges.filter((charge) => charge.at > since && charge.epsilon > 0).map((charge) => charge.epsilon));
    const relation = this.accounting === 'stable' ? 'stable' : 'replace';
    // Python's order: the memos' assumption (its losses come after the fresh ones, each assuming it), then sequential
    // composition's fresh randomness; or, with nothing to state, that; then the window's and stable accounting's
    const assumptions = [
      ...(responses.length === 0 ? [NO_CHARGE_ASSUMPTION] : [...(memos.size > 0 ? [MEMO_ASSUMPTION] : []), FRESH_RANDOMNESS]),
      ...(this.window === null ? [] : [windowAssumption(this.window)]),
      ...(relation === 'stable' ? [STABLE_ASSUMPTION] : []),
    ];
    if (accountant === 'basic' || responses.length === 0 || (delta === 0 && accountant === 'tightest')) {
      return { accountant: 'basic', epsilon: basic, delta, basic, relation, assumptions }; // pure: the sum is exact
    }
    const pld = composedRandomizedResponse(responses, delta);
    if (accountant === 'tightest' && basic <= pld * (1 + 1e-9)) {
      return { accountant: 'basic', epsilon: basic, delta, basic, relation, assumptions };
    }
    return { accountant: 'pld', epsilon: Math.min(pld, basic), delta, basic, relation, assumptions };
  }

  /** Reports the device has sent through ``protocol``'s scope at ``collector``. */
  reportsSent(protocol, collector = 'local') {
    return this._streams.get(budgetScope(collector, protocol.config))?.reports ?? 0;
  }

  /** Epsilon the next ``reports`` reports of ``protocol`` at ``collector`` would be charged (public inputs only). */
  cost(protocol, reports = 1, collector = 'local') {
    if (!(reports > 0)) return 0;
    if (!isLongitudinal(protocol)) return reports * protocol.epsilon;
    const sent = this.reportsSent(protocol, collector);
    const losses = protocol.memoized;
    // stable: eps_inf for each of a scope's first K reports (up to K permanent responses; per *new* key would
    // make the refusal depend on the values), nothing after
    if (this.accounting === 'stable') return Math.max(0, Math.min(sent + reports, losses.keys) - sent) * losses.epsilonInf;
    const after = historyEpsilon(sent + reports, losses);
    if (!Number.isFinite(after)) return Infinity;
    return after - (sent === 0 ? 0 : historyEpsilon(sent, losses));
  }

  /** The Memo of ``protocol``'s scope at ``collector``, or null before its first report. */
  memoOf(protocol, collector = 'local') {
    return this._streams.get(budgetScope(collector, protocol.config))?.memo ?? null;
  }

  /** Keep a memo of the earlier format (``Memo.toJSON``) as the scope's stream; its past reports are unknown. */
  adopt(protocol, memoState, collector = 'local') {
    this._streams.set(budgetScope(collector, protocol.config), { collector, memo: new Memo(protocol, memoState), reports: 0 });
    if (this.onChange) this.onChange(this);
  }

  /** Whether the device has answered the question ``once`` of ``collector`` (see ``report``). */
  answered(once, collector = 'local') {
    return this._answered.has(onceKey(collector, once));
  }

  /**
   * The round (1-based) this device answers of the campaign in rounds ``once`` at ``collector`` (Python's
   * PrivacyLedger.round_for): drawn on first call, round k with probability sizes[k-1] / sum(sizes) (the rounds'
   * public group sizes), and kept (``onChange``) before it is returned. It depends on nothing private and on
   * nothing about when the device arrives: the rounds' groups are a random split of the devices.
   */
  roundFor(once, collector, sizes, source = secureSource()) {
    if (typeof once !== 'string' || once.length === 0) {
      throw new InvalidParameterError(`The 'once' of Ledger.roundFor must be a non-empty string. Got ${JSON.stringify(once)}.`);
    }
    const key = onceKey(collector, once);
    const kept = this._rounds.get(key);
    if (kept !== undefined) return kept;
    const total = Array.isArray(sizes) ? sizes.reduce((sum, size) => sum + size, 0) : NaN;
    if (!Array.isArray(sizes) || sizes.length === 0 || !sizes.every((size) => Number.isSafeInteger(size) && size >= 0) ||
        !(total > 0) || !Number.isSafeInteger(total)) {
      throw new InvalidParameterError(`The 'sizes' of Ledger.roundFor must be the rounds' group sizes, integers >= 0 with a ` +
        `positive sum. Got ${JSON.stringify(sizes)?.slice(0, 200)}.`);
    }
    let draw = source.uniformInt(total);
    let round = 1;
    while (draw >= sizes[round - 1]) {
      draw -= sizes[round - 1];
      round += 1;
    }
    this._rounds.set(key, round);
    if (this.onChange) this.onChange(this); // kept before anyone learns whether its round is open
    return round;
  }

  /** Every charge ``{at, epsilon, collector, protocol, reports}``. */
  get charges() {
    return this._charges.map((charge) => ({ ...charge }));
  }

  /**
   * Reports of ``values`` (all of this one device) as one ReportBatch, charged first and refused whole if
   * over budget.  Memoized protocols report through the scope's memo; others draw fresh reports.  ``once``: the
   * name of a question the device answers at most once at ``collector``, whatever config asks it (a campaign in
   * rounds: its id, for every round); one value, and never a second time (PrivacyBudgetError).
   */
  report(protocol, values, { collector: named = 'local', source = secureSource(), now = Date.now() / 1000, once = null } = {}) {
    const collector = normalCollector(named);
    if (once !== null) this._checkOnce(once, collector, values.length);
    const stream = isLongitudinal(protocol) ? this._stream(protocol, collector) : null;
    const cost = this.cost(protocol, values.length, collector);
    const left = this.budget - this.spent(now);
    if (!(cost <= left * (1 + 1e-12))) {
      // NaN-safe: anything not clearly within the budget is refused
      const within = this.window === null ? '' : ` within ${this.window} s`;
      throw new PrivacyBudgetError(
        `Refused: ${values.length} report(s) of ${protocol.name} to '${collector}' would spend epsilon ${cost.toPrecision(6)}, ` +
          `and this device has ${Math.max(left, 0).toPrecision(6)} left of its budget of ${this.budget}${within} ` +
          `(${this.accounting} accounting). Nothing was sent; the device's owner may raise the budget.`,
        Math.max(left, 0),
      );
    }
    let batch;
    if (stream === null) {
      batch = protocol.privatize(values, source);
    } else {
      const rows = Array.from(values, (value) => stream.memo.report(value, source));
      const bytes = new Uint8Array(rows.length * protocol.rowBytes);
      rows.forEach((row, index) => bytes.set(row.bytes, index * protocol.rowBytes));
      batch = new ReportBatch(protocol.config, protocol.floatKeys, protocol.descr, [rows.length, ...protocol.rowShape], bytes);
      stream.reports += values.length;
    }
    if (values.length > 0) {
      const share = stream === null ? responseShare(protocol) : 1;
      this._charges.push({ at: now, epsilon: cost, collector, protocol: protocol.name, reports: values.length,
        ...(share < 1 ? { share } : {}) });
    }
    if (once !== null) this._answered.set(onceKey(collector, once), { at: now, protocol: protocol.name });
    if (this.onChange) this.onChange(this); // persisted before the reports leave
    return batch;
  }

  _checkOnce(once, collector, size) {
    if (typeof once !== 'string' || once.length === 0) {
      throw new InvalidParameterError(`The 'once' option of Ledger.report must be a non-empty string. Got ${JSON.stringify(once)}.`);
    }
    if (size !== 1) throw new InvalidParameterError(`A question asked once per device ('once'=${JSON.stringify(once)}) takes one value. Got ${size} values.`);
    const earlier = this._answered.get(onceKey(collector, once));
    if (earlier !== undefined) {
      throw new PrivacyBudgetError(
        `Refused: this device already answered '${once}' of '${collector}' (with ${earlier.protocol}). Its guarantee holds ` +
          'for one answer per device (a campaign in rounds: one round per user, by parallel composition); a second answer ' +
          'would spend epsilon again. Nothing was sent.',
        this.remaining(),
      );
    }
  }

  _stream(protocol, collector) {
    const scope = budgetScope(collector, protocol.config);
    let stream = this._streams.get(scope);
    if (stream === undefined) {
      stream = { collector, memo: new Memo(protocol), reports: 0 };
      this._streams.set(scope, stream);
      return stream;
    }
    const kept = stream.memo.protocol.config;
    const changed = [...BUDGET_KEYS].filter((key) => key in kept && kept[key] !== protocol.config[key]);
    if (changed.length > 0) {
      const describe = (config) => changed.map((key) => `${key}=${config[key]}`).join(', ');
      throw new PrivacyBudgetError(
        `Refused: '${collector}' now asks for ${protocol.name} with ${describe(protocol.config)}, but this device keeps ` +
          `permanent responses drawn for ${describe(kept)} under the same collector, protocol and domain. A changed privacy ` +
          'parameter would make the device draw them again (a fresh epsilon_inf each time), so the device keeps its memo ' +
          'and does not report under the new parameters.',
        this.remaining(),
      );
    }
    return stream;
  }

  /** The JSON form (Python's PrivacyLedger.to_dict). */
  toJSON() {
    const streams = {};
    for (const scope of [...this._streams.keys()].sort()) {
      const { collector, memo, reports } = this._streams.get(scope);
      streams[scope] = { collector, reports, ...memo.toJSON() };
    }
    return {
      format: LEDGER_FORMAT,
      // version 2 once the device answered a question asked once: readers of version 1 (before rounds campaigns)
      // would drop "answered" and save the ledger without it; they refuse version 2 instead
      version: this._answered.size > 0 || this._rounds.size > 0 ? 2 : 1,
      budget: this.budget,
      window: this.window,
      accounting: this.accounting,
      streams,
      charges: this.charges,
      answered: Object.fromEntries([...this._answered.keys()].sort().map((key) => [key, { ...this._answered.get(key) }])),
      ...(this._rounds.size > 0 ? { rounds: Object.fromEntries([...this._rounds.keys()].sort().map((key) => [key, this._rounds.get(key)])) } : {}),
    };
  }
}
