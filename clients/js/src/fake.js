// Fake reports of the attributes a user did not sample (rsfd and rsrfd; Python's
// dpdist.local.multi._fake): each kind writes one fake report in the attribute's report format and
// gives its law over the attribute protocol's outputs (the exact channel).
//
// - uniform:    a uniform item, as GRR reports it (RS+FD[GRR]);
// - prior:      an item drawn from a public prior, sent as it is (RS+RFD[GRR], PVLDB 2023 Alg. 1 line 6);
// - zero:       unary encoding of the all-zero vector, every bit at q (RS+FD[UE-z]);
// - randomized: the attribute's randomizer applied to an item drawn uniformly (RS+FD[UE-r]) or
//               from the prior (RS+RFD[UE-r]).
//
// Priors are realized exactly as Python realizes them (``quantizePrior``): integer weights summing to
// 2^32, an item drawn by comparing one uniform 32-bit word with their cumulative sums, so the law the
// server's estimators subtract is the law sampled here.

const SCALE = 4294967296; // 2^32

/** ``sum`` of a float64 array as numpy's pairwise summation adds it (numpy/_core/src/umath/loops_utils.h). */
export function numpySum(values, start = 0, n = values.length) {
  if (n < 8) {
    let total = 0;
    for (let i = start; i < start + n; i++) total += values[i];
    return total;
  }
  if (n <= 128) {
    const r = Array.from({ length: 8 }, (_, j) => values[start + j]);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += values[start + i + j];
    let total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) total += values[start + i];
    return total;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return numpySum(values, start, half) + numpySum(values, start + half, n - half);
}

/** Python's stable ``argsort(-keys)``: positions by decreasing key, ties in position order. */
function decreasing(keys) {
  return keys.map((key, position) => [key, position]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map(([, position]) => position);
}

/**
 * Integer weights summing to 2^32, proportional to ``prior`` (positive entries stay positive): Python's
 * ``quantize_prior``, operation for operation (largest remainders).
 */
export function quantizePrior(prior) {
  const total = numpySum(Float64Array.from(prior));
  const normalized = prior.map((p) => p / total);
  const exact = normalized.map((p) => p * SCALE);
  const weights = exact.map((x, i) => (normalized[i] > 0 && Math.floor(x) === 0 ? 1 : Math.floor(x)));
  const short = SCALE - weights.reduce((a, b) => a + b, 0); // exact: integers below 2^53
  if (short > 0) {
    for (const position of decreasing(exact.map((x) => x - Math.floor(x))).slice(0, short)) weights[position] += 1;
  } else if (short < 0) {
    for (const position of decreasing(weights).slice(0, -short)) weights[position] -= 1;
  }
  return weights;
}

/** An item drawn with probabilities ``weights / 2^32``: the first whose cumulative weight exceeds one uniform word. */
function drawItem(cumulative, source) {
  const word = source.word();
  let low = 0;
  let high = cumulative.length - 1; // cumulative[last] = 2^32 > every word
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cumulative[middle] <= word) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The law of an item: ``weights / 2^32``, or uniform (``null``). */
function itemLaw(weights, size) {
  return weights === null ? new Float64Array(size).fill(1 / size) : Float64Array.from(weights, (w) => w / SCALE);
}

/**
 * The fake data of an attribute randomized by ``inner``: ``kind`` one of "uniform", "prior", "zero",
 * "randomized"; ``weights`` the realized prior (``quantizePrior``), or null for a uniform item.
 * @returns {{name: string, write: Function, row: () => Float64Array}}
 */
export function fakeData(inner, kind, weights = null) {
  const d = inner.domainSize;
  let cumulative = null;
  if (weights !== null) {
    let sum = 0;
    cumulative = weights.map((w) => (sum += w));
  }
  const item = (source) => (cumulative === null ? source.uniformInt(d) : drawItem(cumulative, source));
  if (kind === 'zero') {
    return { name: kind, write: (source, bytes, view, offset) => inner.writeReport(-1, source, bytes, view, offset), row: () => inner.channelRow(-1) };
  }
  if (kind === 'uniform' || kind === 'prior') {
    return { name: kind, write: (source, bytes, view, offset) => inner.format.write(view, offset, 0, item(source)), row: () => itemLaw(weights, d) };
  }
  return {
    name: kind,
    write: (source, bytes, view, offset) => inner.writeReport(item(source), source, bytes, view, offset),
    row: () => {
      const law = itemLaw(weights, d);
      const out = new Float64Array(inner.channelRow(0).length);
      for (let x = 0; x < d; x++) inner.channelRow(x).forEach((p, y) => { out[y] += law[x] * p; });
      return out;
    },
  };
}
