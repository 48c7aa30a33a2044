#!/usr/bin/env node
// Batch randomization in Node: one value per line on stdin (a label, for a config with labels; a
// word, for a pem config with an alphabet), a dpdist binary report file out.
//
//   node clients/js/bin/privatize.js --config proto.json --out reports.bin < values.txt
//
// The file holds one record per batch of --batch-rows reports, each carrying the file's random
// file id (--file-id to re-write the same logical file), and is written to a temporary name,
// then renamed: either the whole file appears or none.  Randomness: crypto.getRandomValues.
// The reports are written in a uniformly random order, not in the order of the input lines (on
// sorted input a report's position would give its value away): all are drawn first, then
// shuffled (in memory up to 128 MiB of reports, beyond through temporary files of reports in a
// private directory next to --out, removed at the end; see row-shuffler.js).
//
// With --memo FILE (longitudinal protocols: l-grr, l-osue, loloha, dbitflippm) every line is a value
// of this one device, reported through its privacy ledger kept in FILE (the JSON of Python's
// PrivacyLedger.to_dict, so `dpdist privatize --memo` can share it; a memo of the earlier format is
// read as a ledger holding it): created on first use, charged for every line before it is randomized
// (a run past the device's budget, --budget, is refused whole), refused if the config changed a budget
// of a memo it keeps, and replaced atomically before any report is written.  Without it each line is
// a different user.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { DPDistError, Ledger, ReportBatch, encodeRecord, fromConfig, isLongitudinal, newFileId } from '../src/index.js';
import { secureSource } from '../src/random.js';
import { RowShuffler } from './row-shuffler.js';

const USAGE =
  'usage: node privatize.js --config PROTO.json --out REPORTS.bin [--batch-rows N] [--file-id HEX32] ' +
  '[--memo LEDGER.json [--budget EPSILON] [--accounting history|stable]] < values.txt';

let pendingTemporary = null; // removed on failure: no partial file is ever left
let pendingShuffler = null; // its temporary files too

function fail(message) {
  if (pendingTemporary !== null) rmSync(pendingTemporary, { force: true });
  if (pendingShuffler !== null) pendingShuffler.close();
  process.stderr.write(`privatize.js: error: ${message}\n`);
  process.exit(2);
}

function parseArguments(argv) {
  const options = { batchRows: 65536, fileId: null, memo: null, settings: {} };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '-h' || flag === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const [name, inline] = flag.includes('=') ? flag.split(/=(.*)/s) : [flag, undefined];
    if (!['--config', '--out', '--batch-rows', '--file-id', '--memo', '--budget', '--accounting'].includes(name)) {
      fail(`unknown option ${flag}; ${USAGE}`);
    }
    const value = inline ?? argv[++i];
    if (value === undefined) fail(`option ${name} needs a value`);
    if (name === '--config') options.config = value;
    else if (name === '--out') options.out = value;
    else if (name === '--memo') options.memo = value;
    else if (name === '--budget') {
      const budget = Number(value);
      if (!(budget > 0) || !Number.isFinite(budget)) fail(`option --budget must be a finite epsilon > 0, got ${JSON.stringify(value)}`);
      options.settings.budget = budget;
    } else if (name === '--accounting') {
      if (!['history', 'stable'].includes(value)) fail(`option --accounting must be history or stable, got ${JSON.stringify(value)}`);
      options.settings.accounting = value;
    }
    else if (name === '--file-id') {
      if (!/^[0-9a-f]{32}$/.test(value)) fail(`option --file-id must be 32 lower-case hex digits, got ${JSON.stringify(value)}`);
      options.fileId = value;
    } else {
      const rows = Number(value);
      if (!Number.isInteger(rows) || rows < 1) fail(`option --batch-rows must be an int >= 1, got ${JSON.stringify(value)}`);
      options.batchRows = rows;
    }
  }
  if (!options.config) fail(`option --config is required; ${USAGE}`);
  if (!options.out) fail(`option --out is required; ${USAGE}`);
  return options;
}

function loadProtocol(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    fail(`option --config: cannot read ${path} (${error.code ?? error.message})`);
  }
  try {
    return fromConfig(text);
  } catch (error) {
    if (error instanceof DPDistError) fail(`option --config: ${path}: ${error.message}`);
    throw error;
  }
}

/**
 * Write ``text`` to ``path`` atomically: a temporary file, fsynced, renamed over it. The file is
 * readable by its owner only and its directory is made if missing, as by `dpdist privatize --memo`
 * (a memo's keys are the device's true values, or their buckets).
 */
function replaceFile(path, text) {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  const descriptor = openSync(temporary, 'w', 0o600);
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  renameSync(temporary, path);
}

/** The device's privacy Ledger kept in ``path`` (created on first use), saved before any report leaves it. */
function openLedger(protocol, path, settings) {
  if (!isLongitudinal(protocol)) {
    fail(`option --memo keeps a device's permanent responses for a longitudinal protocol (l-grr, l-osue, loloha, dbitflippm); ${protocol.name} reports are not memoized`);
  }
  let state = null;
  if (existsSync(path)) {
    try {
      state = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      fail(`option --memo: ${path} is not a device memo or privacy ledger (JSON): ${error.message}`);
    }
  }
  const save = (ledger) => {
    try {
      replaceFile(path, `${JSON.stringify(ledger.toJSON())}\n`);
    } catch (error) {
      fail(`option --memo: cannot write ${path} (${error.code ?? error.message})`);
    }
  };
  try {
    return state === null ? new Ledger(settings, { onChange: save }) : Ledger.fromJSON(state, { onChange: save, settings });
  } catch (error) {
    if (error instanceof DPDistError) fail(`option --memo: ${path}: ${error.message}`);
    throw error;
  }
}

