// What a hostile or broken server answers reaches the device's code only as the Python client shows it: a
// refusal's code and detail escaped, cut and masked; a redirect refused at once, naming where it pointed, never
// followed; a body read up to MAX_ANSWER_BYTES once decoded, streamed, so a small gzip answer cannot fill the memory.
// Servers on 127.0.0.1, each answer ended by the server (no timed assertion).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Client, InvalidParameterError, ServiceError } from '../src/index.js';
import { ACK_ANSWER_BYTES, MAX_ANSWER_BYTES, mostValuesWithin, valuesUpperBound } from '../src/answer.js';
import { identityOf } from '../src/identity.js';
import { deterministicSource, fixture } from './helpers.js';

const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };
const TOKEN = 'SUBMITSECRET123456';

/** A server answering GET /config with the campaign and everything else with ``answer(request, response)``. */
async function serving(answer, { config = null } = {}) {
  const seen = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    request.resume();
    request.on('end', () => {
      if (request.method === 'GET' && config === null) {
        response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ campaign: 'c1', state: 'open', config: CONFIG }));
      } else {
        answer(request, response);
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${server.address().port}`, seen, close };
}

const client = (url) => new Client(url, 'c1', { token: TOKEN, timeoutMs: 20000, retryWindowMs: 0, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(67) });
const failure = (promise) => promise.then((value) => assert.fail(`resolved ${JSON.stringify(value)}`), (error) => error);

test('a refusal echoing the submit token and ESC/BEL sequences is shown escaped, cut, the token masked', async () => {
  const server = await serving((request, response) => {
    response.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify({
      error: 'campaign_closed', detail: `\u001b[2J\u001b[31mred\nline2 ${request.headers.authorization} and bare ${TOKEN} ${'z'.repeat(3000)}`,
    }));
  });
  try {
    const error = await failure(client(server.url).submit(1));
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.status, 403);
    assert.equal(error.code, 'campaign_closed');
    assert.ok(!error.message.includes(TOKEN), error.message);
    assert.ok(error.message.includes('HTTP 403 campaign_closed: \\x1b[2J\\x1b[31mred\\nline2 Bearer *** and bare ***'), error.message);
    assert.doesNotMatch(error.message, /[\u0000-\u001f\u007f]/u);
    assert.ok(error.message.length < 2300 && error.message.endsWith('...'), String(error.message.length)); // cut
  } finally {
    await server.close();
  }
});

test('any other refusal is shown by its status, host and size only', async () => {
  for (const [body, reason] of [[JSON.stringify({ error: 'x\u001b]0;PWNED\u0007', detail: 'Bearer theirs' }), 'Forbidden'],
    ['<h1>no</h1>', 'Bearer\u00a0SECRETVALUE'], ['', 'token=SECRET\u00a0TAIL4']]) {
    const server = await serving((request, response) => response.writeHead(403, reason, { 'Content-Type': 'text/plain' }).end(body));
    try {
      const error = await failure(client(server.url).submit(1));
      assert.ok(error instanceof ServiceError, String(error));
      const bytes = Buffer.byteLength(body);
      assert.ok(error.message.includes(`: status 403 from ${server.url.slice(7)} (not a dpdist answer, ${bytes} bytes)`), error.message);
      assert.ok(!/PWNED|SECRET|theirs/u.test(error.message) && error.code === null, error.message);
    } finally {
      await server.close();
    }
  }
});

test('a redirect of a batch is refused at once, naming the status and where it pointed, and not followed', async () => {
  const elsewhere = await serving((request, response) => response.writeHead(200).end('{}'), { config: 'none' });
  for (const status of [302, 307]) {
    const server = await serving((request, response) => response.writeHead(status, { Location: `http://u:pw@${elsewhere.url.slice(7)}/steal?token=${TOKEN}` }).end());
    try {
      const error = await failure(client(server.url).submit(1));
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.status, status);
      assert.equal(error.code, 'redirected');
      assert.ok(error.message.includes(`HTTP ${status}: a redirect to "http://u:pw@${elsewhere.url.slice(7)}/steal?token=***"`), error.message);
      assert.equal(server.seen.filter((line) => line.startsWith('PUT')).length, 1); // not retried
    } finally {
      await server.close();
    }
  }
  assert.deepEqual(elsewhere.seen, []); // nothing was sent where it pointed
  await elsewhere.close();
});

test("a redirect of a campaign's config is refused, not followed to another origin or the same one", async () => {
  const elsewhere = await serving((request, response) => response.writeHead(404).end(), { config: 'none' });
  for (const location of [`${elsewhere.url}/cfg`, '/api/campaigns/c1/config2']) {
    const server = await serving((request, response) => response.writeHead(302, { Location: location }).end(), { config: 'none' });
    try {
      const error = await failure(client(server.url).campaign());
      assert.ok(error instanceof ServiceError && error.code === 'redirected', String(error));
      assert.ok(error.message.startsWith('GET /config: HTTP 302: a redirect to'), error.message);
      assert.deepEqual(server.seen, ['GET /api/campaigns/c1/config']);
    } finally {
      await server.close();
    }
  }
  assert.deepEqual(elsewhere.seen, []);
  await elsewhere.close();
});

