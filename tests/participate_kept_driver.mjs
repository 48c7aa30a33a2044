// Drive the participate page to look for a second draw.
//
//   node --experimental-websocket tests/participate_kept_driver.mjs DEVTOOLS_PORT PAGE_URL VALUE OTHER
//
// Lists the page's buttons; types VALUE and randomizes 21 times, reads the report each time; reloads
// and reads what the page shows; randomizes VALUE again, then OTHER; sends; reloads again and types
// OTHER. Prints one JSON object. Used by tests/clients/test_js_participate.py.

import { connect, evaluate, openPage, waitFor } from './devtools.mjs';

const [port, url, value, other] = process.argv.slice(2);
const READY = "window.__fresh === undefined && document.readyState === 'complete' && !document.getElementById('form').hidden";

const page = await connect(await openPage(port, url));
await page.call('Runtime.enable');
await page.call('Page.enable');
await waitFor(page, READY, 'the form');

const read = () =>
  evaluate(
    page,
    `({ shown: !document.getElementById('result').hidden,
        bytes: document.getElementById('bytes').textContent,
        value: document.getElementById('value').value,
        status: document.getElementById('status').textContent,
        sendable: !document.getElementById('send').hidden && !document.getElementById('send').disabled })`,
  );
/** Type ``text`` and press Randomize; the handler runs synchronously, so the page is read at once. */
const submit = async (text) => {
  await evaluate(page, `document.getElementById('value').value = ${JSON.stringify(text)}; document.getElementById('form').requestSubmit(); true`);
  return read();
};
const reload = async () => {
  await evaluate(page, 'window.__fresh = false; true'); // gone once the new document is loaded
  await page.call('Page.reload', { ignoreCache: true });
  await waitFor(page, READY, 'the reloaded form');
  return read();
};

const buttons = await evaluate(page, "[...document.querySelectorAll('button')].map((b) => b.id)");
const atStart = await read();
const draws = [];
for (let i = 0; i < 21; i++) draws.push((await submit(value)).bytes);
const afterReload = await reload();
const sameValue = await submit(value);
const otherValue = await submit(other);
await evaluate(page, "document.getElementById('send').click(); true");
await waitFor(page, "document.getElementById('status').textContent.startsWith('Sent.')", 'the acknowledgement');
const sent = await read();
const afterSend = await reload();
const otherAfterSend = await submit(other);
console.log(JSON.stringify({ buttons, atStart, draws, afterReload, sameValue, otherValue, sent, afterSend, otherAfterSend }));
page.close();
