// Random draws for the randomizers: uniform integers without modulo bias and Bernoulli draws
// whose probability is exactly the given double, all from uniform 32-bit words.
//
// The words come from crypto.getRandomValues (a CSPRNG in browsers and Node); tests inject a
// deterministic word source instead.  Nothing here uses Math.random.

const WORD = 4294967296; // 2^32
const TWO_53 = 9007199254740992;
const BUFFER_WORDS = 16384; // 64 KiB, the most crypto.getRandomValues fills per call

/**
 * x mod n for integers 0 <= x <= 2^32, 1 <= n <= 2^32, without V8's slow double ``%`` (fmod):
 * the quotient x / n may round up by one, which the correction undoes; q n is exact (< 2^53).
 */
function remainder(x, n) {
  const r = x - Math.floor(x / n) * n;
  return r < 0 ? r + n : r >= n ? r - n : r;
}

/** Fill a Uint32Array from the platform CSPRNG. */
function cryptoFill(words) {
  const source = globalThis.crypto;
  if (!source || typeof source.getRandomValues !== 'function') {
    throw new Error('dpdist: crypto.getRandomValues is not available; a CSPRNG is required to privatize.');
  }
  return source.getRandomValues(words);
}

/**
 * A stream of uniform 32-bit words and the exact draws built on them.
 *
 * @param {(words: Uint32Array) => unknown} [fill] fills its argument with uniform words;
 *   default crypto.getRandomValues.  Inject a deterministic one only in tests.
 */
export class RandomSource {
  constructor(fill = cryptoFill) {
    if (typeof fill !== 'function') {
      throw new TypeError(`The 'fill' argument of RandomSource must be a function filling a Uint32Array. Got ${typeof fill}.`);
    }
    this._fill = fill;
    this._buffer = new Uint32Array(BUFFER_WORDS);
    this._next = BUFFER_WORDS;
  }

  /** Whether this source draws from crypto.getRandomValues (not an injected, reproducible one). */
  get secure() {
    return this._fill === cryptoFill;
  }

  /** One uniform integer in [0, 2^32). */
  word() {
    if (this._next === BUFFER_WORDS) {
      this._fill(this._buffer);
      this._next = 0;
    }
    return this._buffer[this._next++];
  }

  /**
   * ``count`` uniform words (count <= 16384) as a view into the buffer, valid until the next draw.
   * Words left in the buffer when it is too short are skipped (unused words are independent).
   */
  words(count) {
    if (count > BUFFER_WORDS) throw new RangeError(`words() gives at most ${BUFFER_WORDS} words at once, not ${count}`);
    if (this._next + count > BUFFER_WORDS) {
      this._fill(this._buffer);
      this._next = 0;
    }
    const start = this._next;
    this._next += count;
    return this._buffer.subarray(start, start + count);
  }

  /**
   * A uniform integer in [0, n) for 1 <= n <= 2^53, by rejection: words at or above the largest
   * multiple of n below 2^32 are redrawn, so every residue has exactly the same probability.  Above
   * 2^32 (OLH's and LOLOHA's hash range g = round(e^eps + 1) from eps ~ 22.2) the same on 53-bit
   * integers made of two words (it used to loop forever there: the limit was 0).
   */
  uniformInt(n) {
    if (n === WORD) return this.word();
    if (n > WORD) {
      if (!(n <= TWO_53 && Number.isInteger(n))) throw new RangeError(`uniformInt needs an integer n <= 2^53, got ${n}`);
      const limit = TWO_53 - (TWO_53 % n); // exact: doubles below 2^53 are integers
      for (;;) {
        const x = (this.word() >>> 11) * WORD + this.word(); // 21 + 32 bits: uniform in [0, 2^53)
        if (x < limit) return x % n;
      }
    }
    const limit = WORD - remainder(WORD, n);
    let w = this.word();
    while (w >= limit) w = this.word();
    return remainder(w, n);
  }

  /**
   * True with probability exactly p, for any double p in [0, 1].
   *
   * A double is a dyadic rational, so its binary expansion is finite: compare a uniform real
   * U = 0.w1 w2 w3 ... (32-bit words, drawn lazily) with p's expansion word by word; U < p is
   * decided at the first word that differs (after one word except with probability 2^-32).
   * p * 2^32 - floor(p * 2^32) is exact in double arithmetic, so no rounding enters.
   */
  bernoulli(p) {
    if (!(p >= 0 && p <= 1)) throw new RangeError(`bernoulli needs a probability in [0, 1], got ${p}`);
    let rest = p;
    while (rest > 0) {
      const scaled = rest * WORD;
      const digit = Math.floor(scaled);
      const w = this.word();
      if (w !== digit) return w < digit; // digit === 2^32 only for rest === 1: always true
      rest = scaled - digit;
    }
    return false;
  }

  /** A uniform double k * 2^-53, k uniform in [0, 2^53) (NumPy's ``Generator.random`` grid). */
  uniform53() {
    const high = this.word() >>> 5; // 27 bits
    const low = this.word() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  }
}

/** The shared CSPRNG-backed source used when no source is given. */
let defaultSource = null;
export function secureSource() {
  if (defaultSource === null) defaultSource = new RandomSource();
  return defaultSource;
}
