// Apple's count-mean sketches (Apple's Differential Privacy Team, "Learning with Privacy at Scale",
// 2017, sec. 3): "cms" (Alg. 1) and "hcms" (Alg. 3), as dpdist.local.frequency.cms / .hcms.
//
// Both hash the item with one of k public Carter-Wegman functions h_j(x) = ((a_j x + b_j) mod P)
// mod m, j uniform, whose seeds are SplitMix64(family_seed, j) mod (P - 1) P (the family of
// dpdist.local.frequency.flh.family_seeds).
//   cms:  the m-coordinate vector that is +1 at h_j(v) and -1 elsewhere, every coordinate flipped
//         w.p. 1/(e^{eps/2} + 1); a report is uint64 (j, then the m bits, bit = +1, packed
//         little-endian 64 to a word).
//   hcms: l uniform in [m], the Hadamard entry H[h_j(v), l] = (-1)^popcount(h_j(v) & l), kept w.p.
//         e^eps/(e^eps + 1); a report is (j, l, bit = +1) in the narrowest unsigned dtype.
// Every Bernoulli is exact (RandomSource.bernoulli), so the law is the channel Python's channel()
// states.

import { InvalidParameterError } from '../errors.js';
import { expLower, oddsProbability } from '../grid.js';
import { frequencyRules, integer } from '../params.js';
import { integerRowReports, smallestUnsigned } from '../format.js';
import { FrequencyProtocol } from './base.js';
import { hashItem, isPrime } from './olh.js';
import { familyCoefficients } from './pem.js';

const MERSENNE_31 = 2 ** 31 - 1;
const MAX_TABLE_CELLS = 1 << 24;
const MAX_CHANNEL_OUTPUTS = 1 << 20;

function popcount(x) {
  let count = 0;
  for (let v = x; v !== 0; v &= v - 1) count += 1;
  return count;
}

class Sketch extends FrequencyProtocol {
  constructor(name, config, tableCells) {
    super(
      name,
      config,
      frequencyRules({
        hash_count: integer(1, MAX_TABLE_CELLS / 2),
        width: integer(2, 1 << 20),
        hash_prime: integer(3, MERSENNE_31),
        family_seed: integer(0, Number.MAX_SAFE_INTEGER),
      }),
      { labels: null, hash_count: 2048, width: 1024, hash_prime: MERSENNE_31, family_seed: 0 },
    );
    const { hash_count: k, width: m, hash_prime: prime } = this.params;
    if (!isPrime(prime)) throw new InvalidParameterError(`The 'hash_prime' parameter of ${this.display} must be a prime. Got ${prime} instead.`);
    if (this.domainSize > prime) {
      throw new InvalidParameterError(
        `The 'domain_size' parameter of ${this.display} must be <= hash_prime = ${prime} (items are hashed modulo that prime). Got ${this.domainSize} instead.`,
      );
    }
    if ((m & (m - 1)) !== 0) throw new InvalidParameterError(`The 'width' parameter of ${this.display} must be a power of two. Got ${m} instead.`);
    if (tableCells(k, m) > MAX_TABLE_CELLS) {
      throw new InvalidParameterError(
        `${this.display} would keep a table of ${tableCells(k, m)} counts for hash_count = ${k} and width = ${m}; it must be <= ${MAX_TABLE_CELLS}. Lower 'hash_count' (or 'width').`,
      );
    }
    this.k = k;
    this.m = m;
    this.prime = prime;
    this.coefficients = familyCoefficients(this.params.family_seed, k, prime);
  }

  /** h_j(item). */
  hashed(j, item) {
    const [a, b] = this.coefficients[j];
    return hashItem(a, b, item, this.prime, this.m);
  }
}

/** Count-mean sketch: m bits per report, one of them the item's coordinate (Alg. 1). */
export class CMS extends Sketch {
  constructor(config) {
    super('cms', config, (k, m) => k * (m + 1));
    // per coordinate the largest 2^-53 grid probability with p / (1 - p) <= e^(eps/2) (grid.js)
    this.p = oddsProbability(expLower(this.epsilon / 2.0));
    this.words = Math.ceil(this.m / 64);
    this.format = integerRowReports(1 + this.words, '<u8'); // function index, then the m bits in words
  }

