// The package as published: engines, repository, each protocol module its own entry point
// ('dpdist-client/<name>', one exports pattern) reaching no other protocol (so a bundler drops them), the
// registry generated from the protocol modules, and the node command's --help, --column, inline --config,
// clipping and empty input.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ATTRIBUTES, INDEX, protocolModules, renderIndex } from '../scripts/protocol-index.mjs';
import { SUPPORTED_PROTOCOLS, UnsupportedProtocolError, privatize, privatizeRecord } from '../src/index.js';
import { RecordProtocol } from '../src/records.js';
import { deterministicSource, fixture } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const PRIVATIZE = join(ROOT, 'bin', 'privatize.js');

test('engines asks for a Node with a global crypto (Node 18 has none), and the package names its repository', () => {
  assert.equal(PACKAGE.engines.node, '>=20');
  assert.equal(PACKAGE.repository.type, 'git');
  assert.equal(PACKAGE.repository.directory, 'clients/js');
  assert.ok(PACKAGE.files.includes('protocol.d.ts') && PACKAGE.files.includes('src'));
});

test('exports: the whole client, and each protocol module as dpdist-client/<name> through one pattern, shared modules (_*) not', async () => {
  assert.deepEqual(PACKAGE.exports['./*'], { types: './protocol.d.ts', default: './src/protocols/*.js' });
  assert.deepEqual(Object.keys(PACKAGE.exports).sort(), ['.', './*', './_*', './package.json']);
  for (const name of SUPPORTED_PROTOCOLS) {
    const { default: Protocol } = await import(`dpdist-client/${name}`);
    assert.equal(Protocol.protocol, name);
  }
  for (const hidden of ['dpdist-client/_base', 'dpdist-client/_index', 'dpdist-client/_attributes']) {
    await assert.rejects(import(hidden), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
  }
});

test('the registry is the protocol modules: src/protocols/_index.js and _attributes.js are what the script writes from them now', async () => {
  const texts = await renderIndex();
  assert.deepEqual(Object.keys(texts).sort(), [ATTRIBUTES, INDEX].sort());
  for (const [path, text] of Object.entries(texts)) {
    assert.equal(readFileSync(path, 'utf8'), text, `${path} is stale: run \`node clients/js/scripts/protocol-index.mjs\``);
  }
  assert.deepEqual([...SUPPORTED_PROTOCOLS], protocolModules().map((module) => module.name).sort());
  const directory = mkdtempSync(join(tmpdir(), 'dpdist-protocols-'));
  try {
    writeFileSync(join(directory, 'krr.js'), "export default class KRR extends GRR {\n  static protocol = 'grr';\n}\n");
    assert.throws(() => protocolModules(directory), /src\/protocols\/krr\.js must be the protocol 'krr'/);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

/** Every module an entry reaches through static imports (relative paths). */
function importGraph(start) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)) {
      visit(resolve(dirname(file), match[1]));
    }
  };
  visit(start);
  return [...seen].map((file) => file.slice(ROOT.length + 1)).sort();
}

const PROTOCOL_MODULE = /^src\/protocols\/[a-z0-9][a-z0-9-]*\.js$/;

test("a protocol module reaches no registry, and no other protocol's class unless it is a protocol over records", async () => {
  const main = importGraph(join(ROOT, 'src', 'index.js'));
  assert.ok(main.includes('src/registry.js') && main.includes('src/protocols/pem.js'));
  for (const name of SUPPORTED_PROTOCOLS) {
    const own = `src/protocols/${name}.js`;
    const graph = importGraph(join(ROOT, own));
    assert.ok(!graph.includes('src/registry.js') && !graph.includes('src/client.js') && !graph.includes('src/index.js'), `${name}: ${graph}`);
    const { default: Protocol } = await import(`dpdist-client/${name}`);
    if (Protocol.prototype instanceof RecordProtocol) continue; // its attributes' or groups' protocols are its parts
    assert.ok(!graph.includes('src/protocols/_index.js') && !graph.includes('src/protocols/_attributes.js'), `${name} reaches the registry`);
    // a 1-D protocol may borrow helper functions from another protocol's module (the bundler drops that module's
    // class, sideEffects: false: docs/reference/benchmarks/clients.md), never its class (the default export)
    for (const file of graph) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/^import\s+([^;]*?)\s+from\s+'(\.[^']+)'/gms)) {
        const target = resolve(dirname(join(ROOT, file)), match[2]).slice(ROOT.length + 1);
        if (!PROTOCOL_MODULE.test(target) || target === own) continue;
        assert.match(match[1], /^\{[^}]*\}$/, `${file} imports the class of ${target} (${name} must hold one protocol)`);
      }
    }
  }
});

test('each protocol module privatizes as the main entry point, and refuses another protocol naming itself', async () => {
  for (const config of fixture.configs) {
    const { default: Protocol } = await import(`dpdist-client/${config.protocol}`);
    assert.equal(Protocol.protocol, config.protocol);
    const values = [0, 1, 1];
    const record = () => config.attributes.map((a) => (a.bounds ? a.bounds[1] : a.labels ? a.labels[1] : 1));
    const input = config.attributes ? [record(), record()]
      : config.bounds
      ? [config.bounds[0], config.bounds[1], config.bounds[0]]
      : config.protocol === 'pem'
        ? (config.alphabet ? ['a', 'b', 'a'] : values)
        : config.labels ? config.labels.slice(0, 3) : values;
    const mine = Protocol.privatize(config, input, { source: deterministicSource(7) });
    const theirs = privatize(config, input, { source: deterministicSource(7) });
    assert.deepEqual(mine.bytes, theirs.bytes);
    assert.deepEqual(
      Protocol.privatizeRecord(config, input, { source: deterministicSource(8), fileId: '0'.repeat(32) }),
      privatizeRecord(config, input, { source: deterministicSource(8), fileId: '0'.repeat(32) }),
    );
    const other = config.protocol === 'grr' ? { protocol: 'oue', version: 1, epsilon: 1, domain_size: 4 } : { protocol: 'grr', version: 1, epsilon: 1, domain_size: 4 };
    assert.throws(() => Protocol.fromConfig(other), (error) => {
      assert.ok(error instanceof UnsupportedProtocolError);
      assert.match(error.message, new RegExp(`'dpdist-client/${config.protocol}' implements only ${config.protocol};`));
      return true;
    });
  }
});

