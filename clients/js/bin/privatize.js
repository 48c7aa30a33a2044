#!/usr/bin/env node
// Batch randomization in Node: the values on stdin, one per line (or the column --column of a CSV on
// stdin), a dpdist binary report file out.  `node privatize.js --help` says it all; in short:
//
//   node clients/js/bin/privatize.js --config proto.json --out reports.bin < values.txt
//   node clients/js/bin/privatize.js --config '{"protocol": "sw", "epsilon": 1, "bounds": [0, 100]}' \
//       --column age --out reports.bin < people.csv
//
// The file holds one record per batch of --batch-rows reports, each carrying the file's random
// file id (--file-id to re-write the same logical file), and is written to a temporary name,
// then renamed: either the whole file appears or none.  Randomness: crypto.getRandomValues.
// The reports are written in a uniformly random order, not in the order of the input lines (on
// sorted input a report's position would give its value away): all are drawn first, then
// shuffled (in memory up to 128 MiB of reports, beyond through temporary files of reports in a
// private directory next to --out, removed at the end; see row-shuffler.js).
//
// With --columns A,B,C (configs over records: spl, smp, rsfd, rsrfd, calm, hdg) each row of a CSV on stdin is one
// user's record, a cell per attribute.
//
// With --memo FILE (longitudinal protocols: l-grr, l-osue, loloha, dbitflippm) every line is a value
// of this one device, reported through its privacy ledger kept in FILE (the JSON of Python's
// PrivacyLedger.to_dict, so `dpdist privatize --memo` can share it; a memo of the earlier format is
// read as a ledger holding it): created on first use, charged for every line before it is randomized
// (a run past the device's budget, --budget, is refused whole), refused if the config changed a budget
// of a memo it keeps, and replaced atomically before any report is written.  Without it each line is
// a different user.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { DPDistError, Ledger, ReportBatch, encodeRecord, fromConfig, isLongitudinal, newFileId } from '../src/index.js';
import { NOT_SHOWN } from '../src/refusals.js';
import { secureSource } from '../src/random.js';
import { RowShuffler } from './row-shuffler.js';

const USAGE =
  'usage: node privatize.js --config PROTO.json|JSON --out REPORTS.bin [--column NAME | --columns A,B,..] [--no-clip] [--batch-rows N] ' +
  '[--file-id HEX32] [--memo LEDGER.json [--budget EPSILON] [--accounting history|stable]] < values';

const HELP = `${USAGE}

Randomize each value read on stdin with the protocol of --config, on this machine (the OS CSPRNG,
crypto.getRandomValues), and write one report per value to --out in dpdist's binary record format,
which 'dpdist aggregate' and 'dpdist serve' read. The reports are written in a uniformly random order,
never in the order of the input.

Input (stdin):
  one value per line: an integer item 0..d-1 (frequency protocols), a label (configs with "labels"),
  a number (sw, gw), a word (pem with an "alphabet") or an integer item (pem with "bits");
  with --column, a CSV whose first line names the columns: the values are the cells of that column;
  with --columns (records: spl, smp, rsfd, rsrfd, calm, hdg), such a CSV: each row is one user's record, a cell per attribute.
  Empty lines and cells are missing values: skipped and counted (a row with one missing cell too).

Options:
  --config PROTO.json|JSON  the protocol config as Python's proto.config() writes it (or its client view,
                            proto.client_view(): checked against this client's own constants): a JSON
                            file, or the JSON object itself (e.g. '{"protocol": "grr", "epsilon": 1, "domain_size": 8}')
  --out REPORTS.bin         the report file to write (written to a temporary name, then renamed)
  --column NAME             stdin is a CSV (comma-separated, RFC 4180 quotes); randomize the column NAME
  --columns A,B,..          multi-attribute configs: stdin is a CSV; the column of each attribute of the
                            config's schema, in its order (or the attributes' own names, in any order)
  --clip / --no-clip        numbers outside a numerical protocol's bounds are clipped to the nearest bound
                            (wrapped around the circle by opm-circular, alone or as an attribute) and
                            counted (the default, as 'dpdist privatize'); --no-clip refuses them
  --batch-rows N            reports per record (default 65536)
  --file-id HEX32           the file id (32 lower-case hex digits; default: a fresh random one)
  --memo LEDGER.json        longitudinal protocols (l-grr, l-osue, loloha, dbitflippm): every value is one
                            device's, reported through its memo and privacy ledger kept in this file
  --budget EPSILON          with --memo: the device's total privacy budget (default 10)
  --accounting MODE         with --memo: history (default) or stable
  -h, --help                this help

Exit status: 0 when the file was written, 2 on bad input (nothing is written).
`;

