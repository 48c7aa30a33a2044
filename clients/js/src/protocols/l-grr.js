// Longitudinal GRR, "l-grr" (Arcolezi, Couchot, Al Bouna & Xiao, ICDE 2022, sec. 4;
// dpdist.local.frequency.l_grr): GRR(eps_inf) memoized per value, then GRR with the IRR budget of eps_1,
// so one report is exactly eps_1-LDP (the two rounds' constants and the device's Memo: _longitudinal.js).

import { IncompatibleStateError } from '../errors.js';
import { NOT_SHOWN } from '../refusals.js';
import { EPSILON, frequencyRules } from '../params.js';
import { itemReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';
import { chain, checkBudgets, grrKeeps, grrProbabilities } from './_longitudinal.js';

/** L-GRR: GRR(eps_inf) memoized, then GRR with the IRR budget of eps_1 (Python's LGRR). */
export default class LGRR extends FrequencyProtocol {
  static protocol = 'l-grr';

  constructor(config) {
    super('l-grr', config, frequencyRules({ epsilon_1: EPSILON }), { labels: null });
    checkBudgets(this.display, this.params);
    const d = this.domainSize;
    [this.keep1, this.keep2] = grrKeeps(d, this.epsilon, this.params.epsilon_1);
    [this.p1, this.q1] = grrProbabilities(this.keep1, d);
    [this.p2, this.q2] = grrProbabilities(this.keep2, d);
    [this.p, this.q] = chain(this.p1, this.q1, this.p2, this.q2);
    this.format = itemReports(d);
  }

  /**
   * The device memoizes per value (no user randomness): the memo key of ``item`` is the item.  With the
   * losses its privacy ledger charges (Python's epsilon_per_report, epsilon_longitudinal, epsilon_instantaneous).
   */
  get memoized() {
    return {
      keys: this.domainSize,
      userRandomness: false,
      epsilon1: Math.log(this.p / this.q),
      epsilonInf: Math.log(this.p1 / this.q1),
      epsilonI: Math.log(this.p2 / this.q2),
    };
  }

  bucketOf(item) {
    return item;
  }

  /** Round one of ``item``: what the device memoizes (an item). */
  permanentResponse(item, source) {
    return this._grr(item, this.keep1, source);
  }

  /** Round two of a memoized item: one report's item. */
  instantaneousResponse(memoized, source) {
    return this._grr(memoized, this.keep2, source);
  }

  _grr(item, keep, source) {
    const kept = source.bernoulli(keep);
    const other = source.uniformInt(this.domainSize); // drawn either way: the draws must not tell whether it is kept
    return kept ? item : other; // keep, else uniform over all d
  }

  writeReport(item, source, bytes, view, offset) {
    this.writeMemoized(this.permanentResponse(item, source), source, bytes, view, offset);
  }

  writeMemoized(memoized, source, bytes, view, offset) {
    this.format.write(view, offset, 0, this.instantaneousResponse(memoized, source));
  }

  /** Memo entries as Python's MemoizedClient.to_dict writes them (an int). */
  memoToJSON(memoized) {
    return memoized;
  }

  memoFromJSON(value, item) {
    if (!Number.isInteger(value) || value < 0 || value >= this.domainSize) {
      throw new IncompatibleStateError(`A memo maps items to items in [0, ${this.domainSize}). Got an entry that does not (${NOT_SHOWN}).`);
    }
    return value;
  }

  /** Exact law of one report (both rounds) for input ``item``, indexed by the reported item. */
  channelRow(item) {
    const row = new Float64Array(this.domainSize).fill(this.q);
    row[item] = this.p;
    return row;
  }

  /** Exact law of one report given the memoized item (round two only). */
  instantaneousRow(memoized) {
    const row = new Float64Array(this.domainSize).fill(this.q2);
    row[memoized] = this.p2;
    return row;
  }

  likelihood(row) {
    const output = this.reportIndex(row);
    return Float64Array.from(this.inputs(), (item) => (item === output ? this.p : this.q));
  }

  describeReport(row) {
    return `reports the value ${this.labelOf(this.reportIndex(row))}`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }
}
