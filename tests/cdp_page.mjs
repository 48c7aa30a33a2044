// Open a page in a running headless Chromium over the DevTools protocol and run steps in it.
//
//   node --experimental-websocket tests/cdp_page.mjs DEVTOOLS_PORT PAGE_URL STEPS_JSON
//
// STEPS_JSON is a list of ["wait", EXPRESSION] (until it is truthy, 60 s at most), ["eval", EXPRESSION]
// (awaited; its value is kept), ["screenshot", PNG_PATH] (the whole page, 1000 CSS pixels wide, as a PNG file) and
// ["init", SOURCE] (run in every document of the page before its own scripts, wherever it stands in the list).
// Content-Security-Policy violations are recorded from before the page's first script.  Prints one JSON object:
// {"values": [...each eval's value], "csp": [...violated directives]}.
// Used by tests/serve/test_operations.py; the protocol client is tests/devtools.mjs.

import { writeFileSync } from 'node:fs';

import { TIMEOUT_MS, connect, evaluate, openPage } from './devtools.mjs';

const [port, url, stepsJson] = process.argv.slice(2);
const steps = JSON.parse(stepsJson);
const page = await connect(await openPage(port, 'about:blank'));
await page.call('Page.enable');
await page.call('Runtime.enable');
await page.call('Page.addScriptToEvaluateOnNewDocument', {
  source: "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective));",
});
for (const [kind, source] of steps) {
  if (kind === 'init') await page.call('Page.addScriptToEvaluateOnNewDocument', { source });
}
await page.call('Emulation.setDeviceMetricsOverride', { width: 1000, height: 800, deviceScaleFactor: 1, mobile: false });
await page.call('Page.navigate', { url });
const values = [];
for (const [kind, expression] of steps) {
  if (kind === 'init') continue;
  if (kind === 'eval') {
    values.push(await evaluate(page, expression));
    continue;
  }
  if (kind === 'screenshot') {
    const { cssContentSize: size } = await page.call('Page.getLayoutMetrics');
    const clip = { x: 0, y: 0, width: Math.ceil(size.width), height: Math.ceil(size.height), scale: 1 };
    const { data } = await page.call('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip });
    writeFileSync(expression, Buffer.from(data, 'base64'));
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
