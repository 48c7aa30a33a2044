// The prefix extending method, "pem" (Wang et al., IEEE TDSC 2021, sec. V; dpdist.local.frequency.pem):
// heavy hitters of words (or of items of up to 62 bits) without a list of them.
//
// A device picks its group i uniformly among G (independently of its word) and reports (i, j, y):
// the FLH report (dpdist.local.frequency.flh) of the first s_i bits of its item.  The s_i are
// ceil(log2 k) + i * step (the last one: all bits); the prefix is mapped to [0, P), P = 2^31 - 1,
// by a public SplitMix64; j is uniform among the S public Carter-Wegman functions
// h_j(x) = ((a_j x + b_j) mod P) mod g, whose seeds are SplitMix64(family_seed, j) mod (P - 1) P;
// y keeps h_j(x) with probability lambda = (e^eps - 1)/(e^eps + g - 1), else it is uniform over g.
// Words are encoded as in dpdist.local.words: symbol (1 + index in the alphabet), ceil(log2(|A|+1))
// bits each, 0 after the end, cut to max_chars.  Items are BigInts (up to 62 bits).
// Reports are rows of 3 unsigned integers (group, function, value) in the narrowest dtype.

import { InvalidParameterError, InvalidValueTypeError, OutOfDomainError } from '../errors.js';
import { refusedValue } from '../refusals.js';
import { mixtureKeep } from '../grid.js';
import { ceilLog2, exp, roundHalfEven } from '../libm.js';
import { EPSILON, integer, optional } from '../params.js';
import { integerRowReports, smallestUnsigned } from '../format.js';
import { Protocol } from './_base.js';
import { hashItem as localHashItem } from './_local_hashing.js';

const P = 2 ** 31 - 1;
const P_BIG = BigInt(P);
const MASK_64 = (1n << 64n) - 1n;
const GOLDEN = 0x9e3779b97f4a7c15n;
const MAX_BITS = 62;
const MAX_FIRST_BITS = 20;
const MAX_STATISTIC = 1 << 24;
const MAX_HASH_RANGE = 1 << 20;
const MAX_CHANNEL_OUTPUTS = 1 << 20;

/** SplitMix64's output function (Steele, Lea & Flood 2014) on a 64-bit state. */
function splitmixOutput(state) {
  let z = state & MASK_64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return z ^ (z >> 31n);
}

const TWO_32 = 4294967296;
let productHigh = 0; // mul64's result (module state: no array made per product)
let productLow = 0;

/**
 * ``(high, low) * (mHigh, mLow) mod 2^64`` on 32-bit words, into (productHigh, productLow): the low words' full
 * product from 16-bit halves (every partial sum < 2^53, so exact in doubles), the cross terms mod 2^32.
 */
function mul64(high, low, mHigh, mLow) {
  const x0 = low & 0xffff;
  const x1 = low >>> 16;
  const y0 = mLow & 0xffff;
  const y1 = mLow >>> 16;
  const middle = x1 * y0 + x0 * y1; // < 2^33
  const bottom = x0 * y0 + (middle % 65536) * 65536; // < 2^33
  const carry = x1 * y1 + Math.floor(middle / 65536) + Math.floor(bottom / TWO_32); // the high word of low * mLow
  productHigh = (carry + Math.imul(high, mLow) + Math.imul(low, mHigh)) >>> 0;
  productLow = bottom % TWO_32;
}

/**
 * SplitMix64(prefix + golden) mod P for the 64-bit prefix of 32-bit words ``high`` and ``low``: the numbers of
 * :func:`splitmixOutput` on BigInts, without BigInt arithmetic (a device's PEM report hashes one prefix).  The final
 * ``mod P`` uses ``2^32 = 2 (mod P)`` for P = 2^31 - 1: ``(h 2^32 + l) mod P = (2 h + l) mod P``.
 */