let pendingTemporary = null; // removed on failure: no partial file is ever left
let pendingShuffler = null; // its temporary files too

function fail(message) {
  if (pendingTemporary !== null) rmSync(pendingTemporary, { force: true });
  if (pendingShuffler !== null) pendingShuffler.close();
  process.stderr.write(`privatize.js: error: ${message}\n`);
  process.exit(2);
}

function parseArguments(argv) {
  const options = { batchRows: 65536, fileId: null, memo: null, column: null, columns: null, clip: true, settings: {} };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '-h' || flag === '--help') {
      process.stdout.write(HELP);
      process.exit(0);
    }
    if (flag === '--clip' || flag === '--no-clip') {
      options.clip = flag === '--clip';
      continue;
    }
    const [name, inline] = flag.includes('=') ? flag.split(/=(.*)/s) : [flag, undefined];
    if (!['--config', '--out', '--column', '--columns', '--batch-rows', '--file-id', '--memo', '--budget', '--accounting'].includes(name)) {
      fail(`unknown option ${flag}; ${USAGE} (--help for more)`);
    }
    const value = inline ?? argv[++i];
    if (value === undefined) fail(`option ${name} needs a value`);
    if (name === '--config') options.config = value;
    else if (name === '--out') options.out = value;
    else if (name === '--column') options.column = value;
    else if (name === '--columns') options.columns = value.split(',').map((column) => column.trim());
    else if (name === '--memo') options.memo = value;
    else if (name === '--budget') {
      // a decimal number, as Python's float() reads it (Number() also read 0x10 as 16 and 0b11 as 3)
      const budget = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/u.test(value) ? Number(value) : NaN;
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
  if (!options.config) fail(`option --config is required; ${USAGE} (--help for more)`);
  if (!options.out) fail(`option --out is required; ${USAGE} (--help for more)`);
  if (options.memo === null && Object.keys(options.settings).length > 0) {
    // settings of the device's ledger, which only --memo keeps (they were accepted and ignored)
    fail('options --budget and --accounting need --memo LEDGER.json: they are settings of the ledger it keeps');
  }
  if (options.column !== null && options.columns !== null) fail('options --column and --columns exclude each other (--columns: records of several attributes)');
  if (options.columns !== null && (options.columns.some((column) => column === '') || new Set(options.columns).size !== options.columns.length)) {
    fail(`option --columns must name distinct non-empty columns, got ${JSON.stringify(options.columns.join(','))}`);
  }
  return options;
}

/** The protocol of --config: a JSON file, or the JSON object itself (text starting with '{'). */
function loadProtocol(config) {
  const inline = config.trimStart().startsWith('{');
  let text = config;
  if (!inline) {
    try {
      text = readFileSync(config, 'utf8');
    } catch (error) {
      fail(`option --config: cannot read ${config} (${error.code ?? error.message}); give a JSON file or the JSON object itself`);
    }
  }
  let protocol;
  try {
    protocol = fromConfig(text);
  } catch (error) {
    if (error instanceof DPDistError) fail(`option --config${inline ? '' : `: ${config}`}: ${error.message}`);
    throw error;
  }
  return protocol;
}

/**
 * The cells of one CSV line (RFC 4180: fields in double quotes may hold commas, newlines and
 * doubled quotes), or null while a quoted field is still open (the record goes on, next line).
 */
function csvCells(text) {
  const cells = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"' && cell === '') quoted = true;
    else if (char === ',') {
      cells.push(cell);
      cell = '';
    } else cell += char;
  }
  if (quoted) return null;
  cells.push(cell);
  return cells;
}

/**
 * The values of the input, with the input line each starts on: every non-empty line, or with
 * ``columns`` the cells of those columns of a CSV (its first record names the columns), one array
 * per row. Empty ones (a row with an empty cell) are counted in ``counts.missing``.
 */
