// The JavaScript side of tests/clients/test_js_conformance.py: what the client does with configs Python writes.
//
//   node tests/js_conformance_driver.mjs registry        {"supported": [...], "attributes": [...]}: the protocols the
//                                                         client implements and those a record's attribute may use
//   node tests/js_conformance_driver.mjs cases FILE.json  one JSON result per case of FILE (a list of
//                                                         {config, view, inputs, samples, seed}), as a JSON list
//   node tests/js_conformance_driver.mjs consent FILE.json  consentText of each config of FILE (a list), as a JSON list
//
// For a case of a protocol the client implements: its config as the client normalizes it, whether it accepts the
// collector's client view, the exact law of each input's report (channelRow; null where it is not enumerable), one
// binary record (wire.js, not shuffled) of ``samples`` reports of each input in turn from a seeded source, whether
// the protocol's own module (dpdist-client/<name>) privatizes as the main entry point does, and whether its draws
// are the same whatever its coins and the value.  For a config it does not implement: the refusal.

import { readFileSync } from 'node:fs';
import { SUPPORTED_PROTOCOLS, consentText, encodeRecord, fromConfig, privatize } from '../clients/js/src/index.js';
import { ReportBatch } from '../clients/js/src/protocols/_base.js';
import { attributeProtocols } from '../clients/js/src/protocols/_index.js';
import { deterministicSource, drawTraces } from '../clients/js/test/helpers.js';

/** The input as the protocol's channelRow reads it: items as they are, else checked (reals rescaled to [0, 1], records). */
function channelInput(protocol, value) {
  return protocol.kind === 'frequency' ? value : protocol.checkValue(value, 0);
}

function exactLaw(protocol, inputs) {
  if (typeof protocol.channelRow !== 'function') return null;
  try {
    return inputs.map((value) => Array.from(protocol.channelRow(channelInput(protocol, value))));
  } catch {
    return null; // e.g. a trapezoid wave (a sum of two 53-bit uniforms): sampled only
  }
}

/**
 * ``samples`` reports of each input in turn from ``source``: the batch of one ``privatize`` of every input repeated
 * ``samples`` times, made one input at a time (byte for byte the same: the reports draw from ``source`` in order
 * and checking a value draws nothing).  One call over all of them held every checked value at once: 5 million
 * key-value sets of two typed arrays each for PCKV (2.7 GB, most of the driver's time in the garbage collector).
 */
function privatizeEach(config, inputs, samples, source) {
  const batches = inputs.map((value) => privatize(config, new Array(samples).fill(value), { source }));
  const bytes = new Uint8Array(batches.reduce((size, batch) => size + batch.bytes.length, 0));
  batches.reduce((offset, batch) => (bytes.set(batch.bytes, offset), offset + batch.bytes.length), 0);
  const [first] = batches;
  const shape = [inputs.length * samples, ...first.shape.slice(1)];
  return new ReportBatch(first.config, first.floatKeys, first.descr, shape, bytes);
}

/** Whether a seeded source sees the same calls whatever the coins (all forced one way) and the value. */
function drawsAlike(protocol, inputs) {
  const values = [inputs[0], inputs[Math.floor(inputs.length / 2)], inputs.at(-1)];
  for (let seed = 1; seed <= 3; seed++) {
    if (drawTraces(protocol, values, seed).size !== 1) return false;
  }
  return true;
}

async function run({ config, view, inputs, samples, seed }) {
  let protocol;
  try {
    protocol = fromConfig(config);
  } catch (error) {
    return { refused: `${error.name}: ${error.message}` };
  }
  let viewRefused = null;
  try {
    fromConfig(view);
  } catch (error) {
    viewRefused = `${error.name}: ${error.message}`;
  }
  const record = encodeRecord(privatizeEach(config, inputs, samples, deterministicSource(seed)));
  const { default: Module } = await import(new URL(`../clients/js/src/protocols/${config.protocol}.js`, import.meta.url));
  const own = Module.privatize(config, inputs, { source: deterministicSource(seed + 1) }).bytes;
  const main = privatize(config, inputs, { source: deterministicSource(seed + 1) }).bytes;
  return {
    config: protocol.config,
    viewRefused,
    channel: exactLaw(protocol, inputs),
    record: Buffer.from(record).toString('base64'),
    moduleAsMain: Module.protocol === config.protocol && Buffer.compare(Buffer.from(own), Buffer.from(main)) === 0,
    drawsAlike: drawsAlike(protocol, inputs),
  };
}

const [command, file] = process.argv.slice(2);
if (command === 'registry') {
  process.stdout.write(JSON.stringify({ supported: SUPPORTED_PROTOCOLS, attributes: Object.keys(attributeProtocols()).sort() }));
} else if (command === 'cases') {
  const results = [];
  for (const item of JSON.parse(readFileSync(file, 'utf8'))) results.push(await run(item));
  process.stdout.write(JSON.stringify(results));
} else if (command === 'consent') {
  process.stdout.write(JSON.stringify(JSON.parse(readFileSync(file, 'utf8')).map((config) => consentText(fromConfig(config)))));
} else {
  console.error('usage: node tests/js_conformance_driver.mjs registry | cases FILE.json | consent FILE.json');
  process.exit(2);
}