function mixWords(high, low) {
  let l = low + 0x7f4a7c15; // + GOLDEN's low word
  let h = (high + 0x9e3779b9 + Math.floor(l / TWO_32)) >>> 0;
  l >>>= 0;
  l = (l ^ ((l >>> 30) | (h << 2))) >>> 0; // z ^= z >> 30 (the low word first: it reads the old high word)
  h = (h ^ (h >>> 30)) >>> 0;
  mul64(h, l, 0xbf58476d, 0x1ce4e5b9);
  l = (productLow ^ ((productLow >>> 27) | (productHigh << 5))) >>> 0;
  h = (productHigh ^ (productHigh >>> 27)) >>> 0;
  mul64(h, l, 0x94d049bb, 0x133111eb);
  l = (productLow ^ ((productLow >>> 31) | (productHigh << 1))) >>> 0;
  h = (productHigh ^ (productHigh >>> 31)) >>> 0;
  return (2 * h + l) % P;
}

/** A prefix's FLH item: SplitMix64(prefix + golden) mod P (dpdist.local.words.mix_prefixes). */
export function mixPrefix(prefix) {
  const value = BigInt.asUintN(64, prefix);
  return mixWords(Number(value >> 32n), Number(value & 0xffffffffn));
}

/** The public family's seeds (dpdist.local.frequency.flh.family_seeds) mod (prime-1) prime, as [a, b] pairs. */
export function familyCoefficients(familySeed, count, prime = P) {
  const primeBig = BigInt(prime);
  const seedCount = (primeBig - 1n) * primeBig;
  const pairs = new Array(count);
  for (let j = 0; j < count; j++) {
    const seed = splitmixOutput(BigInt(familySeed) + BigInt(j + 1) * GOLDEN) % seedCount;
    pairs[j] = [Number(seed / primeBig) + 1, Number(seed % primeBig)];
  }
  return pairs;
}

/** ((a x + b) mod prime) mod g, exactly (x < prime <= 2^31 - 1: OLH's exact product, _local_hashing.js). */
export function hashItem([a, b], x, g, prime = P) {
  return localHashItem(a, b, x, prime, g);
}

/** A public alphabet: 1 to 255 distinct characters. */
function alphabet() {
  return {
    describe: () => 'a string of 1 to 255 distinct characters',
    check(value) {
      const chars = typeof value === 'string' ? Array.from(value) : null;
      if (chars === null || chars.length < 1 || chars.length > 255 || new Set(chars).size !== chars.length) throw new RangeError();
      return value;
    },
  };
}

export default class PEM extends Protocol {
  static protocol = 'pem';

