// A minimal DevTools-protocol client for a running headless Chromium (Node >= 20 with
// --experimental-websocket): open a page, evaluate expressions in it, wait for conditions.
// Used by tests/participate_driver.mjs and tests/participate_kept_driver.mjs.

export const TIMEOUT_MS = 60_000;

/** Open ``url`` in a new tab of the Chromium listening on DevTools ``port``; its WebSocket address. */
export async function openPage(port, url) {
  const response = await fetch(`http://127.0.0.1:${port}/json/new?${encodeURI(url)}`, { method: 'PUT' });
  if (!response.ok) throw new Error(`DevTools /json/new: HTTP ${response.status}`);
  return (await response.json()).webSocketDebuggerUrl;
}

export function connect(address) {
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

export async function evaluate(page, expression) {
  const { result, exceptionDetails } = await page.call('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
  if (exceptionDetails) throw new Error(`page error: ${JSON.stringify(exceptionDetails)}`);
  return result.value;
}

export async function waitFor(page, expression, what) {
  const deadline = Date.now() + TIMEOUT_MS;
  let lastError = null;
  while (Date.now() < deadline) {
    try {
      if (await evaluate(page, expression)) return;
      lastError = null;
    } catch (error) {
      lastError = error; // the new tab may still show about:blank (no element yet): not an answer
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const status = await evaluate(page, "document.getElementById('status')?.textContent").catch(() => null);
  const cause = lastError === null ? '' : `; last ${lastError.message}`;
  throw new Error(`timed out waiting for ${what}; page status: ${JSON.stringify(status)}${cause}`);
}
