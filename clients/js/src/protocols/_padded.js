// What PCKV-UE (pckv-ue.js) and PCKV-GRR (pckv-grr.js) share, as dpdist.local.keyvalue._padded: the padding
// length l (default 1), the extended domain d' = d + l of real and dummy keys, Padding-and-Sampling (Gu et al.
// 2020, Algorithm 1) with draws that do not depend on the set (_keyvalue.js), its law, and the design constants.

import { InvalidParameterError } from '../errors.js';
import { expLower, fractionOf, gridFloor, oddsProbability } from '../grid.js';
import { integer } from '../params.js';
import { KeyValueProtocol, add, atLeast, div, gridCeil, keyValueRules, mul, sub } from './_keyvalue.js';

const ONE = [1n, 1n];
const TWO = [2n, 1n];

/** PCKV-UE's (a, b, p): a = 1/2, p the grid probability of odds e^eps, b the smallest grid b with 2p(1-b)/b <= e^eps. */
export function ueConstants(epsilon) {
  const bound = expLower(epsilon);
  const p = fractionOf(oddsProbability(bound));
  return { a: 0.5, p: Number(p[0]) / Number(p[1]), b: gridCeil(div(mul(TWO, p), add(bound, mul(TWO, p)))) };
}

/** PCKV-GRR's (a, p): p of odds l(e^eps - 1) + 1, a the largest grid value whose Theorem 3 epsilon is at most eps. */
export function grrConstants(epsilon, ell, width) {
  const bound = expLower(epsilon);
  const L = [BigInt(ell), 1n];
  const pDouble = oddsProbability(add(mul(L, sub(bound, ONE)), ONE));
  const p = fractionOf(pDouble);
  const e2 = div(p, sub(ONE, p));
  const c = div(add(e2, ONE), TWO);
  const lam = mul(sub(L, ONE), c);
  const above = div(sub(mul(bound, add(c, lam)), lam), e2);
  const x = atLeast(above, c) ? above : div(mul(lam, sub(bound, ONE)), sub(e2, bound));
  return { p: pDouble, a: gridFloor(div(x, add(x, [BigInt(width - 1), 1n]))) };
}

export class PaddedKeyValue extends KeyValueProtocol {
  constructor(name, config) {
    super(name, config, keyValueRules({ padding_length: integer(1, 2 ** 20) }), { padding_length: 1 });
  }

  get paddingLength() {
    return this.params.padding_length;
  }

  /** d' = d + l: the real and the dummy keys. */
  get extendedSize() {
    return this.domainSize + this.paddingLength;
  }

  /**
   * Padding-and-Sampling: the sampled key of [0, d') and whether v* = +1.  A uniform slot of the padded set
   * (max(|S|, l) slots, the first |S| the real pairs) by reservoir over every slot a set may have, so that the
   * draws are the same for every set; a dummy slot takes a uniform dummy key (drawn either way).
   */
  sample(set, source) {
    const ell = this.paddingLength;
    const size = set.keys.length;
    const width = Math.max(size, ell);
    const most = Math.max(this.domainSize, ell);
    let slot = source.uniformInt(ell);
    for (let j = ell + 1; j <= most; j++) {
      const replace = source.uniformInt(j) === 0;
      if (replace && j <= width) slot = j - 1;
    }
    const dummy = this.domainSize + source.uniformInt(ell);
    const real = slot < size;
    const up = this.discretize(real ? set.values[slot] : 0, source);
    return { key: real ? set.keys[slot] : dummy, up };
  }

  /** ``law[2k + s]``: Pr[sampled key k of d' with v* = +1 (s = 0) or -1 (s = 1)] (Python's ``_sample_law``). */
  sampleLaw(set) {
    const ell = this.paddingLength;
    const d = this.domainSize;
    const size = set.keys.length;
    const width = Math.max(size, ell);
    const law = new Float64Array(2 * this.extendedSize);
    set.keys.forEach((key, at) => {
      const up = KeyValueProtocol.up(set.values[at]);
      law[2 * key] = up / width;
      law[2 * key + 1] = (1.0 - up) / width;
    });
    const dummy = (1.0 - size / width) / ell / 2.0;
    for (let k = d; k < this.extendedSize; k++) law[2 * k] = law[2 * k + 1] = dummy;
    return law;
  }

  /** A config whose d' is too large for an exact law refuses channelRow (the tests then sample only). */
  static refuseChannel(display, width, most) {
    throw new InvalidParameterError(`${display}.channelRow enumerates the outputs over d + padding_length <= ${most} keys. Got ${width}.`);
  }
}