  writeReport(item, source, bytes, view, offset) {
    const j = source.uniformInt(this.k);
    const own = this.hashed(j, item);
    view.setUint32(offset, j, true);
    view.setUint32(offset + 4, 0, true);
    const start = offset + 8;
    bytes.fill(0, start, start + 8 * this.words);
    for (let l = 0; l < this.m; l++) {
      // the item's coordinate reads +1 w.p. p, every other one w.p. 1 - p (flipped from -1)
      const plus = l === own ? source.bernoulli(this.p) : !source.bernoulli(this.p);
      if (plus) bytes[start + (l >> 3)] |= 1 << (l & 7); // little-endian bits of little-endian words
    }
  }

  bit(row, l) {
    return (row[8 + (l >> 3)] >> (l & 7)) & 1;
  }

  /** Python's column: j 2^m + the bits as an integer (small m only). */
  reportIndex(row) {
    const j = new DataView(row.buffer, row.byteOffset, 8).getUint32(0, true);
    let bits = 0;
    for (let l = 0; l < this.m; l++) bits += this.bit(row, l) * 2 ** l;
    return j * 2 ** this.m + bits;
  }

  channelRow(item) {
    const { k, m, p } = this;
    if (k * 2 ** m > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`CMS.channelRow enumerates k 2^m outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const row = new Float64Array(k * 2 ** m);
    for (let j = 0; j < k; j++) {
      const own = this.hashed(j, item);
      for (let x = 0; x < 2 ** m; x++) {
        let probability = 1 / k;
        for (let l = 0; l < m; l++) {
          const plus = (x >> l) & 1;
          probability *= l === own ? (plus ? p : 1 - p) : plus ? 1 - p : p;
        }
        row[j * 2 ** m + x] = probability;
      }
    }
    return row;
  }

  /** Pr[report | item] up to a factor common to all items: only the item's coordinate depends on it. */
  likelihood(row) {
    const j = new DataView(row.buffer, row.byteOffset, 8).getUint32(0, true);
    const ratio = this.p / (1 - this.p);
    return Float64Array.from(this.inputs(), (item) => (this.bit(row, this.hashed(j, item)) ? ratio : 1 / ratio));
  }

  describeReport(row) {
    const j = new DataView(row.buffer, row.byteOffset, 8).getUint32(0, true);
    let set = 0;
    for (let l = 0; l < this.m; l++) set += this.bit(row, l);
    return `hash function ${j}, ${set} of ${this.m} coordinates +1`;
  }
}

/** Hadamard count-mean sketch: one bit of H[h_j(v), l] per report (Alg. 3). */
export class HCMS extends Sketch {
  constructor(config) {
    super('hcms', config, (k, m) => 2 * k * m);
    this.p = oddsProbability(expLower(this.epsilon)); // on the 2^-53 grid (grid.js)
    this.format = integerRowReports(3, smallestUnsigned(Math.max(this.k, this.m, 2))); // (function, column, bit)
  }

  plus(j, l, item) {
    return popcount(this.hashed(j, item) & l) % 2 === 0;
  }

  writeReport(item, source, bytes, view, offset) {
    const j = source.uniformInt(this.k);
    const l = source.uniformInt(this.m);
    const plus = this.plus(j, l, item);
    const bit = source.bernoulli(this.p) ? plus : !plus;
    [j, l, bit ? 1 : 0].forEach((entry, column) => this.format.write(view, offset, column, entry));
  }

  decode(row) {
    const [j, l, bit] = [0, 1, 2].map((column) => this.format.readRow(row, column));
    return { j, l, bit };
  }

  /** Python's column: (j m + l) 2 + bit. */
  reportIndex(row) {
    const { j, l, bit } = this.decode(row);
    return (j * this.m + l) * 2 + bit;
  }

  channelRow(item) {
    const { k, m, p } = this;
    const row = new Float64Array(2 * k * m);
    for (let j = 0; j < k; j++) {
      for (let l = 0; l < m; l++) {
        const plus = this.plus(j, l, item);
        row[(j * m + l) * 2 + 1] = (plus ? p : 1 - p) / (k * m);
        row[(j * m + l) * 2] = (plus ? 1 - p : p) / (k * m);
      }
    }
    return row;
  }

  likelihood(row) {
    const { j, l, bit } = this.decode(row);
    return Float64Array.from(this.inputs(), (item) => (this.plus(j, l, item) === (bit === 1) ? this.p : 1 - this.p));
  }

  describeReport(row) {
    const { j, l, bit } = this.decode(row);
    return `hash function ${j}, Hadamard column ${l}, sign ${bit ? '+1' : '-1'}`;
  }
}
