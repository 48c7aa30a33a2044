// The pages' admin token (src/dpdist/serve/_web/static/token.js) with a stand-in window, under node's test runner
// (run by tests/serve/test_pages.py; tests/serve/test_pages.py also drives the real pages in Chromium).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TOKEN_KEY, forgetToken, keepToken, takeToken } from '../../../src/dpdist/serve/_web/static/token.js';

/** A window at ``url`` whose history records replaceState and whose sessionStorage is a Map. */
function windowAt(url, kept = new Map()) {
  const place = new URL(url);
  const win = {
    location: { pathname: place.pathname, search: place.search, hash: place.hash },
    replaced: [],
    history: {
      state: null,
      replaceState(state, unused, next) {
        win.replaced.push(next);
        const moved = new URL(next, place);
        Object.assign(win.location, { pathname: moved.pathname, search: moved.search, hash: moved.hash });
      },
    },
    sessionStorage: {
      getItem: (key) => (kept.has(key) ? kept.get(key) : null),
      setItem: (key, value) => kept.set(key, String(value)),
      removeItem: (key) => kept.delete(key),
    },
  };
  return win;
}

test('the fragment\'s token is taken, out of the address at once, the rest of the address kept', () => {
  const win = windowAt('http://h/p/campaigns/c/dashboard?level=0.9#token=s%2Fecret&view=cdf');
  assert.equal(takeToken(win), 's/ecret');
  assert.deepEqual(win.replaced, ['/p/campaigns/c/dashboard?level=0.9#view=cdf']);
  assert.equal(win.sessionStorage.getItem(TOKEN_KEY), 's/ecret');
});

test('a token in the query string is taken out of the address and never used', () => {
  const win = windowAt('http://h/campaigns/c/dashboard?token=leaked&level=0.9');
  assert.equal(takeToken(win), '');
  assert.deepEqual(win.replaced, ['/campaigns/c/dashboard?level=0.9']);
  assert.equal(win.location.search, '?level=0.9');
});

test('a reload finds the tab\'s kept token; an address without a token is left alone', () => {
  const kept = new Map();
  takeToken(windowAt('http://h/campaigns/c/dashboard#token=abc', kept));
  const reloaded = windowAt('http://h/campaigns/c/dashboard', kept);
  assert.equal(takeToken(reloaded), 'abc');
  assert.deepEqual(reloaded.replaced, []);
  forgetToken(reloaded);
  assert.equal(takeToken(windowAt('http://h/campaigns/c/dashboard', kept)), '');
  keepToken(reloaded, 'typed');
  assert.equal(takeToken(windowAt('http://h/', kept)), 'typed');
});

test('a new token in the fragment replaces the kept one; without storage the fragment still works', () => {
  const kept = new Map([[TOKEN_KEY, 'old']]);
  assert.equal(takeToken(windowAt('http://h/#token=new', kept)), 'new');
  assert.equal(kept.get(TOKEN_KEY), 'new');
  const bare = windowAt('http://h/#token=t');
  Object.defineProperty(bare, 'sessionStorage', { get() { throw new Error('SecurityError'); } });
  assert.equal(takeToken(bare), 't');
  assert.deepEqual(bare.replaced, ['/']);
});
