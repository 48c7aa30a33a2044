// The participate page of a relayed campaign with an issuer, in headless Chromium (skipped where there is none): served
// by the collector with dpdist serve's CSP plus the relay's and the issuer's origins in connect-src, it takes the
// credential and its issuer from the URL's fragment (and takes the credential out of the address bar), gets a token from
// the issuer (CORS), draws once, and sends the report sealed to the collector's key to the relay (CORS, with the
// Dpdist-Pin header) with its token; it refuses a campaign whose issuer is not the invitation's.
// Driven by tests/participate_relayed_driver.mjs over the DevTools protocol.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openReport, startRelayedCampaign, stopAll } from './relayed-fakes.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((path) => existsSync(path)) ?? null;
const DRIVER = fileURLToPath(new URL('../../../tests/participate_relayed_driver.mjs', import.meta.url));
const CREDENTIAL = 'device-credential-1';

let browser = null;
let profile = null;

after(async () => {
  stopAll();
  if (browser !== null) {
    // the browser leads its own process group (detached): its helpers (renderer, zygote, GPU, crashpad) are killed with
    // it, and the profile is removed only once none of them runs, so none writes to it as it goes
    const exited = browser.exitCode === null && browser.signalCode === null
      ? new Promise((resolve) => browser.once('exit', resolve)) : Promise.resolve();
    try {
      process.kill(-browser.pid, 'SIGKILL');
    } catch {
      // the group has ended already
    }
    await exited;
    await groupGone(browser.pid, 30_000);
  }
  // a profile that cannot be removed (a helper the kill missed, a slow disk at a high load) is left in the temporary
  // folder and said, never a failed run: the tests' assertions have passed by now (ENOTEMPTY was seen at load 9)
  if (profile !== null) {
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 50, retryDelay: 100 });
    } catch (error) {
      console.log(`# note: the Chromium profile ${profile} was left behind (${error.code ?? error.message})`);
    }
  }
});

/** Resolves once no process of the group ``pgid`` runs (or after ``ms``). */
async function groupGone(pgid, ms) {
  for (let waited = 0; waited < ms; waited += 50) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return; // ESRCH: the group is empty
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let devtools = null;

/** Headless Chromium with a DevTools port on 127.0.0.1 (its own profile, killed after the tests); resolves to the port. */
function devtoolsPort() {
  devtools ??= startBrowser(); // one browser for the tests of this file
  return devtools;
}

async function startBrowser() {
  profile = mkdtempSync(join(tmpdir(), 'dpdist-chromium-'));
  browser = spawn(CHROMIUM, ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--remote-debugging-port=0',
    '--remote-debugging-address=127.0.0.1', `--user-data-dir=${profile}`, 'about:blank'], { stdio: 'ignore', detached: true });
  const portFile = join(profile, 'DevToolsActivePort');
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (existsSync(portFile)) {
      const port = readFileSync(portFile, 'utf8').split('\n')[0];
      if (/^\d+$/.test(port)) return port;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('headless Chromium did not open its DevTools port in 30 s');
}

function drive(port, url, value) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--experimental-websocket', DRIVER, port, url, value], { timeout: 90_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)));
    });
  });
}

test('the page gets a token with the credential and issuer of its fragment, draws once, and sends the sealed report to the relay, which cannot open it even serving its own key', { skip: CHROMIUM === null && 'no Chromium' }, async () => {
  const parties = await startRelayedCampaign({ page: { cors: true }, swap: true }); // the relay serves its own key: the page never asks it
  const port = await devtoolsPort();
  const issuer = new URLSearchParams({ issuer: parties.issuerUrl }).toString();
  const page = await drive(port, `${parties.collectorUrl}/campaigns/c1/participate#credential=${CREDENTIAL}&${issuer}`, '3');
  assert.ok(page.status.startsWith('Sent. The relay accepted your report'), JSON.stringify(page));
  // the credential out of the address bar, its issuer kept
  assert.deepEqual([page.credentialShown, page.credentialFilled, page.issuer, page.hash], [true, true, parties.issuerUrl, `#${issuer}`]);
  assert.match(page.about, new RegExp(`goes to the relay ${parties.relayUrl}.*token of ${parties.issuerUrl}`));
  // the page says what it is: the collector's code, whose promises hold as far as the collector is honest
  assert.match(page.about, new RegExp(`This page is code that the collector serves: .*only as far as the collector is honest.*` +
    `dpdist submit.*JavaScript client it got elsewhere, given this campaign's pin ${parties.pin}\.`));
  assert.deepEqual(parties.state.issuerRequests.map((request) => [request.credential, request.answered]), [[CREDENTIAL, 'new']]);
  assert.equal(parties.state.relayReceived.length, 1);
  const [message] = parties.state.relayReceived;
  assert.equal(message.openedByRelay, null);
  assert.notEqual(await openReport(parties.collectorKey, 'c1', message.sealed), null);
  assert.equal(parties.state.spentNonces.size, 1); // the relay verified the token
  assert.equal(parties.state.relayPinned.pin, parties.pin); // and the pin the page named (Dpdist-Pin, allowed by CORS)
  // the browser asked the relay and the issuer first (CORS preflights: PUT and POST with Authorization)
  assert.ok(parties.state.relayRequests.some((line) => line.startsWith('OPTIONS /relay/v1/campaigns/c1/ohttp/')));
  assert.deepEqual(parties.state.collectorRequests.filter((line) => line.startsWith('PUT')), []);
});

test("the page refuses a campaign whose issuer is not the invitation's: nothing drawn, the credential sent nowhere", { skip: CHROMIUM === null && 'no Chromium' }, async () => {
  const parties = await startRelayedCampaign({ page: { cors: true } });
  const port = await devtoolsPort();
  const issuer = new URLSearchParams({ issuer: 'https://issuer.example.org' }).toString();
  const page = await drive(port, `${parties.collectorUrl}/campaigns/c1/participate#credential=${CREDENTIAL}&${issuer}`, '3');
  assert.match(page.status, /^This campaign cannot be joined from this page: Campaign 'c1' names the issuer .*; this device was given https:\/\/issuer\.example\.org/);
  assert.equal(page.report, null);
  assert.equal(page.hash, `#${issuer}`); // the credential out of the address bar all the same
  assert.deepEqual(parties.state.issuerRequests, []);
  assert.deepEqual(parties.state.relayRequests, []);
});
