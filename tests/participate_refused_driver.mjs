// Open the participate page of a campaign it cannot take in a running headless Chromium (DevTools protocol) and
// print the page's status line and whether the form stayed hidden, as one JSON object.
//
//   node --experimental-websocket tests/participate_refused_driver.mjs DEVTOOLS_PORT PAGE_URL
//
// Used by tests/clients/test_js_participate.py (a key-value campaign has no form on the page).

import { connect, evaluate, openPage, waitFor } from './devtools.mjs';

const [port, url] = process.argv.slice(2);

const page = await connect(await openPage(port, url));
await page.call('Runtime.enable');
await waitFor(page, "document.readyState === 'complete' && document.getElementById('status').textContent !== ''", 'the status');
const shown = await evaluate(
  page,
  "({ status: document.getElementById('status').textContent, formHidden: document.getElementById('form').hidden })",
);
console.log(JSON.stringify(shown));
page.close();
