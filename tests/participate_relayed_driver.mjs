// Drive the participate page of a relayed campaign with an issuer in a running headless Chromium over the DevTools
// protocol: the credential and its issuer come in the URL's fragment, the page gets a token from the issuer, draws,
// and sends the sealed report to the relay (with the campaign's pin, Dpdist-Pin).
//
//   node --experimental-websocket tests/participate_relayed_driver.mjs DEVTOOLS_PORT PAGE_URL#credential=...&issuer=... VALUE
//
// Prints one JSON object: the page's "about" text, whether the credential field was shown and filled, the issuer
// address it holds, the fragment left in the address bar, the report shown, and the final status ("Sent. ..." or the
// refusal).  Used by
// clients/js/test/participate-relayed.test.js (against in-process fakes) and usable against dpdist serve, relay and
// issuer as they are.

import { connect, evaluate, openPage, waitFor } from './devtools.mjs';

const [port, url, value] = process.argv.slice(2);

// a blank tab, then the page: /json/new would drop the URL's fragment (the credential)
const page = await connect(await openPage(port, 'about:blank'));
await page.call('Runtime.enable');
await page.call('Page.navigate', { url });
await waitFor(page, "document.readyState === 'complete' && (!document.getElementById('form').hidden || document.getElementById('status').textContent !== '')", 'the form');
const loaded = await evaluate(
  page,
  `({ about: document.getElementById('about').textContent,
      credentialShown: !document.getElementById('credential-field').hidden,
      credentialFilled: document.getElementById('credential').value !== '',
      issuer: document.getElementById('issuer-url').value,
      hash: location.hash,
      status: document.getElementById('status').textContent })`,
);
let report = null;
let status = loaded.status;
if (!(await evaluate(page, "document.getElementById('form').hidden"))) {
  await evaluate(page, `document.getElementById('value').value = ${JSON.stringify(value)}; document.getElementById('form').requestSubmit(); true`);
  await waitFor(page, "!document.getElementById('result').hidden || document.getElementById('status').className === 'error'", 'the report or a refusal');
  if (!(await evaluate(page, "document.getElementById('result').hidden"))) {
    report = await evaluate(page, "document.getElementById('report').textContent");
    await evaluate(page, "document.getElementById('send').click(); true");
    await waitFor(page, "/^(Sent\\.|Not sent)/.test(document.getElementById('status').textContent)", 'the acknowledgement');
  }
  status = await evaluate(page, "document.getElementById('status').textContent");
}
console.log(JSON.stringify({ ...loaded, report, status }));
page.close();
