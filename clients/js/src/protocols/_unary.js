// Unary encoding with bit-packed reports, the base of "oue" (oue.js), "sue" (sue.js) and "l-osue"
// (l-osue.js), as dpdist.local.frequency._unary.
//
// Bit v of the one-hot vector is 1 with probability p, every other bit with probability q, all
// independent.  As in Python, each bit compares a uniform 32-bit word with an integer threshold:
// T_p = floor(p 2^32), T_q = ceil(q 2^32), so the realized probabilities are T/2^32 exactly (p
// rounded down, q up: the privacy ratio can only fall), the same grid the aggregator assumes.
// Reports are numpy.packbits rows: ceil(d/8) bytes, item j at bit 7 - (j mod 8) of byte j >> 3.

import { InvalidParameterError } from '../errors.js';
import { frequencyRules } from '../params.js';
import { packedBitReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';

const SCALE = 4294967296; // 2^32
/** Largest d for which channelRow enumerates the 2^d outputs. */
const MAX_CHANNEL_DOMAIN = 16;

/** Bits of the one-hot vector, each 1 w.p. p (the item's) or q (the others'); ``targetProbabilities(epsilon, d)`` gives [p, q]. */
export class UnaryEncoding extends FrequencyProtocol {
  constructor(name, config, targetProbabilities, extraRules = {}) {
    super(name, config, frequencyRules(extraRules), { labels: null });
    const [p, q] = targetProbabilities(this.epsilon, this.domainSize);
    this.pThreshold = Math.floor(p * SCALE);
    this.qThreshold = Math.ceil(q * SCALE);
    this.p = this.pThreshold / SCALE;
    this.q = this.qThreshold / SCALE;
    this.format = packedBitReports(this.domainSize);
  }

  writeReport(item, source, bytes, view, offset) {
    const d = this.domainSize;
    const tq = this.qThreshold;
    for (let chunk = 0; chunk < d; chunk += 8192) {
      const size = Math.min(8192, d - chunk); // a multiple of 8 except at the end
      const words = source.words(size);
      for (let start = 0; start < size; start += 8) {
        let byte = 0;
        const stop = Math.min(start + 8, size);
        for (let j = start; j < stop; j++) byte |= (words[j] < tq ? 1 : 0) << (7 - (j - start));
        bytes[offset + ((chunk + start) >> 3)] = byte;
      }
      if (item >= chunk && item < chunk + size) {
        // the true item's bit uses its own word against the p threshold
        const mask = 0x80 >> (item & 7);
        const position = offset + (item >> 3);
        bytes[position] = words[item - chunk] < this.pThreshold ? bytes[position] | mask : bytes[position] & ~mask;
      }
    }
  }

  /** Exact law over the 2^d outputs, output y having bit j = item j (Python's report_index). */
  channelRow(item) {
    const d = this.domainSize;
    if (d > MAX_CHANNEL_DOMAIN) throw new InvalidParameterError(`${this.display}.channelRow enumerates 2^d outputs; only for d <= ${MAX_CHANNEL_DOMAIN}.`);
    const row = new Float64Array(2 ** d);
    for (let y = 0; y < row.length; y++) {
      let probability = 1;
      for (let j = 0; j < d; j++) {
        const on = j === item ? this.p : this.q;
        probability *= (y >> j) & 1 ? on : 1 - on;
      }
      row[y] = probability;
    }
    return row;
  }

  describeReport(row) {
    const set = this.inputs().filter((item) => this.bit(row, item));
    const listed = set.slice(0, 20).map((item) => this.labelOf(item)).join(', ');
    return `${set.length} of ${this.domainSize} bits set (${listed}${set.length > 20 ? ', …' : ''})`;
  }

  bit(row, item) {
    return (row[item >> 3] >> (7 - (item & 7))) & 1;
  }

  reportIndex(row) {
    let index = 0;
    for (let j = 0; j < this.domainSize; j++) index += this.bit(row, j) * 2 ** j;
    return index;
  }

  /** Pr[report | item] up to a factor common to all items: only bit v's law depends on v. */
  likelihood(row) {
    const { p, q } = this;
    return Float64Array.from(this.inputs(), (item) => (this.bit(row, item) ? p / q : (1 - p) / (1 - q)));
  }
}
