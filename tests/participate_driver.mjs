// Drive the participate page in a running headless Chromium over the DevTools protocol.
//
//   node --experimental-websocket tests/participate_driver.mjs DEVTOOLS_PORT PAGE_URL VALUE
//
// Opens the page, types VALUE, randomizes, reads the report and its posterior table, sends it,
// waits for the acknowledgement and prints one JSON object.  Used by tests/test_js_participate.py.

import { connect, evaluate, openPage, waitFor } from './devtools.mjs';

const [port, url, value] = process.argv.slice(2);

const page = await connect(await openPage(port, url));
await page.call('Runtime.enable');
await waitFor(page, "document.readyState === 'complete' && !document.getElementById('form').hidden", 'the form');
const about = await evaluate(page, "document.getElementById('about').textContent");
await evaluate(page, `document.getElementById('value').value = ${JSON.stringify(value)}; document.getElementById('form').requestSubmit(); true`);
await waitFor(page, "!document.getElementById('result').hidden", 'the report');
const shown = await evaluate(
  page,
  `({ report: document.getElementById('report').textContent,
      bytes: document.getElementById('bytes').textContent,
      rows: [...document.querySelectorAll('#posterior tr')].map((tr) => [tr.children[0].textContent, tr.children[1].textContent]) })`,
);
await evaluate(page, "document.getElementById('send').click(); true");
await waitFor(page, "document.getElementById('status').textContent.startsWith('Sent.')", 'the acknowledgement');
const status = await evaluate(page, "document.getElementById('status').textContent");
console.log(JSON.stringify({ about, ...shown, status }));
page.close();
