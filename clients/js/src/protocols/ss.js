// Subset selection, "ss" (Ye & Barg 2018; Wang et al. 2016; dpdist.local.frequency.subset).
//
// k = subset_size of the config (Python records the k of least variance in every config it makes); a config
// without it (written before subset_size, or the inner ss of a multi-attribute config) means
// k = min(d - 1, max(1, ceil(d / (e^eps + 1)))), as Python reads it.  Any k in 1 .. d - 1 is eps-LDP.  With probability
// p_in = k e^eps / (k e^eps + d - k) (an exact Bernoulli draw) the subset is the true item plus
// k - 1 items uniform among the other d - 1, otherwise k items uniform among the other d - 1.
// Every report first draws a uniform (k - 1)-subset of the d - 1 others by Floyd's algorithm (k - 1
// uniform integers by rejection, each exact), then a uniform other not yet taken (by rejection),
// which the true item replaces when it is included: the same draws either way, so the time taken
// does not depend on the inclusion, nor so on the value (Python's sampler does the same).
// Reports are numpy.packbits rows with exactly k bits set.

import { expLower, oddsProbability, times } from '../grid.js';
import { exp } from '../libm.js';
import { frequencyRules, integer, optional } from '../params.js';
import { InvalidParameterError } from '../errors.js';
import { packedBitReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';

const MAX_CHANNEL_OUTPUTS = 1 << 16;

/** The binomial coefficient C(n, k), exact while it is below 2^53 (channel sizes only). */
export function comb(n, k) {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return Math.round(result);
}

export default class SS extends FrequencyProtocol {
  static protocol = 'ss';

  constructor(config) {
    super('ss', config, frequencyRules({ subset_size: optional(integer(1, 2 ** 31 - 1)) }), { labels: null, subset_size: null });
    const d = this.domainSize;
    const e = exp(this.epsilon);
    this.e = e;
    const given = this.params.subset_size;
    if (given === null) { // only a given subset size is in the config
      delete this.params.subset_size;
      delete this.config.subset_size;
    } else if (given >= d) {
      throw new InvalidParameterError(
        `The 'subset_size' parameter of SS must be below 'domain_size' = ${d} (a report of every item tells nothing). Got ${given} instead.`,
      );
    }
    this.subsetSize = given ?? Math.min(d - 1, Math.max(1, Math.ceil(d / (e + 1))));
    const k = this.subsetSize;
    // the largest 2^-53 grid probability with p_in / (1 - p_in) (d - k) / k <= e^eps (grid.js)
    this.pIn = oddsProbability(times(expLower(this.epsilon), [BigInt(k), BigInt(d - k)]));
    this.format = packedBitReports(d);
    this._chosen = new Uint8Array(d - 1);
  }

  writeReport(item, source, bytes, view, offset) {
    const d = this.domainSize;
    const include = source.bernoulli(this.pIn);
    const t = this.subsetSize - 1;
    const chosen = this._chosen;
    chosen.fill(0);
    // Floyd: for j = n - t .. n - 1, pick r uniform in [0, j]; take r, or j if r is taken
    const n = d - 1;
    for (let j = n - t; j < n; j++) {
      const r = source.uniformInt(j + 1);
      chosen[chosen[r] ? j : r] = 1;
    }
    // the k-th item: a uniform other not yet taken (by rejection), drawn whether or not the true item
    // takes its place, so the work never tells whether the report holds the value
    let extra;
    do extra = source.uniformInt(n);
    while (chosen[extra]);
    if (!include) chosen[extra] = 1;
    const row = bytes.subarray(offset, offset + this.rowShape[0]);
    row.fill(0);
    for (let label = 0; label < n; label++) {
      if (!chosen[label]) continue;
      const other = label < item ? label : label + 1; // the other items, in order, skipping item
      row[other >> 3] |= 0x80 >> (other & 7);
    }
    if (include) row[item >> 3] |= 0x80 >> (item & 7);
  }

  members(row) {
    const out = [];
    for (let j = 0; j < this.domainSize; j++) if ((row[j >> 3] >> (7 - (j & 7))) & 1) out.push(j);
    return out;
  }

  describeReport(row) {
    return `the subset {${this.members(row).map((item) => this.labelOf(item)).join(', ')}}`;
  }

  /** Colexicographic rank sum_i C(s_i, i + 1) of the subset (Python's report_index). */
  reportIndex(row) {
    return this.members(row).reduce((rank, item, position) => rank + comb(item, position + 1), 0);
  }

  /** Exact law over all k-subsets in colex rank order. */
  channelRow(item) {
    const d = this.domainSize;
    const k = this.subsetSize;
    const outputs = comb(d, k);
    if (outputs > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`SS.channelRow enumerates C(d, k) subsets; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const inside = this.pIn / comb(d - 1, k - 1);
    const outside = (1 - this.pIn) / comb(d - 1, k);
    const row = new Float64Array(outputs);
    const subset = Array.from({ length: k }, (_, i) => i);
    for (;;) {
      const rank = subset.reduce((total, s, i) => total + comb(s, i + 1), 0);
      row[rank] = subset.includes(item) ? inside : outside;
      let i = 0; // next subset in colex order
      while (i < k - 1 && subset[i] + 1 === subset[i + 1]) i++;
      if (i === k - 1 && subset[i] === d - 1) break;
      subset[i] += 1;
      for (let j = 0; j < i; j++) subset[j] = j;
    }
    return row;
  }

  likelihood(row) {
    const members = new Set(this.members(row));
    const inside = this.pIn / comb(this.domainSize - 1, this.subsetSize - 1);
    const outside = (1 - this.pIn) / comb(this.domainSize - 1, this.subsetSize);
    return Float64Array.from(this.inputs(), (item) => (members.has(item) ? inside : outside));
  }
}