async function* inputValues(lines, columns, counts) {
  let lineNumber = 0;
  if (columns === null) {
    for await (const line of lines) {
      lineNumber += 1;
      if (line === '') counts.missing += 1;
      else yield [line, lineNumber];
    }
    return;
  }
  let index = null;
  let pending = null;
  let start = 0;
  for await (const line of lines) {
    lineNumber += 1;
    pending = pending === null ? line : `${pending}\n${line}`;
    if (pending === line) start = lineNumber;
    const cells = csvCells(pending);
    if (cells === null) continue; // a quoted field goes on to the next line
    pending = null;
    if (index === null) {
      index = columns.map((column) => cells.indexOf(column));
      const absent = columns.filter((_, at) => index[at] < 0);
      if (absent.length) {
        fail(`option ${OPTION}: the CSV on stdin has no column ${absent.map((c) => JSON.stringify(c)).join(', ')}; its columns: ${cells.map((c) => JSON.stringify(c)).join(', ')}`);
      }
      continue;
    }
    const row = index.map((at) => cells[at] ?? '');
    if (row.some((cell) => cell === '')) counts.missing += 1;
    else yield [row, start];
  }
  if (pending !== null) fail(`stdin line ${start}: a quoted CSV field is not closed`);
  if (index === null) fail(`option ${OPTION}: stdin is empty (no CSV header)`);
}

/**
 * Write ``text`` to ``given`` atomically (the file it names: realFile): a temporary file, fsynced, renamed over it. The file is
 * readable by its owner only and its directory is made if missing, as by `dpdist privatize --memo`
 * (a memo's keys are the device's true values, or their buckets).
 */
