// RowShuffler (clients/js/bin/row-shuffler.js): privatize.js's shuffle of a file's reports, in
// memory and through temporary files, is a uniformly random permutation.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RowShuffler } from '../bin/row-shuffler.js';
import { ALPHA, Z_ALPHA as Z, chiSquarePValue, deterministicSource, positionalMatches, sortedValues } from './helpers.js';

function permutationCounts(trials, options) {
  const counts = new Array(24).fill(0);
  const source = deterministicSource(7);
  const index = new Map();
  const all = [];
  const build = (prefix, rest) => {
    if (rest.length === 0) all.push(prefix.join(''));
    for (const item of rest) build([...prefix, item], rest.filter((other) => other !== item));
  };
  build([], [0, 1, 2, 3]);
  all.forEach((key, i) => index.set(key, i));
  for (let t = 0; t < trials; t++) {
    const shuffler = new RowShuffler(1, source, options);
    try {
      shuffler.add(Uint8Array.of(0, 1));
      shuffler.add(Uint8Array.of(2, 3));
      const out = [];
      for (const chunk of shuffler.chunks()) out.push(...chunk);
      counts[index.get(out.join(''))] += 1;
    } finally {
      shuffler.close();
    }
  }
  return counts;
}

test('RowShuffler draws each of the 24 orders of 4 rows equally often, in memory and through files', () => {
  const uniform = new Array(24).fill(1 / 24);
  const inMemory = permutationCounts(4800, {});
  assert.ok(chiSquarePValue(inMemory, uniform) > ALPHA, inMemory.join(' '));
  const directory = mkdtempSync(join(tmpdir(), 'dpdist-order-'));
  try {
    // one byte of memory, two buckets: every row spills, buckets of 2+ rows are split again (recursion)
    const spilled = permutationCounts(1200, { memoryBytes: 1, buckets: 2, directory });
    assert.ok(chiSquarePValue(spilled, uniform) > ALPHA, spilled.join(' '));
    assert.deepEqual(readdirSync(directory), []);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

test('RowShuffler through files puts sorted rows in random order (not only within each block)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'dpdist-order-'));
  const values = sortedValues(20000, 4);
  const shuffler = new RowShuffler(1, deterministicSource(8), { memoryBytes: 1000, buckets: 4, directory });
  try {
    for (let start = 0; start < values.length; start += 700) shuffler.add(Uint8Array.from(values.slice(start, start + 700)));
    const out = [];
    for (const chunk of shuffler.chunks()) out.push(...chunk);
    assert.deepEqual([...out].sort(), [...values].sort());
    const { z } = positionalMatches(out, values, 4);
    assert.ok(Math.abs(z) < Z, `z = ${z}`);
  } finally {
    shuffler.close();
    assert.deepEqual(readdirSync(directory), []);
    rmSync(directory, { recursive: true, force: true });
  }
});
