// Binary HTTP (RFC 9292) by npm's bhttp-js, an implementation dpdist did not write, for tests/ohttp/test_bhttp.py:
// reads one JSON job per line on stdin, answers one JSON line each.
//   {"decodeRequest": hex}            -> {"method", "url", "headers": [[name, value]...], "body": hex}
//   {"decodeResponse": hex}           -> {"status", "headers", "body"}
//   {"encodeRequest": {method, url, headers, body}}   -> {"hex"}
//   {"encodeResponse": {status, headers, body}}       -> {"hex"}
// argv[2]: the folder holding node_modules/bhttp-js.
import { createRequire } from 'node:module';
import readline from 'node:readline';

const require = createRequire(`${process.argv[2]}/`);
const { BHttpDecoder, BHttpEncoder } = require('bhttp-js');
const hex = (bytes) => Buffer.from(bytes).toString('hex');
const unhex = (text) => new Uint8Array(Buffer.from(text, 'hex'));
const decoder = new BHttpDecoder();
const encoder = new BHttpEncoder();

async function run(job) {
  if (job.decodeRequest !== undefined) {
    const request = decoder.decodeRequest(unhex(job.decodeRequest));
    return { method: request.method, url: request.url, headers: [...request.headers], body: hex(await request.arrayBuffer()) };
  }
  if (job.decodeResponse !== undefined) {
    const response = decoder.decodeResponse(unhex(job.decodeResponse));
    return { status: response.status, headers: [...response.headers], body: hex(await response.arrayBuffer()) };
  }
  if (job.encodeRequest !== undefined) {
    const { method, url, headers, body } = job.encodeRequest;
    const init = { method, headers };
    if (body) init.body = unhex(body);
    return { hex: hex(await encoder.encodeRequest(new Request(url, init))) };
  }
  const { status, headers, body } = job.encodeResponse;
  return { hex: hex(await encoder.encodeResponse(new Response(body ? unhex(body) : null, { status, headers }))) };
}

for await (const line of readline.createInterface({ input: process.stdin })) {
  try {
    process.stdout.write(`${JSON.stringify(await run(JSON.parse(line)))}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`);
  }
}
