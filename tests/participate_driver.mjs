// Drive the participate page in a running headless Chromium over the DevTools protocol.
//
//   node --experimental-websocket tests/participate_driver.mjs DEVTOOLS_PORT PAGE_URL VALUE
//
// Opens the page, types VALUE (a JSON object of a record: each attribute's value in its field), randomizes,
// reads the report, its summary and its posterior table, sends it,
// waits for the acknowledgement and prints one JSON object.  Used by tests/clients/test_js_participate.py.

import { connect, evaluate, openPage, waitFor } from './devtools.mjs';

const [port, url, value] = process.argv.slice(2);

const page = await connect(await openPage(port, url));
await page.call('Runtime.enable');
await waitFor(page, "document.readyState === 'complete' && !document.getElementById('form').hidden", 'the form');
const about = await evaluate(page, "document.getElementById('about').textContent");
// a record (JSON object: attribute name -> value) goes into the fields of a campaign over records
const fill = value.startsWith('{')
  ? `for (const [name, v] of Object.entries(${value})) document.querySelector('[data-attribute="' + CSS.escape(name) + '"]').value = v;`
  : `document.getElementById('value').value = ${JSON.stringify(value)};`;
await evaluate(page, `${fill} document.getElementById('form').requestSubmit(); true`);
await waitFor(page, "!document.getElementById('result').hidden", 'the report');
const shown = await evaluate(
  page,
  `({ report: document.getElementById('report').textContent,
      bytes: document.getElementById('bytes').textContent,
      summary: document.getElementById('summary').textContent,
      fields: [...document.querySelectorAll('[data-attribute]')].map((field) => [field.dataset.attribute, field.tagName]),
      table: !document.getElementById('posterior-table').hidden,
      rows: [...document.querySelectorAll('#posterior tr')].map((tr) => [tr.children[0].textContent, tr.children[1].textContent]) })`,
);
await evaluate(page, "document.getElementById('send').click(); true");
await waitFor(page, "document.getElementById('status').textContent.startsWith('Sent.')", 'the acknowledgement');
const status = await evaluate(page, "document.getElementById('status').textContent");
console.log(JSON.stringify({ about, ...shown, status }));
page.close();