function runCli(args, input) {
  const directory = mkdtempSync(join(tmpdir(), 'dpdist-cli-'));
  const out = join(directory, 'r.bin');
  const run = spawnSync(process.execPath, [PRIVATIZE, ...args, '--out', out], { input, encoding: 'utf8' });
  const written = existsSync(out) ? readFileSync(out) : null;
  rmSync(directory, { recursive: true, force: true });
  return { ...run, written };
}

test('--help describes every option the command reads', () => {
  const run = spawnSync(process.execPath, [PRIVATIZE, '--help'], { encoding: 'utf8' });
  assert.equal(run.status, 0);
  const source = readFileSync(PRIVATIZE, 'utf8');
  const read = new Set([...source.matchAll(/'(--[a-z-]+)'/g)].map((match) => match[1]));
  assert.ok(read.size >= 10, [...read].join(' '));
  for (const option of read) assert.ok(run.stdout.includes(option), `--help does not describe ${option}`);
  assert.ok(run.stdout.split('\n').length > 20);
});

test('--config takes the JSON object itself, and --column a column of a CSV on stdin', () => {
  const config = JSON.stringify({ protocol: 'grr', version: 1, epsilon: 1, labels: ['a', 'b, c', 'd'] });
  const csv = 'id,page\n1,a\n2,"b, c"\n3,\n4,"d"\n';
  const run = runCli(['--config', config, '--column', 'page'], csv);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /wrote 3 grr report\(s\).*1 missing value\(s\) skipped/);
  const missing = runCli(['--config', config, '--column', 'nope'], csv);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /no column "nope"; its columns: "id", "page"/);
  assert.equal(missing.written, null);
});

test('numbers outside the bounds are clipped and counted, or refused with --no-clip', () => {
  const config = JSON.stringify({ protocol: 'sw', version: 1, epsilon: 1, bounds: [0, 10] });
  const clipped = runCli(['--config', config], '1\n12\n-3\n5\n');
  assert.equal(clipped.status, 0, clipped.stderr);
  assert.match(clipped.stderr, /wrote 4 sw report\(s\).*2 value\(s\) outside the bounds \[0, 10\] clipped/);
  const refused = runCli(['--config', config, '--no-clip'], '1\n12\n');
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /stdin line 2: .*without --no-clip it is clipped/);
  assert.equal(refused.written, null);
});

test('empty input is refused and writes no file (it wrote an empty file and exited 0)', () => {
  const config = JSON.stringify({ protocol: 'grr', version: 1, epsilon: 1, domain_size: 4 });
  for (const input of ['', '\n\n']) {
    const run = runCli(['--config', config], input);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /stdin held no value/);
    assert.equal(run.written, null);
  }
});

test('--columns reads a record per CSV row for a multi-attribute config, by position or by attribute name', () => {
  const config = JSON.stringify({
    protocol: 'smp', version: 1, epsilon: 2,
    attributes: [{ name: 'sex', labels: ['f', 'm'] }, { name: 'age', bounds: [0, 100] }, { name: 'device', domain_size: 3 }],
  });
  const csv = 'id,s,age,d\n1,f,41.5,2\n2,m,120,0\n3,,30,1\n4,"f",-2,1\n';
  const positional = runCli(['--config', config, '--columns', 's,age,d'], csv);
  assert.equal(positional.status, 0, positional.stderr);
  assert.match(positional.stderr, /wrote 3 smp report\(s\).*1 row\(s\) with a missing cell skipped; 2 value\(s\) outside their attribute's bounds clipped/);
  const named = runCli(['--config', config, '--columns', 'device,sex,age'], 'device,sex,age\n2,m,50\n');
  assert.equal(named.status, 0, named.stderr);
  const refused = [
    [['--columns', 's,age'], /--columns must name 3 column\(s\)/],
    [['--columns', 's,age,nope'], /--columns: the CSV on stdin has no column "nope"/],
    [[], /--columns is required: protocol 'smp' takes a record of attributes sex, age, device/],
    [['--columns', 's,age,d', '--no-clip'], /stdin line 3 \(column "age"\): .*bounds \[0, 100\]/],
    [['--columns', 's,age,d', '--column', 'd'], /--column and --columns exclude each other/],
  ];
  for (const [args, message] of refused) {
    const run = runCli(['--config', config, ...args], csv);
    assert.equal(run.status, 2, args.join(' '));
    assert.match(run.stderr, message);
    assert.equal(run.written, null);
  }
  const single = runCli(['--config', JSON.stringify({ protocol: 'grr', version: 1, epsilon: 1, domain_size: 3 }), '--columns', 'd'], csv);
  assert.equal(single.status, 2);
  assert.match(single.stderr, /--columns is for records of several attributes/);
});
