// What someone who sees this device's reports can guess of its value, in words a person reads, beside chance.
//
// Computed from the protocol's public parameters only (its name, epsilon, domain), never from a value: the bound
// that every epsilon-LDP report obeys (Python's dpdist.accounting.guess_bound; docs/explanation/odds.md).
// With m values equally likely before the report, nobody who sees it guesses the value with a probability above
// e^eps / (e^eps + m - 1), whatever else they know; GRR reaches it, so for GRR it is the exact figure and for every
// other protocol an upper bound ("at most").  A numerical value is guessed among equal ranges of its bounds (as many
// as the participation page shows), a record one answer at a time (the question with the fewest answers: the
// likeliest guess), a word (pem) among every word; a longitudinal protocol's one report at epsilon_1 and all of its
// reports of an unchanged value at epsilon_inf (they are post-processing of its permanent response).

import { isLongitudinal } from './protocols/_longitudinal.js';

/** Below this chance a probability reads as a multiple of a blind guess, not as a percentage. */
const TINY = 1e-4;

/**
 * The bound of any (epsilon, 0) guarantee on guessing a value whose likeliest candidate has probability ``chance``.
 * @param {number} epsilon
 * @param {number} chance
 * @returns {number}
 */
export function guessBound(epsilon, chance) {
  const odds = Math.exp(epsilon) * chance; // Infinity past e^709: the bound is 1
  return Math.min(1, Math.max(chance, 1 - (1 - chance) / (odds + 1 - chance)));
}

/** Equal ranges of a numerical protocol's bounds: as many of its bins as divide them, at most 10 (the page's table). */
function ranges(protocol) {
  const bins = Number(protocol.params.bins ?? 10);
  let groups = Math.min(bins, 10);
  while (bins % groups !== 0) groups -= 1;
  return Math.max(groups, 2);
}

/** What is guessed and among how many: ``{target, values}`` (values a Number; null: no sentence for this kind). */
function candidates(protocol) {
  switch (protocol.kind) {
    case 'frequency':
      return { target: 'your value', values: protocol.domainSize };
    case 'numerical': {
      const [lo, hi] = protocol.params.bounds;
      const groups = ranges(protocol);
      return { target: `which of ${groups} equal ranges of [${lo}, ${hi}] your value lies in`, values: groups };
    }
    case 'multi': {
      const sizes = protocol.params.attributes.map((attribute) => ('bounds' in attribute ? 10 : attribute.domain_size));
      return { target: 'your answer to one question', values: Math.min(...sizes) };
    }
    case 'heavy_hitters':
      return { target: 'your word', values: protocol.params.alphabet != null
        ? protocol.params.alphabet.length ** protocol.params.max_chars : 2 ** protocol.params.bits };
    default:
      return null;
  }
}

/**
 * How likely someone who sees this device's reports guesses its value, by the bound of the protocol's epsilon.
 * @param {import('./protocols/_base.js').Protocol} protocol
 * @returns {{target: string, values: number, chance: number, epsilon: number, probability: number, exact: boolean,
 *   memo: {epsilon: number, probability: number}|null}|null} null for a protocol of key-value pairs
 */
export function guessOdds(protocol) {
  const found = candidates(protocol);
  if (found === null) return null;
  const chance = 1 / found.values;
  const epsilon = isLongitudinal(protocol) ? protocol.memoized.epsilon1 : protocol.epsilon;
  const memo = isLongitudinal(protocol)
    ? { epsilon: protocol.memoized.epsilonInf, probability: guessBound(protocol.memoized.epsilonInf, chance) } : null;
  return { ...found, chance, epsilon, probability: guessBound(epsilon, chance), exact: protocol.name === 'grr', memo };
}

/**
 * ``value`` (>= 0) to ``digits`` significant digits, in decimal, read from its 12 (the float noise below them is no
 * figure's own: an exact 28% stays 28%): rounded up where it is a bound a person reads ("at most", an attacker's
 * success: never shown below it), else to the nearest, half up (Python's ``dpdist.accounting._odds.significant``).
 * @param {number} value
 * @param {boolean} bound
 * @param {number} [digits]
 * @returns {number}
 */
function significant(value, bound, digits = 3) {
  if (value === 0) return 0;
  const [mantissa, exponent] = value.toExponential(11).split('e'); // 12 digits, the exact value rounded half up
  const all = mantissa.replace('.', '');
  const rest = all.slice(digits);
  const head = Number(all.slice(0, digits)) + ((bound ? /[1-9]/.test(rest) : rest[0] >= '5') ? 1 : 0);
  return Number(`${head}e${Number(exponent) - digits + 1}`);
}

/**
 * A probability as a percentage of three significant digits (``significant``), or of as many more as keep a
 * probability below 1 from reading 100% (Python's ``dpdist.accounting._odds.percent``).
 * @param {number} value
 * @param {boolean} [bound] an attacker's success, rounded up
 * @returns {string}
 */
export function percent(value, bound = false) {
  let digits = 3;
  while (significant(100 * value, bound, digits) >= 100 && value < 1 && digits < 12) digits += 1;
  return `${significant(100 * value, bound, digits)}%`;
}

/** ``probability`` against ``chance``, in words: a percentage, or a multiple of a blind guess when chance is tiny. */
function odds(probability, chance, exact) {
  const atMost = exact ? '' : 'at most ';
  if (chance >= TINY) return `${atMost}${percent(probability, true)}`;
  return `${atMost}${significant(probability / chance, true)} times that of a blind guess`;
}

/**
 * At most how many times a blind guess the best guess is right, whatever the attacker's prior (whatever else it
 * knows): min(e^epsilon, values), as success <= e^epsilon times the likeliest value's probability, and <= 1; rounded
 * up to three significant digits (Python's GuessOdds.times, in words).
 * @param {number} epsilon
 * @param {number} values
 * @returns {string}
 */
function times(epsilon, values) {
  const value = epsilon >= Math.log(values) ? values : Math.exp(epsilon);
  return significant(value, true).toLocaleString('en-US', { maximumSignificantDigits: 3 });
}

/**
 * One sentence a person reads before taking part: how likely their answer is guessed from what they send, with the
 * chance baseline (null for a protocol of key-value pairs).
 * @param {import('./protocols/_base.js').Protocol} protocol
 * @returns {string|null}
 */
export function consentText(protocol) {
  const found = guessOdds(protocol);
  if (found === null) return null;
  const { target, values, chance, epsilon, probability, exact, memo } = found;
  const baseline = (chance >= TINY ? `against ${percent(chance)} by chance`
    : `a blind guess being right once in ${significant(1 / chance, false).toLocaleString('en-US', { maximumSignificantDigits: 3 })}`)
    + `, if every answer is equally likely; whatever else they know, at most ${times(memo?.epsilon ?? epsilon, values)}`
    + ' times a blind guess';
  if (memo === null) {
    return `Someone who sees your report can guess ${target} with a probability of ${odds(probability, chance, exact)}, ${baseline}.`;
  }
  return `Someone who sees one of your reports can guess ${target} with a probability of ${odds(probability, chance, false)}; ` +
    `all of your reports of a value that does not change, ${odds(memo.probability, chance, false)}; ${baseline}.`;
}