  constructor(config) {
    super(
      'pem',
      config,
      {
        epsilon: EPSILON,
        bits: optional(integer(1, MAX_BITS)),
        alphabet: optional(alphabet()),
        max_chars: integer(1, MAX_BITS),
        k: integer(1, 4096),
        step: optional(integer(1, 16)),
        hash_count: integer(1, 1 << 20),
        family_seed: integer(0, Number.MAX_SAFE_INTEGER),
      },
      { bits: null, alphabet: null, max_chars: 12, k: 10, step: null, hash_count: 4096, family_seed: 0 },
    );
    const params = this.params;
    if ((params.bits === null) === (params.alphabet === null)) {
      throw new InvalidParameterError(
        `PEM needs exactly one of 'bits' (integer items of that many bits) and 'alphabet' (words over it). Got bits=${params.bits}, alphabet=${JSON.stringify(params.alphabet)}.`,
      );
    }
    if (params.alphabet !== null) {
      this.symbols = Array.from(params.alphabet);
      this.bitsPerChar = 0;
      while (2 ** this.bitsPerChar < this.symbols.length + 1) this.bitsPerChar += 1;
      this.bits = this.bitsPerChar * params.max_chars;
      if (this.bits > MAX_BITS) {
        throw new InvalidParameterError(
          `PEM encodes words in max_chars x ${this.bitsPerChar} bits, at most ${MAX_BITS}. Got max_chars=${params.max_chars} (${this.bits} bits); lower 'max_chars'.`,
        );
      }
      this.symbolOf = new Map(this.symbols.map((char, index) => [char, index + 1]));
    } else {
      this.symbols = null;
      this.bits = params.bits;
    }
    this.itemLimit = 1n << BigInt(this.bits); // domainSize, made once (checkValue compares every value to it)
    this.step = params.step ?? Math.max(1, Math.min(8, params.k < 4096 ? Math.floor(Math.log2(4096 / params.k)) : 1));
    const start = Math.min(this.bits, Math.max(1, ceilLog2(params.k)));
    this.lengths = [];
    for (let length = start + this.step; length < this.bits; length += this.step) this.lengths.push(length);
    this.lengths.push(this.bits);
    this.shifts = this.lengths.map((length) => this.bits - length); // a group's prefix: item >> shift
    if (this.lengths[0] > MAX_FIRST_BITS) {
      throw new InvalidParameterError(`PEM's first round would enumerate 2**${this.lengths[0]} prefixes; lower 'step' or raise 'k'.`);
    }
    const e = exp(this.epsilon);
    this.hashCount = params.hash_count;
    const tables = this.lengths.length * this.hashCount;
    if (2 * tables > MAX_STATISTIC) {
      throw new InvalidParameterError(
        `PEM keeps ${this.lengths.length} groups x hash_count x hash_range (at least 2) counts; the product must be <= ${MAX_STATISTIC}. Lower 'hash_count'.`,
      );
    }
    // OLH's g, capped so that the groups' tables fit at any epsilon (flh.default_hash_range)
    this.g = Math.max(2, Math.min(roundHalfEven(e + 1.0), MAX_HASH_RANGE, Math.floor(MAX_STATISTIC / tables)));
    this.keep = mixtureKeep(this.epsilon, 1, this.g); // on the 2^-53 grid, as Python's (grid.js)
    this.coefficients = familyCoefficients(params.family_seed, this.hashCount);
    // (group, function, value), each below its limit
    this.format = integerRowReports(3, smallestUnsigned(Math.max(this.lengths.length, this.hashCount, this.g)));
  }

  get kind() {
    return 'heavy_hitters';
  }

  /** 2^bits (a BigInt: the items are never enumerated). */
  get domainSize() {
    return 1n << BigInt(this.bits);
  }

  /** A word's item (dpdist.local.words.StringCodec.encode): cut to max_chars, 0 after the end. */
  encodeWord(word, index) {
    const chars = Array.from(word).slice(0, this.params.max_chars);
    let item = 0n;
    for (let column = 0; column < this.params.max_chars; column++) {
      let symbol = 0;
      if (column < chars.length) {
        symbol = this.symbolOf.get(chars[column]);
        if (symbol === undefined) {
          throw refusedValue(OutOfDomainError, `The words given to PEM must use the alphabet '${this.params.alphabet}'`,
            'a word with another character', index);
        }
      }
      item = (item << BigInt(this.bitsPerChar)) | BigInt(symbol);
    }
    return item;
  }