function replaceFile(given, text) {
  const path = realFile(given, '--memo'); // again: a link made since the ledger was read is followed too
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

/**
 * The file ``path`` names, its symbolic links followed (to a file that may not exist yet), as Python's
 * dpdist._io._atomic.real_path: the ledger is replaced whole by a rename, which through a link would put a new file
 * in the link's place and fork the device's budget in two (each name its own ledger).  A file with more than one hard
 * link is refused: no name of it can be followed.
 */
function realFile(path, option) {
  let real;
  try {
    real = realpathSync(path);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
    let target = null;
    try {
      target = readlinkSync(path); // a link to a file not made yet: the file it names
    } catch {
      return resolve(path);
    }
    return realFile(resolve(dirname(path), target), option);
  }
  const links = statSync(real).nlink;
  if (links > 1 && statSync(real).isFile()) {
    fail(`option ${option}: ${real}${real === resolve(path) ? '' : ` (named ${path})`} has ${links} hard links: the ledger ` +
      'is replaced whole on every write, which would leave its other names holding the old content, a second budget of ' +
      'its own; keep one name for it (copy it, or make the other names symbolic links, which are followed)');
  }
  return real;
}

/** The device's privacy Ledger kept in ``path`` (created on first use), saved before any report leaves it. */
function openLedger(protocol, given, settings) {
  const path = realFile(given, '--memo');
  if (!isLongitudinal(protocol)) {
    fail(`option --memo keeps a device's permanent responses for a longitudinal protocol (l-grr, l-osue, loloha, dbitflippm); ${protocol.name} reports are not memoized`);
  }
  let state = null;
  if (existsSync(path)) {
    try {
      state = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      // (not JSON.parse's message: V8 quotes the text, a memo keyed by the device's past values)
      fail(`option --memo: ${path} is not a device memo or privacy ledger (not valid JSON)`);
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
function parseValue(protocol, line, lineNumber, options, counts, column = options.column) {
  let value;
  const where = column === null ? `stdin line ${lineNumber}` : `stdin line ${lineNumber} (column ${JSON.stringify(column)})`;
  if (protocol.labels) value = line; // the whole line is the label
  else if (protocol.kind === 'heavy_hitters' && protocol.symbols !== null) value = line; // the whole line is the word
  else if (protocol.kind === 'heavy_hitters') {
    const text = line.trim();
    if (!/^\d+$/.test(text)) fail(`${where}: not an integer item (${NOT_SHOWN})`);
    value = BigInt(text); // exact above 2^53, where Number would round
  } else {
    const text = line.trim();
    // Python's spellings of an infinity too ('inf', '-Infinity', any case), as `dpdist privatize` reads them
    value = text === '' ? NaN : /^[+-]?inf(inity)?$/i.test(text) ? (text.startsWith('-') ? -Infinity : Infinity) : Number(text);
    if (protocol.kind === 'frequency' ? !/^[+-]?\d+$/.test(text) : Number.isNaN(value)) {
      fail(`${where}: not ${protocol.kind === 'frequency' ? 'an integer item' : 'a number'} (${NOT_SHOWN})`);
    }
    if (protocol.kind === 'numerical') {
      // clipped to the nearest bound, as Python's clip=True, or wrapped around the circle by opm-circular (a value
      // alone or a record's attribute, as Python's); counted here, never sent (--no-clip refuses it)
      const [lo, hi] = protocol.params.bounds;
      if (value < lo || value > hi) {
        if (!options.clip) fail(`${where}: outside the bounds [${lo}, ${hi}] (${NOT_SHOWN}; without --no-clip it is ${movedHow(protocol)})`);
        if (wraps(protocol)) counts.wrapped += 1; // the protocol's checkValue wraps it
        else {
          counts.clipped += 1;
          value = value < lo ? lo : hi;
        }
      }
    }
  }
  try {
    protocol.checkValue(value, lineNumber - 1); // refuse a bad value before any report is drawn
    return value;
  } catch (error) {
    if (error instanceof DPDistError) {
      const hint = protocol.kind === 'numerical' && !options.clip ? ` (without --no-clip it is ${movedHow(protocol)})` : '';
      fail(`${where}: ${error.message}${hint}`);
    }
    throw error;
  }
}

/** Whether ``protocol`` (a value's, or a record attribute's) wraps a value outside its bounds around the circle. */
function wraps(protocol) {
  return protocol.name === 'opm-circular';
}

/** What becomes of a value outside the bounds of ``protocol`` (without --no-clip). */
function movedHow(protocol) {
  return wraps(protocol) ? 'wrapped around the circle' : 'clipped to the nearest bound';
}

/** Which CSV column holds each attribute of a multi-attribute ``protocol`` (``--columns``, as `dpdist privatize --columns`). */
function recordColumns(protocol, columns) {
  if (protocol.kind !== 'multi') {
    if (columns !== null) fail(`option --columns is for records of several attributes (spl, smp, rsfd, rsrfd, calm, hdg); ${protocol.name} takes one value: use --column`);
    return null;
  }
  const names = protocol.attributes.map((attribute) => attribute.name);
  if (columns === null) {
    fail(`option --columns is required: protocol '${protocol.name}' takes a record of attributes ${names.join(', ')} per user (a CSV on stdin)`);
  }
  if (columns.length === names.length && columns.every((column) => names.includes(column))) {
    return names; // the attributes' own names, in any order
  }
  if (columns.length !== names.length) {
    fail(`option --columns must name ${names.length} column(s), one per attribute of the schema (${names.join(', ')}); got ${columns.length}`);
  }
  return columns;
}

/** One user's record from the cells of its row (one per attribute, in the schema's order). */
function parseRecord(protocol, cells, lineNumber, options, counts, columns) {
  return cells.map((cell, at) => parseValue(protocol.checkers[at], cell, lineNumber, options, counts, columns[at]));
}

let OPTION = '--column';

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const protocol = loadProtocol(options.config);
  const columns = recordColumns(protocol, options.columns);
  if (columns !== null) OPTION = '--columns';
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
  const counts = { missing: 0, clipped: 0, wrapped: 0 };
  try {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    const wanted = columns ?? (options.column === null ? null : [options.column]);
    for await (const [text, number] of inputValues(lines, wanted, counts)) {
      lineNumber = number;
      if (columns !== null) batch.push(parseRecord(protocol, text, number, options, counts, columns));
      else batch.push(parseValue(protocol, options.column === null ? text : text[0], number, options, counts));
      if (batch.length === options.batchRows) draw();
    }
    draw();
    if (total === 0) {
      fail(`stdin held no value${counts.missing ? ` (${counts.missing} empty line(s) or cell(s))` : ''}; nothing was written to ${options.out}`);
    }
    writeRecords();
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
  const missing = counts.missing ? `; ${counts.missing} ${columns === null ? 'missing value(s)' : 'row(s) with a missing cell'} skipped` : '';
  const [lo, hi] = protocol.params.bounds ?? [];
  const multi = protocol.kind === 'multi'; // per kind of attribute, as `dpdist privatize --columns` words it
  const moved = (count, outside, how) => (count ? `; ${count} value(s) ${outside} ${how} (counted here, never sent; --no-clip refuses them)` : '');
  const clipped =
    moved(counts.clipped, multi ? "outside their attribute's bounds" : `outside the bounds [${lo}, ${hi}]`, 'clipped to the nearest bound') +
    moved(counts.wrapped, multi ? "outside their circular attribute's bounds" : `outside the bounds [${lo}, ${hi}]`, 'wrapped around the circle');
  process.stderr.write(`privatize.js: wrote ${total} ${protocol.name} report(s) to ${options.out}${missing}${clipped}${who}\n`);
}


main().catch((error) => fail(error.message));
