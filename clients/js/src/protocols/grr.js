// Generalized randomized response, "grr" (Kairouz, Bonawitz, Ramage 2016; dpdist.local.frequency.grr).
//
// Keep the true item with probability lambda (ideally (e^eps - 1) / (e^eps + d - 1)), otherwise report a
// uniform item of all d: Pr[v] = lambda + (1 - lambda)/d = p, Pr[other] = (1 - lambda)/d = q.
// lambda is Python's: the largest multiple of 2^-53 whose ratio is at most e^eps (grid.js).
// Both draws are exact: Bernoulli(lambda) for the double lambda, a uniform index by rejection.

import { mixtureKeep } from '../grid.js';
import { frequencyRules } from '../params.js';
import { itemReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';

export default class GRR extends FrequencyProtocol {
  static protocol = 'grr';

  constructor(config) {
    super('grr', config, frequencyRules(), { labels: null });
    const d = this.domainSize;
    this.keep = mixtureKeep(this.epsilon, 1, d);
    this.format = itemReports(d);
  }

  writeReport(item, source, bytes, view, offset) {
    const kept = source.bernoulli(this.keep);
    const other = source.uniformInt(this.domainSize); // drawn either way: the draws must not tell whether it is kept
    const output = kept ? item : other;
    this.format.write(view, offset, 0, output);
  }

  /** Exact law of the report for input ``item``, indexed by the reported item. */
  channelRow(item) {
    const d = this.domainSize;
    const row = new Float64Array(d).fill((1 - this.keep) / d);
    row[item] += this.keep;
    return row;
  }

  /** Pr[this report | each item]. */
  likelihood(row) {
    const output = this.format.readRow(row);
    return Float64Array.from(this.inputs(), (item) => this.channelRow(item)[output]);
  }

  /** A short human-readable reading of a report. */
  describeReport(row) {
    return `reports the value ${this.labelOf(this.reportIndex(row))}`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }
}
