// Hadamard response, "hr" (Acharya, Sun, Zhang, AISTATS 2019; dpdist.local.frequency.hadamard).
//
// B blocks of b outputs (K = bB); item x in block i at column j = (x mod (b-1)) + 1 owns the
// b/2 outputs C_x = {i b + r : popcount(r & j) even}.  The report is a mixture: with probability
// lambda = (b/2)(e^eps - 1)/Z a uniform element of C_x (uniform r in [b], then flip the lowest
// set bit of j in r when r is outside the set: a bijection), otherwise a uniform output of [K];
// Q(y|x) = e^eps/Z on C_x and 1/Z elsewhere.  The design (B, b) is chosen exactly as in Python.

import { mixtureKeep } from '../grid.js';
import { ceilLog2, exp } from '../libm.js';
import { frequencyRules } from '../params.js';
import { itemReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';

function popcount(x) {
  let count = 0;
  for (let v = x; v; v &= v - 1) count++;
  return count;
}

/** ``_block_design`` of hadamard.py: [blocks, block_size, variance at f = 0]. */
function blockDesign(d, e, blocks) {
  const blockSize = 2 ** ceilLog2(d / blocks + 1);
  const used = Math.min(blocks, Math.ceil(d / (blockSize - 1)));
  const normalizer = (blockSize / 2) * e + blockSize * used - blockSize / 2;
  const kappa = (2 * normalizer) / (blockSize * (e - 1));
  const share = Math.min(1.0, (blockSize - 1) / d);
  const inBlock = ((((share * blockSize) / 2) * (e + 1)) + (1 - share) * blockSize) / normalizer;
  return [used, blockSize, kappa * kappa * inBlock];
}

export default class HR extends FrequencyProtocol {
  static protocol = 'hr';

  constructor(config) {
    super('hr', config, frequencyRules(), { labels: null });
    const d = this.domainSize;
    const e = exp(this.epsilon);
    const largest = e > 2.0 ? 2 ** (ceilLog2(Math.min(e, 2.0 * d)) - 1) : 1;
    let best = null;
    for (let power = 0; 2 ** power <= largest; power++) {
      const design = blockDesign(d, e, 2 ** power);
      if (best === null || design[2] < best[2]) best = design; // Python's min: first minimum wins
    }
    [this.blocks, this.blockSize] = best;
    this.outputSize = this.blockSize * this.blocks;
    const b = this.blockSize;
    const K = this.outputSize;
    // lambda on the 2^-53 grid (grid.js); Q(in)/Q(out) and Z become the realized ratio and K/(1 - lambda)
    this.keep = mixtureKeep(this.epsilon, b / 2, K);
    this.e = 1.0 + (2.0 * K * this.keep) / (b * (1.0 - this.keep));
    this.normalizer = K / (1.0 - this.keep);
    this.format = itemReports(this.outputSize);
  }

  inSet(item, output) {
    const b = this.blockSize;
    const block = Math.floor(item / (b - 1));
    const column = (item % (b - 1)) + 1;
    return Math.floor(output / b) === block && popcount((output % b) & column) % 2 === 0;
  }

  writeReport(item, source, bytes, view, offset) {
    // both branches' draws and arithmetic happen either way: the work must not tell whether it kept the item
    const kept = source.bernoulli(this.keep);
    const b = this.blockSize;
    const column = (item % (b - 1)) + 1;
    let row = source.uniformInt(b);
    if (popcount(row & column) % 2 !== 0) row ^= column & -column;
    const near = Math.floor(item / (b - 1)) * b + row;
    const other = source.uniformInt(this.outputSize);
    this.format.write(view, offset, 0, kept ? near : other);
  }

  /** Exact law over the K outputs: lambda Unif(C_x) + (1 - lambda) Unif[K]. */
  channelRow(item) {
    const half = this.blockSize / 2;
    return Float64Array.from({ length: this.outputSize }, (_, y) =>
      (this.inSet(item, y) ? this.keep / half : 0) + (1 - this.keep) / this.outputSize,
    );
  }

  describeReport(row) {
    return `Hadamard output ${this.reportIndex(row)} of ${this.outputSize}`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }

  likelihood(row) {
    const output = this.reportIndex(row);
    return Float64Array.from(this.inputs(), (item) => (this.inSet(item, output) ? this.e : 1) / this.normalizer);
  }
}
