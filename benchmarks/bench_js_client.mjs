// Reports per second of the JavaScript client in Node, per protocol (d = 1024 where it applies),
// with the CSPRNG source (crypto.getRandomValues), and the client's size.
//
//   node benchmarks/bench_js_client.mjs            # prints a Markdown table
//
// Each protocol privatizes batches of random items / values for at least one second after a
// warm-up; the median of three such runs is reported.
//
//   node benchmarks/bench_js_client.mjs --cpu '[config, ...]' SECONDS RUNS WARMUP
//   node benchmarks/bench_js_client.mjs --cpu @cases.json SECONDS RUNS WARMUP
//
// prints instead one JSON line per config, its reports per CPU-second of the process (user + system: the JIT and
// the garbage collector count) over RUNS runs of at least SECONDS of CPU each, after a warm-up of WARMUP CPU-seconds of
// every config: what benchmarks/bench_java_client.py compares the Java client with.  The cases file holds
// [{"config": ..., "values": [...]}, ...], the values each config privatizes (bench_java_client.py writes the same
// for both clients); a bare config privatizes items, or values spread over [0, 1].

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fromConfig, privatize } from '../clients/js/src/index.js';

const CASES = [
  { protocol: 'grr', epsilon: 1.0, domain_size: 1024 },
  { protocol: 'oue', epsilon: 1.0, domain_size: 1024 },
  { protocol: 'sue', epsilon: 1.0, domain_size: 1024 },
  { protocol: 'olh', epsilon: 1.0, domain_size: 1024 },
  { protocol: 'hr', epsilon: 1.0, domain_size: 1024 },
  { protocol: 'ss', epsilon: 1.0, domain_size: 1024 },
  { protocol: 'sw', epsilon: 1.0, bins: 1024 },
  { protocol: 'sw', epsilon: 1.0, bins: 1024, discrete: true },
  { protocol: 'gw', epsilon: 1.0, bins: 1024 },
];
const BATCH = 1000;

function rate(protocol) {
  const values =
    protocol.kind === 'frequency'
      ? Array.from({ length: BATCH }, (_, i) => (i * 7919) % protocol.config.domain_size)
      : Array.from({ length: BATCH }, (_, i) => (i + 0.5) / BATCH);
  let reports = 0;
  const start = performance.now();
  while (performance.now() - start < 1000) {
    privatize(protocol, values);
    reports += BATCH;
  }
  return (reports * 1000) / (performance.now() - start);
}

function sourceBytes(directory) {
  let raw = 0;
  const texts = [];
  for (const name of readdirSync(directory, { recursive: true })) {
    const path = join(directory, name);
    if (name.endsWith('.js') && statSync(path).isFile()) {
      const text = readFileSync(path);
      raw += text.length;
      texts.push(text);
    }
  }
  return { raw, gzip: gzipSync(Buffer.concat(texts), { level: 9 }).length };
}

/** Reports per CPU-second of the process: privatize in batches for at least ``seconds`` of CPU. */
function cpuRate(protocol, values, seconds) {
  const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1e6; };
  let reports = 0;
  const start = cpu();
  while (cpu() - start < seconds) {
    privatize(protocol, values);
    reports += BATCH;
  }
  return reports / (cpu() - start);
}

if (process.argv[2] === '--cpu') {
  const argument = process.argv[3];
  const text = argument.startsWith('@') ? readFileSync(argument.slice(1), 'utf8') : argument;
  const [configs, seconds, runs, warmup] = [JSON.parse(text), Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6])];
  const cases = configs.map((entry) => {
    const given = entry.values;
    const config = given ? entry.config : entry;
    const protocol = fromConfig(config);
    const values = given ?? (protocol.kind === 'frequency'
      ? Array.from({ length: BATCH }, (_, i) => (i * 7919) % protocol.config.domain_size)
      : Array.from({ length: BATCH }, (_, i) => (i + 0.5) / BATCH));
    cpuRate(protocol, values, warmup); // warm-up (JIT) of every config before any is measured
    return { config, protocol, values };
  });
  for (const { config, protocol, values } of cases) {
    const rates = Array.from({ length: runs }, () => cpuRate(protocol, values, seconds));
    console.log(JSON.stringify({ config, rates }));
  }
  process.exit(0);
}

console.log(`node ${process.version}, ${process.arch}`);
console.log('| protocol | config | reports/s | us per report |');
console.log('|---|---|---:|---:|');
for (const config of CASES) {
  const protocol = fromConfig(config);
  rate(protocol); // warm-up (JIT)
  const runs = [rate(protocol), rate(protocol), rate(protocol)].sort((a, b) => a - b);
  const median = runs[1];
  const { protocol: name, ...params } = config;
  console.log(`| ${name} | ${JSON.stringify(params)} | ${Math.round(median).toLocaleString('en')} | ${(1e6 / median).toFixed(2)} |`);
}
const size = sourceBytes(new URL('../clients/js/src/', import.meta.url).pathname);
console.log(`\nclient source (clients/js/src, all .js): ${size.raw} bytes, ${size.gzip} bytes gzip -9 (concatenated)`);