/**
 * The value on one input line: a label (protocols with labels), a word (``pem`` over an alphabet),
 * an integer item (a BigInt for ``pem``'s items of up to 62 bits) or a real number.
 */
function parseValue(protocol, line, lineNumber) {
  let value;
  if (protocol.labels) value = line; // the whole line is the label
  else if (protocol.kind === 'heavy_hitters' && protocol.symbols !== null) value = line; // the whole line is the word
  else if (protocol.kind === 'heavy_hitters') {
    const text = line.trim();
    if (!/^\d+$/.test(text)) fail(`stdin line ${lineNumber}: ${JSON.stringify(line)} is not an integer item`);
    value = BigInt(text); // exact above 2^53, where Number would round
  } else {
    const text = line.trim();
    value = text === '' ? NaN : Number(text);
    if (protocol.kind === 'frequency' ? !/^[+-]?\d+$/.test(text) : Number.isNaN(value)) {
      fail(`stdin line ${lineNumber}: ${JSON.stringify(line)} is not ${protocol.kind === 'frequency' ? 'an integer item' : 'a number'}`);
    }
  }
  try {
    protocol.checkValue(value, lineNumber - 1); // refuse a bad value before any report is drawn
    return value;
  } catch (error) {
    if (error instanceof DPDistError) fail(`stdin line ${lineNumber}: ${error.message}`);
    throw error;
  }
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const protocol = loadProtocol(options.config);
  const ledger = options.memo === null ? null : openLedger(protocol, options.memo, options.settings);
  const source = secureSource();
  const fileId = options.fileId ?? newFileId();
  const temporary = `${options.out}.${process.pid}.tmp`;
  let descriptor;
  try {
    descriptor = openSync(temporary, 'w');
    pendingTemporary = temporary;
  } catch (error) {
    fail(`option --out: cannot write ${options.out} (${error.code ?? error.message})`);
  }
  let batch = [];
  let firstLine = 1;
  let lineNumber = 0;
  let total = 0;
  let layout = null; // config, floatKeys, descr, row shape and row bytes of the reports (from the first batch)
  let shuffler = null;
  const draw = () => {
    if (batch.length === 0) return;
    try {
      const reports = ledger === null ? protocol.privatize(batch, source) : ledger.report(protocol, batch, { source });
      if (layout === null) {
        const rowBytes = reports.bytes.length / reports.length;
        layout = { config: reports.config, floatKeys: reports.floatKeys, descr: reports.descr, rowShape: reports.shape.slice(1), rowBytes };
        shuffler = new RowShuffler(rowBytes, source, { directory: dirname(resolve(options.out)) });
        pendingShuffler = shuffler;
      }
      shuffler.add(reports.bytes);
    } catch (error) {
      if (error instanceof DPDistError) {
        fail(`${ledger === null ? '' : `option --memo: ${options.memo}: `}stdin lines ${firstLine}-${lineNumber}: ${error.message}`);
      }
      throw error;
    }
    total += batch.length;
    batch = [];
    firstLine = lineNumber + 1;
  };
  /** The shuffled reports as records of --batch-rows rows. */
  const writeRecords = () => {
    const recordBytes = options.batchRows * layout.rowBytes;
    let pending = new Uint8Array(Math.min(recordBytes, total * layout.rowBytes));
    let used = 0;
    const emit = () => {
      const rows = used / layout.rowBytes;
      const records = new ReportBatch(layout.config, layout.floatKeys, layout.descr, [rows, ...layout.rowShape], pending.subarray(0, used));
      writeSync(descriptor, encodeRecord(records, { fileId }));
      used = 0;
    };
    for (const chunk of shuffler.chunks()) {
      for (let offset = 0; offset < chunk.length; ) {
        const take = Math.min(pending.length - used, chunk.length - offset);
        pending.set(chunk.subarray(offset, offset + take), used);
        used += take;
        offset += take;
        if (used === pending.length) emit();
      }
    }
    if (used > 0) emit();
    pending = null;
  };
  try {
    for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
      lineNumber += 1;
      batch.push(parseValue(protocol, line, lineNumber));
      if (batch.length === options.batchRows) draw();
    }
    draw();
    if (total > 0) writeRecords();
    shuffler?.close();
    pendingShuffler = null;
    fsyncSync(descriptor);
    closeSync(descriptor);
    renameSync(temporary, options.out);
    pendingTemporary = null;
  } finally {
    if (pendingTemporary !== null) rmSync(pendingTemporary, { force: true });
    if (pendingShuffler !== null) pendingShuffler.close();
  }
  const who =
    ledger !== null
      ? `; one device, its memo saved in ${options.memo} (epsilon left: ${ledger.remaining().toPrecision(6)} of ${ledger.budget})`
      : isLongitudinal(protocol)
        ? '; each line randomized as a different user (one device over rounds: --memo FILE)'
        : '';
  process.stderr.write(`privatize.js: wrote ${total} ${protocol.name} report(s) to ${options.out}${who}\n`);
}


main().catch((error) => fail(error.message));
