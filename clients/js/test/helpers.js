// Test helpers: a deterministic word source, the chi-square test, the Python fixture.

import { readFileSync } from 'node:fs';
import { RandomSource } from '../src/random.js';

/** xoshiro128** seeded by splitmix32: a deterministic stand-in for crypto.getRandomValues. */
export function deterministicSource(seed) {
  let x = seed >>> 0;
  const splitmix = () => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  // the state in four locals and the rotations written out: the same words as the loop over an array, at half its
  // cost (10^8 words: 0.41 CPU-s instead of 0.81; the sampled channel tests draw about that many)
  let s0 = splitmix();
  let s1 = splitmix();
  let s2 = splitmix();
  let s3 = splitmix();
  return new RandomSource((words) => {
    for (let i = 0; i < words.length; i++) {
      const m = Math.imul(s1, 5);
      words[i] = Math.imul((m << 7) | (m >>> 25), 9);
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
    }
    return words;
  });
}

/** A source that returns the given words in order (then fails). */
export function scriptedSource(words) {
  let next = 0;
  const source = new RandomSource(() => {});
  source.word = () => {
    if (next >= words.length) throw new Error('scripted source exhausted');
    return words[next++] >>> 0;
  };
  return source;
}

// ln Gamma (Lanczos, g = 7, n = 9), accurate to ~1e-15 relative
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
function logGamma(x) {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Regularized upper incomplete gamma Q(a, x) (series / continued fraction, Numerical Recipes 6.2). */
function gammaQ(a, x) {
  if (x <= 0) return 1;
  const front = Math.exp(-x + a * Math.log(x) - logGamma(a));
  if (x < a + 1) {
    let sum = 1 / a;
    let term = sum;
    for (let n = 1; n < 10000 && Math.abs(term) > Math.abs(sum) * 1e-16; n++) {
      term *= x / (a + n);
      sum += term;
    }
    return Math.max(0, 1 - sum * front);
  }
  let b = x + 1 - a;
  let c = 1e300;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (Math.abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return front * h;
}

/** Survival function of the chi-square distribution with ``df`` degrees of freedom. */
export function chiSquareSf(statistic, df) {
  return gammaQ(df / 2, statistic / 2);
}

/**
 * Pearson chi-square p-value of ``observed`` counts against ``probabilities``, pooling cells
 * with expected count < 5 into one (as tests/conformance/_checks.py does).
 */
export function chiSquarePValue(observed, probabilities) {
  const total = observed.reduce((a, b) => a + b, 0);
  const cells = [];
  let pooledObserved = 0;
  let pooledExpected = 0;
  for (let i = 0; i < observed.length; i++) {
    const expected = probabilities[i] * total;
    if (expected < 5) {
      pooledObserved += observed[i];
      pooledExpected += expected;
    } else cells.push([observed[i], expected]);
  }
  if (pooledExpected > 0) cells.push([pooledObserved, pooledExpected]);
  else if (pooledObserved > 0) return 0;
  if (cells.length < 2) return 1;
  const statistic = cells.reduce((sum, [o, e]) => sum + ((o - e) * (o - e)) / e, 0);
  return chiSquareSf(statistic, cells.length - 1);
}

/** max over outputs of log(max_i P[i, y] / min_i P[i, y]) (Infinity if a column mixes 0 and > 0). */
export function maxPrivacyLoss(rows) {
  let loss = 0;
  for (let y = 0; y < rows[0].length; y++) {
    let high = -Infinity;
    let low = Infinity;
    for (const row of rows) {
      high = Math.max(high, row[y]);
      low = Math.min(low, row[y]);
    }
    if (high > 0) loss = Math.max(loss, low <= 0 ? Infinity : Math.log(high) - Math.log(low));
  }
  return loss;
}

export const fixture = JSON.parse(readFileSync(new URL('./fixtures/python.json', import.meta.url), 'utf8'));

/** Per-test false-alarm level of the seeded statistical tests (as the Python conformance suite). */
export const ALPHA = 1e-6;
/** Relative slack on epsilon for floating-point rounding of channel entries (as in Python). */
export const CHANNEL_SLACK = 1e-9;

/** scipy.stats.norm.isf(ALPHA / 2): a two-sided z bound at level ALPHA. */
export const Z_ALPHA = 4.891638475698591;

/** n values sorted by value: n / d of each item 0 .. d-1, in order. */
export function sortedValues(n, d) {
  return Array.from({ length: n }, (_, j) => Math.floor((j * d) / n));
}

/**
 * Matches of report j with guess j, and the mean and standard deviation of that count when the
 * reports are in a uniformly random order (given the reports, exactly: Hoeffding 1951).
 */
export function positionalMatches(reports, guesses, d) {
  const n = reports.length;
  const reported = new Array(d).fill(0);
  const guessed = new Array(d).fill(0);
  let matches = 0;
  for (let j = 0; j < n; j++) {
    if (reports[j] === guesses[j]) matches += 1;
    reported[reports[j]] += 1;
    guessed[guesses[j]] += 1;
  }
  let grand = 0;
  for (let v = 0; v < d; v++) grand += (guessed[v] * reported[v]) / (n * n);
  let variance = 0;
  for (let v = 0; v < d; v++) {
    for (let w = 0; w < d; w++) {
      const deviation = (v === w ? 1 : 0) - reported[v] / n - guessed[w] / n + grand;
      variance += (guessed[v] * reported[w] * deviation * deviation) / (n - 1);
    }
  }
  return { matches, mean: n * grand, sd: Math.sqrt(variance), z: (matches - n * grand) / Math.sqrt(variance) };
}

/**
 * Privatize ``samples`` copies of each input with a seeded source and check the counts of each
 * report against its row of Python's ``channel`` (Pearson at ALPHA, Bonferroni over the inputs).
 */
export function checkSampledChannel(assert, protocol, inputs, channel, samples, seed) {
  const source = deterministicSource(seed);
  for (const [row, input] of inputs.entries()) {
    const batch = protocol.privatize(new Array(samples).fill(input), source);
    const counts = new Array(channel[row].length).fill(0);
    // each report's bytes (batch.row(i)) copied into one buffer: no view made per report
    const size = batch.bytes.length / batch.length;
    const report = new Uint8Array(size);
    for (let i = 0, at = 0; i < batch.length; i++) {
      for (let k = 0; k < size; k++) report[k] = batch.bytes[at++];
      counts[protocol.reportIndex(report)] += 1;
    }
    const pValue = chiSquarePValue(counts, channel[row]);
    assert.ok(pValue > ALPHA / inputs.length, `input ${JSON.stringify(input)}: chi-square p-value ${pValue}`);
  }
}

/** A storage of getItem/setItem in memory (a device's localStorage in tests); ``map`` shows what it keeps. */
export function memoryStorage() {
  const map = new Map();
  return { getItem: (key) => (map.has(key) ? map.get(key) : null), setItem: (key, value) => map.set(key, String(value)), map };
}


/**
 * The calls a seeded source sees while ``protocol`` privatizes each of ``values`` once, with every coin
 * (``bernoulli``) forced to ``false`` and then to ``true``: one trace per (coin, value). A randomizer whose draws
 * do not depend on its coins or the value gives one distinct trace.
 */
export function drawTraces(protocol, values, seed) {
  const traces = new Set();
  for (const coin of [false, true]) {
    for (const value of values) {
      const inner = deterministicSource(seed);
      const drawn = [];
      const source = new Proxy(inner, {
        get(target, name) {
          if (name === 'bernoulli') return () => coin;
          const member = target[name];
          if (typeof member !== 'function') return member;
          return (...args) => { const x = member.apply(target, args); drawn.push(`${String(name)}(${args.join(',')})`); return x; };
        },
      });
      protocol.privatize([value], source);
      traces.add(drawn.join(' '));
    }
  }
  return traces;
}
