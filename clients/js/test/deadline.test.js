// A server that trickles its answer ends an attempt as a network error does: the client set no timeout,
// and undici's are between chunks, so one byte every few seconds kept a batch waiting for ever.  The fake server on
// 127.0.0.1 trickles for at most 20 s per answer (then ends it).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { Client, ServiceError } from '../src/index.js';
import { deterministicSource } from './helpers.js';

const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };

test('a trickled answer ends the attempt, the batch is resent until the window ends and kept', async () => {
  const puts = [];
  const timers = new Set();
  const server = createServer((request, response) => {
    if (request.method === 'GET') {
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ campaign: 'c1', state: 'open', config: CONFIG }));
      return;
    }
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      puts.push(`${request.url} ${Buffer.concat(chunks).toString('hex')}`);
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100000' });
      const started = Date.now();
      const timer = setInterval(() => {
        if (Date.now() - started > 20000 || response.destroyed) {
          clearInterval(timer);
          timers.delete(timer);
          response.destroy();
          return;
        }
        response.write(' ');
      }, 100);
      timers.add(timer);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${server.address().port}`;
    const client = new Client(url, 'c1', { timeoutMs: 500, retryWindowMs: 1000, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(64) });
    const error = await client.submitMany([1, 2, 3]).then(() => null, (failure) => failure);
    assert.ok(error instanceof ServiceError, String(error));
    assert.match(error.message, /timeout/i); // the deadline ended it, not the server's end after 20 s
    assert.ok(puts.length >= 2, `${puts.length} attempt(s)`);
    assert.equal(new Set(puts).size, 1); // the same id and bytes
    assert.equal(client.unsentReports, 3);
    assert.throws(() => new Client(url, 'c1', { memoStorage: null, timeoutMs: 0 }), /'timeoutMs' option/);
  } finally {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
