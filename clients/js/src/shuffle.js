// Reports in a uniformly random order.
//
// Report i of a batch or file must not be the report of the i-th value given: when the values
// are sorted (or grouped, or in time order), a report's position gives its value away whatever
// the randomizer did. The Client sends, and privatize.js writes, reports in an order drawn here
// from the CSPRNG (the same source the reports are drawn from). Permuting the values before
// randomizing each independently is the same, in law, as permuting the reports.

/**
 * A uniformly random permutation of 0 .. n-1 (Fisher-Yates; n < 2^32) drawn from ``source``.
 * @param {number} n
 * @param {import('./random.js').RandomSource} source
 * @returns {Uint32Array}
 */
export function permutation(n, source) {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = source.uniformInt(i + 1);
    const kept = order[i];
    order[i] = order[j];
    order[j] = kept;
  }
  return order;
}

/** A new array of the items of ``values`` (array-like) in a uniformly random order. */
export function shuffled(values, source) {
  const order = permutation(values.length, source);
  return Array.from(order, (index) => values[index]);
}

/** The rows of ``bytes`` (whole rows of ``rowBytes`` bytes), row ``i`` of the result being row ``order[i]``. */
export function permuteRows(bytes, rowBytes, order) {
  const out = new Uint8Array(order.length * rowBytes);
  for (let i = 0; i < order.length; i++) {
    const start = order[i] * rowBytes;
    out.set(bytes.subarray(start, start + rowBytes), i * rowBytes);
  }
  return out;
}

/** ``batch`` (a ReportBatch) with its rows in a uniformly random order: a new batch of its own class. */
export function shuffleBatch(batch, source) {
  const n = batch.length;
  if (n < 2) return batch;
  const rowBytes = batch.bytes.length / n;
  return new batch.constructor(batch.config, batch.floatKeys, batch.descr, batch.shape, permuteRows(batch.bytes, rowBytes, permutation(n, source)));
}
