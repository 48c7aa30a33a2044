// Open a page in a running headless Chromium over the DevTools protocol and run steps in it.
//
//   node --experimental-websocket tests/cdp_page.mjs DEVTOOLS_PORT PAGE_URL STEPS_JSON
//
// STEPS_JSON is a list of ["wait", EXPRESSION] (until it is truthy, 60 s at most) and ["eval", EXPRESSION]
// (awaited; its value is kept).  Content-Security-Policy violations are recorded from before the page's
// first script.  Prints one JSON object: {"values": [...each eval's value], "csp": [...violated directives]}.
// Used by tests/test_serve_operations.py.

const [port, url, stepsJson] = process.argv.slice(2);
const steps = JSON.parse(stepsJson);
const TIMEOUT_MS = 60_000;

async function newTab() {
  const response = await fetch(`http://127.0.0.1:${port}/json/new?about:blank`, { method: 'PUT' });
  if (!response.ok) throw new Error(`DevTools /json/new: HTTP ${response.status}`);
  return (await response.json()).webSocketDebuggerUrl;
}

function connect(address) {
  const socket = new WebSocket(address);
  let next = 0;
  const waiting = new Map();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    if (message.id !== undefined && waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  });
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (message) => (message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result)));
      socket.send(JSON.stringify({ id, method, params }));
    });
  return new Promise((resolve, reject) => {
    socket.addEventListener('open', () => resolve({ call, close: () => socket.close() }));
    socket.addEventListener('error', () => reject(new Error(`cannot connect to ${address}`)));
  });
}

async function evaluate(page, expression) {
  const { result, exceptionDetails } = await page.call('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
  if (exceptionDetails) throw new Error(`page error: ${JSON.stringify(exceptionDetails.exception?.description ?? exceptionDetails)}`);
  return result.value;
}

const page = await connect(await newTab());
await page.call('Page.enable');
await page.call('Runtime.enable');
await page.call('Page.addScriptToEvaluateOnNewDocument', {
  source: "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective));",
});
await page.call('Page.navigate', { url });
const values = [];
for (const [kind, expression] of steps) {
  if (kind === 'eval') {
    values.push(await evaluate(page, expression));
    continue;
  }
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    let ok = false;
    try {
      ok = await evaluate(page, expression);
    } catch {
      ok = false; // the page is still loading
    }
    if (ok) break;
    if (Date.now() > deadline) {
      const body = await evaluate(page, 'document.body ? document.body.innerText.slice(0, 400) : ""').catch(() => '');
      throw new Error(`timed out waiting for ${expression}; page text: ${JSON.stringify(body)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const csp = await evaluate(page, 'window.__csp || []');
console.log(JSON.stringify({ values, csp }));
page.close();
process.exit(0);
