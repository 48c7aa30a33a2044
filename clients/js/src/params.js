// Parameter rules of the config, as dpdist._validation checks them in Python, so that the JS
// client accepts exactly the configs the aggregator accepts and normalizes them the same way
// (floats stay floats, defaults are filled in) before writing them into a record header.

import { InvalidParameterError } from './errors.js';

const show = (value) => (typeof value === 'string' ? `'${value}'` : JSON.stringify(value) ?? String(value));

/** A finite float in an open interval (low, high). */
export function interval(low = -Infinity, high = Infinity) {
  return {
    isFloat: true,
    describe: () =>
      `a finite float${low !== -Infinity ? ` > ${low}` : ''}${low !== -Infinity && high !== Infinity ? ' and' : ''}${high !== Infinity ? ` < ${high}` : ''}`,
    check(value) {
      if (typeof value !== 'number' || !Number.isFinite(value) || !(value > low && value < high)) throw new RangeError();
      return value;
    },
  };
}

/** An integer in [low, high] (a float with an integer value is accepted, as in Python). */
export function integer(low, high) {
  return {
    describe: () => `an int in [${low}, ${high}]`,
    check(value) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < low || value > high) throw new RangeError();
      return value;
    },
  };
}

export function boolean() {
  return {
    describe: () => 'a bool',
    check(value) {
      if (typeof value !== 'boolean') throw new RangeError();
      return value;
    },
  };
}

export function options(values) {
  return {
    describe: () => `one of ${values.map(show).join(', ')}`,
    check(value) {
      if (!values.includes(value)) throw new RangeError();
      return value;
    },
  };
}

/** A pair [lo, hi] of finite floats with lo < hi. */
export function bounds() {
  return {
    isFloat: true,
    describe: () => 'a pair [lo, hi] of finite floats with lo < hi',
    check(value) {
      if (!Array.isArray(value) || value.length !== 2) throw new RangeError();
      const [lo, hi] = value;
      if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isFinite(lo) || !Number.isFinite(hi) || !(lo < hi)) {
        throw new RangeError();
      }
      return [lo, hi];
    },
  };
}

export function optional(inner) {
  return {
    isFloat: inner.isFloat,
    describe: () => `None (null) or ${inner.describe()}`,
    check: (value) => (value === null ? null : inner.check(value)),
  };
}

/**
 * Check ``config`` against ``rules`` (name -> rule) and ``defaults``; return the normalized
 * parameters (defaults filled in, every rule's key present) and the set of float keys.
 */
export function checkParams(display, config, rules, defaults = {}) {
  const params = {};
  for (const key of Object.keys(config)) {
    if (key === 'protocol' || key === 'version') continue;
    if (!(key in rules)) {
      throw new InvalidParameterError(
        `${display} got the unknown parameter '${key}'; its parameters are ${Object.keys(rules).map(show).join(', ')}.`,
      );
    }
  }
  const floatKeys = new Set();
  if ('labels' in rules && Array.isArray(config.labels) && !('domain_size' in config)) {
    defaults = { ...defaults, domain_size: config.labels.length }; // domain_size defaults to the labels' count
  }
  for (const [key, rule] of Object.entries(rules)) {
    const value = key in config ? config[key] : defaults[key];
    if (value === undefined) {
      throw new InvalidParameterError(`${display} needs the parameter '${key}'; it must be ${rule.describe()}.`);
    }
    try {
      params[key] = rule.check(value);
    } catch {
      throw new InvalidParameterError(
        `The '${key}' parameter of ${display} must be ${rule.describe()}. Got ${show(value)} instead.`,
      );
    }
    if (rule.isFloat) floatKeys.add(key);
  }
  if ('labels' in params && params.labels === null) delete params.labels; // only given labels are in the config
  if (params.labels && params.labels.length !== params.domain_size) {
    throw new InvalidParameterError(
      `The 'labels' parameter of ${display} must hold domain_size=${params.domain_size} labels. Got ${params.labels.length} label(s) instead.`,
    );
  }
  return { params, floatKeys };
}

/** A public label domain: a list of at least 2 distinct non-empty strings (item i is labels[i]). */
export function labels() {
  return {
    describe: () => 'a list of at least 2 distinct non-empty strings',
    check(value) {
      if (!Array.isArray(value) || value.length < 2) throw new RangeError();
      if (!value.every((label) => typeof label === 'string' && label.length > 0)) throw new RangeError();
      if (new Set(value).size !== value.length) throw new RangeError();
      return [...value];
    },
  };
}

/** The privacy budget of every local protocol, as Python's ``LOCAL_EPSILON`` and Java's ``Params.EPSILON``: a finite
 * float in [1e-06, 30] (below, the estimators divide by about 0; above, a report is the value itself to double
 * precision). A collector's config with another epsilon is refused (1e308 made OUE send the true value
 * half the time). */
export const EPSILON = privacyBudget(1e-6, '1e-06');

/** A privacy budget: a finite float in [``low``, 30] (``shown``: ``low`` as Python writes it, for the message). */
export function privacyBudget(low, shown) {
  return {
    isFloat: true,
    describe: () => `a finite float >= ${shown} and <= 30`,
    check(value) {
      if (typeof value !== 'number' || !Number.isFinite(value) || !(value >= low && value <= 30)) throw new RangeError();
      return value;
    },
  };
}
export const DOMAIN_SIZE = integer(2, 2 ** 31 - 1);

/** The parameters every frequency protocol takes (``labels`` is optional, as in Python). */
export function frequencyRules(extra = {}) {
  return { epsilon: EPSILON, domain_size: DOMAIN_SIZE, labels: optional(labels()), ...extra };
}
