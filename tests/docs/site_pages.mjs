// Read a built documentation site in a running headless Chromium, page by page, at a desktop and a phone width.
//
//   node --experimental-websocket tests/docs/site_pages.mjs DEVTOOLS_PORT PLAN_JSON
//
// PLAN_JSON: {"widths": [[name, width, height, mobile, [file URL, ...]], ...], "shots": {file URL: name}, "out": folder,
// "search": file URL of a search, "result": JSON file}.  For every page at its width: its title, the first heading, every link's resolved
// href, every element id, and whether the page scrolls sideways; a full-page PNG of each page named in "shots" in
// "out"; the search page's result links once its results are listed.  Writes one JSON object to "result":
// {"pages": [{url, width, title, h1, links, ids, overflow}, ...], "search": [href, ...]}.

import { writeFileSync } from 'node:fs';

import { connect, evaluate, openPage, waitFor } from '../devtools.mjs';

const [port, planJson] = process.argv.slice(2);
const plan = JSON.parse(planJson);
const page = await connect(await openPage(port, 'about:blank'));
await page.call('Page.enable');
await page.call('Runtime.enable');

const READ = `({
  title: document.title,
  h1: (document.querySelector('main h1, article h1, h1') || {}).textContent || '',
  links: [...document.querySelectorAll('a[href]')].map((a) => a.href),
  ids: [...document.querySelectorAll('[id]')].map((e) => e.id),
  overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
})`;

const results = [];
for (const [name, width, height, mobile, pages] of plan.widths) {
  await page.call('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile });
  for (const url of pages) {
    await page.call('Page.navigate', { url });
    await waitFor(page, `document.readyState === 'complete' && location.href === ${JSON.stringify(url)}`, url);
    const found = await evaluate(page, READ);
    results.push({ url, width: name, ...found });
    if (plan.shots[url]) {
      const { cssContentSize: size } = await page.call('Page.getLayoutMetrics');
      const clip = { x: 0, y: 0, width: Math.ceil(size.width), height: Math.min(Math.ceil(size.height), 16000), scale: 1 };
      const { data } = await page.call('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip });
      writeFileSync(`${plan.out}/${plan.shots[url]}-${name}.png`, Buffer.from(data, 'base64'));
    }
  }
}
let search = [];
if (plan.search) {
  await page.call('Page.navigate', { url: plan.search });
  const listed = "[...document.querySelectorAll('#search-results li a, ul.search li a')]";
  // searchtools.js says "Search finished, found N pages ..." in the results' box once every result is listed
  await waitFor(page, "(document.getElementById('search-results') || {textContent: ''}).textContent.includes('Search finished')", 'the search');
  search = await evaluate(page, `${listed}.map((a) => a.href)`);
}
page.close();
writeFileSync(plan.result, JSON.stringify({ pages: results, search }));
process.exit(0);