  checkValue(value, index) {
    if (typeof value === 'string') {
      if (this.symbols === null) {
        throw refusedValue(InvalidValueTypeError, `The 'values' argument of PEM.privatize must hold integers in ` +
          `[0, 2**${this.bits}); words need a campaign with an 'alphabet'`, 'a word', index);
      }
      return this.encodeWord(value, index);
    }
    const isInteger = typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value));
    if (!isInteger) {
      throw refusedValue(InvalidValueTypeError, `The 'values' argument of PEM.privatize must hold words or integers in ` +
        `[0, 2**${this.bits})`, `neither (a ${typeof value})`, index);
    }
    const item = BigInt(value);
    if (item < 0n || item >= this.itemLimit) {
      throw refusedValue(OutOfDomainError, `The 'values' argument of PEM.privatize must hold integers in [0, 2**${this.bits})`,
        'outside it', index);
    }
    return item;
  }

  checkValues(values) {
    if (values == null || typeof values.length !== 'number' || typeof values === 'string') {
      throw new InvalidValueTypeError(`The 'values' argument of PEM.privatize must be an array. Got ${typeof values} instead.`);
    }
    return Array.from(values, (value, index) => this.checkValue(value, index));
  }

  /** The FLH item of group ``group``'s prefix of ``item`` (a BigInt below 2^62): ``mixPrefix(item >> shift)``, the
   * shift on the item's two 32-bit words. */
  prefixItem(item, group) {
    const high = Number(item >> 32n);
    const low = Number(item & 0xffffffffn);
    const shift = this.shifts[group];
    if (shift === 0) return mixWords(high, low);
    if (shift >= 32) return mixWords(0, high >>> (shift - 32));
    return mixWords(high >>> shift, ((low >>> shift) | (high << (32 - shift))) >>> 0);
  }

  writeReport(item, source, bytes, view, offset) {
    const group = source.uniformInt(this.lengths.length);
    const j = source.uniformInt(this.hashCount);
    const [a, b] = this.coefficients[j];
    const hashed = localHashItem(a, b, this.prefixItem(item, group), P, this.g);
    const kept = source.bernoulli(this.keep);
    const other = source.uniformInt(this.g); // drawn either way: the draws must not tell whether it is kept
    this.format.write(view, offset, 0, group);
    this.format.write(view, offset, 1, j);
    this.format.write(view, offset, 2, kept ? hashed : other);
  }

  decode(row) {
    const [group, j, value] = [0, 1, 2].map((column) => this.format.readRow(row, column));
    return { group, j, value };
  }

  reportIndex(row) {
    const { group, j, value } = this.decode(row);
    return (group * this.hashCount + j) * this.g + value;
  }

  /** Exact law of the report of ``item`` (a number or BigInt), column (i S + j) g + y. */
  channelRow(item) {
    const G = this.lengths.length;
    const outputs = G * this.hashCount * this.g;
    if (outputs > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`PEM.channelRow enumerates ${outputs} outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const row = new Float64Array(outputs);
    const other = (1 - this.keep) / this.g;
    for (let group = 0; group < G; group++) {
      const x = this.prefixItem(BigInt(item), group);
      for (let j = 0; j < this.hashCount; j++) {
        const hashed = hashItem(this.coefficients[j], x, this.g);
        for (let y = 0; y < this.g; y++) {
          row[(group * this.hashCount + j) * this.g + y] = ((y === hashed ? this.keep : 0) + other) / (G * this.hashCount);
        }
      }
    }
    return row;
  }

  /** Every item, for small integer domains only (2^bits <= 2^16): words are never enumerated. */
  inputs() {
    if (this.symbols !== null || this.bits > 16) {
      throw new InvalidParameterError('PEM cannot list every word or item of its domain; see reportBounds().');
    }
    return Array.from({ length: 2 ** this.bits }, (_, item) => item);
  }

  /** Pr[this report | each item of inputs()]. */
  likelihood(row) {
    const index = this.reportIndex(row);
    return Float64Array.from(this.inputs(), (item) => this.channelRow(item)[index]);
  }

  /** The two probabilities any item gives this report: its prefix hashes to the value, or not (ratio e^eps). */
  reportBounds(row) {
    this.decode(row);
    const share = this.lengths.length * this.hashCount;
    return { high: (this.keep + (1 - this.keep) / this.g) / share, low: (1 - this.keep) / this.g / share };
  }

  /** A word of an item (the inverse of encodeWord), or the item's number. */
  labelOf(item) {
    if (this.symbols === null) return String(item);
    let word = '';
    for (let column = this.params.max_chars - 1; column >= 0; column--) {
      const symbol = Number((BigInt(item) >> BigInt(column * this.bitsPerChar)) & ((1n << BigInt(this.bitsPerChar)) - 1n));
      if (symbol === 0) break;
      word += this.symbols[symbol - 1] ?? '?';
    }
    return word;
  }

  describeReport(row) {
    const { group, j, value } = this.decode(row);
    return `group ${group} (the first ${this.lengths[group]} bits of the ${this.symbols ? 'word' : 'item'}), hash function ${j}, value ${value}`;
  }
}