test('a gzip answer that unpacks past MAX_ANSWER_BYTES is refused, not read whole and not retried', async () => {
  const bomb = gzipSync(Buffer.alloc(MAX_ANSWER_BYTES + (4 << 20)));
  const gzipped = (request, response) => response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }).end(bomb);
  for (const config of [null, 'bomb']) {
    const server = await serving(gzipped, { config });
    try {
      const mine = new Client(server.url, 'c1', { token: TOKEN, timeoutMs: 20000, retryWindowMs: 60000, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(68) });
      const error = await failure(config === null ? mine.submit(1) : mine.campaign());
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.code, 'answer_too_large');
      assert.equal(error.status, 200);
      assert.ok(error.message.includes(`more than ${config === null ? 1 : 4} MiB once decoded`), error.message); // an ack: 1 MiB, a config 4 MiB
      assert.equal(server.seen.length, config === null ? 2 : 1); // (the config, then) one attempt: not retried
    } finally {
      await server.close();
    }
  }
});

// a bound on bytes is no bound on what parsing them holds.  ``{"campaign":[{},{},...]}`` of 16 MiB (16 KB of
// gzip) held ~570 MB in JSON.parse: JSON that may hold more values than the bound allows is refused unparsed.

/** ``{...fields, "pad": [{},{},...]}``: ``bytes`` long (about), ~bytes/3 empty objects. */
const padded = (fields, bytes) => {
  const head = JSON.stringify(fields).slice(0, -1);
  return `${head},"pad":[${'{},'.repeat(Math.floor((bytes - head.length - 12) / 3))}{}]}`;
};

test("the answers' bounds are the Python client's (fixtures/python.json: ACK_ANSWER_BYTES, most_values_within, values_upper_bound)", () => {
  assert.equal(ACK_ANSWER_BYTES, fixture.answers.ack_bytes);
  for (const [limit, values, containers] of fixture.answers.within) assert.deepEqual(mostValuesWithin(limit), [values, containers], String(limit));
  for (const [text, containers, values] of fixture.answers.counts) assert.deepEqual(valuesUpperBound(new TextEncoder().encode(text)), [containers, values], text);
});

test('an acknowledgement of JSON with more values than 1 MiB allows is no acknowledgement: retried, not parsed', async () => {
  const server = await serving((request, response) => {
    const batchId = request.url.split('/').pop();
    response.writeHead(200, { 'Content-Type': 'application/json' })
      .end(padded({ batch_id: batchId, campaign: 'c1', accepted: 1, n_read: 1, rejected: {}, duplicate: false }, ACK_ANSWER_BYTES - 100));
  });
  try {
    const mine = new Client(server.url, 'c1', { token: TOKEN, timeoutMs: 20000, retryWindowMs: 60000, retries: 1, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(69) });
    const error = await failure(mine.submit(1));
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, 'wrong_ack');
    assert.ok(error.message.includes('no acknowledgement: HTTP 200 with JSON of more than 131072 arrays and objects (not parsed)'), error.message);
    assert.equal(server.seen.filter((line) => line.startsWith('PUT')).length, 2); // retried, the same batch
  } finally {
    await server.close();
  }
});

test('an acknowledgement or a refusal past 1 MiB is not read further: answer_too_large', async () => {
  const big = padded({ error: 'forbidden', detail: 'no' }, 2 << 20);
  for (const status of [200, 403]) {
    const server = await serving((request, response) => response.writeHead(status, { 'Content-Type': 'application/json' }).end(big));
    try {
      const error = await failure(client(server.url).submit(1));
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.code, 'answer_too_large');
      assert.ok(error.message.includes('more than 1 MiB once decoded'), error.message);
    } finally {
      await server.close();
    }
  }
});

test("a refusal of JSON with more values than 1 MiB allows is not parsed: its code is not taken", async () => {
  const server = await serving((request, response) => response.writeHead(403, { 'Content-Type': 'application/json' })
    .end(padded({ error: 'forbidden', detail: 'no' }, ACK_ANSWER_BYTES - 100)));
  try {
    const error = await failure(client(server.url).submit(1));
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.status, 403);
    assert.equal(error.code, null);
  } finally {
    await server.close();
  }
});

test("a config of 4 MiB of empty objects (4 KB of gzip) is refused unparsed: unexpected_answer", async () => {
  const hostile = gzipSync(Buffer.from(padded({ campaign: 'c1', state: 'open', config: CONFIG }, MAX_ANSWER_BYTES - 100)));
  const server = await serving((request, response) => response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }).end(hostile), { config: 'hostile' });
  try {
    const error = await failure(client(server.url).campaign());
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, 'unexpected_answer');
    assert.ok(error.message.includes('GET /config: HTTP 200 with JSON of more than 524288 arrays and objects within 4194304 bytes'), error.message);
    assert.equal(server.seen.length, 1); // not retried
  } finally {
    await server.close();
  }
});

test('an identity of JSON with more values than 4 MiB allows is refused unparsed, its pin matching or not', async () => {
  const bytes = new TextEncoder().encode(padded({ campaign: 'c1', config: CONFIG, relay: {}, issuer: null }, 4 << 20));
  const digest = Buffer.from(await globalThis.crypto.subtle.digest('SHA-256', bytes)).toString('hex');
  const error = await failure(identityOf(bytes, 'c1', { configPin: digest }));
  assert.ok(error instanceof ServiceError, String(error));
  assert.equal(error.code, 'unexpected_answer');
  assert.ok(error.message.includes('JSON of more than 524288 arrays and objects'), error.message);
});

test("a config or identity is read up to Python's CONFIG_ANSWER_BYTES (4 MiB; 16 MiB held 557 MB)", () => {
  assert.equal(MAX_ANSWER_BYTES, fixture.answers.config_bytes);
  assert.deepEqual(mostValuesWithin(MAX_ANSWER_BYTES), [524288, 524288]);
});

test('a config answer just past 4 MiB is refused unread (answer_too_large), one within is read', async () => {
  const most = fixture.answers.config_bytes; // Python's CONFIG_ANSWER_BYTES
  for (const [bytes, code] of [[most + 1, 'answer_too_large'], [most, null]]) {
    const body = JSON.stringify({ campaign: 'c1', state: 'open', config: CONFIG, pad: '' });
    const text = body.slice(0, -2) + 'x'.repeat(bytes - body.length) + '"}';
    const server = await serving((request, response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end(text), { config: 'big' });
    try {
      const outcome = await client(server.url).campaign().then(() => null, (error) => error.code);
      assert.equal(outcome, code, String(bytes));
    } finally {
      await server.close();
    }
  }
});

test('a server URL with a password or a query is refused by name, the password not shown', () => {
  for (const url of ['http://u:JSPW12@127.0.0.1:9', 'http://u%3AJSPW12@127.0.0.1:9', 'http://127.0.0.1:9/?token=JSPW12', 'http://127.0.0.1:9/#x']) {
    assert.throws(() => new Client(url, 'c1', { memoStorage: null, locks: null }), (error) => {
      assert.ok(error instanceof InvalidParameterError, String(error));
      assert.ok(error.message.startsWith("The 'serverUrl' argument of Client must be the service's URL, without"), error.message);
      assert.ok(!error.message.includes('JSPW12'), error.message);
      return true;
    });
  }
  // a fullwidth or small @ (which NFKC reads as @): the URL does not parse, and its userinfo is not shown either
  for (const url of ['http://u:JSPW12\uff20127.0.0.1:9', 'http://u\uff1aJSPW12\ufe6b127.0.0.1:9/', 'http://u%3AJSPW12\uff20h/']) {
    assert.throws(() => new Client(url, 'c1', { memoStorage: null, locks: null }), (error) => {
      assert.ok(error instanceof InvalidParameterError && error.message.includes('Got "http://***@'), error.message);
      assert.ok(!error.message.includes('JSPW12'), error.message);
      return true;
    });
  }
  assert.equal(new Client('', 'c1', { memoStorage: null, locks: null }).serverUrl, ''); // the page's origin
});

test('a server URL that is not http(s) with a host is refused at once, as Python and Java refuse it', () => {
  // 'htp:/oops' was taken, and every request retried in silence for the whole retry window (five minutes)
  let fetched = 0;
  const fetch = async () => {
    fetched += 1;
    throw new TypeError('fetch failed');
  };
  for (const url of ['htp:/oops', 'http:/oops', 'http:oops', 'oops', '/api', '//h/x', 'ftp://h', 'http://exa mple.com', 'http://h:99999', 'http://[::1', 'http://']) {
    assert.throws(() => new Client(url, 'c1', { memoStorage: null, locks: null, fetch }), (error) => {
      assert.ok(error instanceof InvalidParameterError, String(error));
      assert.ok(error.message.startsWith("The 'serverUrl' argument of Client must be the service's URL, an http:// or https:// URL with a host"), error.message);
      return true;
    }, url);
  }
  assert.equal(fetched, 0);
  for (const url of ['http://127.0.0.1:9', 'HTTPS://collector.example.org/base/', 'http://[::1]:8000']) new Client(url, 'c1', { memoStorage: null, locks: null, fetch });
});
