// precompressor/rum with a fake window: what it sums per kind and coding,
// what it leaves out, when it sends; and docs/rum.md's copy-paste <script>
// held to the module's source. The real browser is tests/rum_browser.rs.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { rum } from '../lib/rum.js';

// A window at https://example.com/shop/ with these timing entries; records
// the fetches it is asked for and lets the test fire its events.
function fakeWindow(navigation, resources) {
  const listeners = {};
  const w = {
    location: { href: 'https://example.com/shop/', origin: 'https://example.com' },
    document: { visibilityState: 'visible' },
    performance: {
      getEntriesByType: (t) => (t === 'navigation' ? navigation : resources),
    },
    fetches: [],
    fetch(url, init) {
      w.fetches.push({ url, init });
      return Promise.resolve();
    },
    addEventListener(name, f) {
      (listeners[name] ??= []).push(f);
    },
    fire(name) {
      for (const f of listeners[name] ?? []) f();
    },
  };
  return w;
}

const entry = (name, more) => ({
  name,
  entryType: 'resource',
  initiatorType: 'script',
  transferSize: 0,
  encodedBodySize: 0,
  decodedBodySize: 0,
  contentEncoding: '',
  responseStatus: 200,
  ...more,
});

test('sums per kind and coding, the site only, once, without credentials', () => {
  const w = fakeWindow(
    [entry('https://example.com/shop/', { entryType: 'navigation', initiatorType: 'navigation',
      transferSize: 1300, encodedBodySize: 1000, decodedBodySize: 4000, contentEncoding: 'br' })],
    [
      entry('https://example.com/assets/app-2.js', { transferSize: 500, encodedBodySize: 200,
        decodedBodySize: 9000, contentEncoding: 'dcb' }),
      entry('https://example.com/assets/vendor.js', { transferSize: 0, encodedBodySize: 3000,
        decodedBodySize: 12000, contentEncoding: 'zstd' }),
      entry('https://example.com/assets/old.css', { initiatorType: 'link', transferSize: 300,
        encodedBodySize: 936, decodedBodySize: 2503, contentEncoding: 'br' }),
      entry('https://example.com/assets/site.css', { initiatorType: 'link', transferSize: 700,
        encodedBodySize: 400, decodedBodySize: 1600, contentEncoding: 'dcz' }),
      entry('https://example.com/assets/site.css?x', { initiatorType: 'link', transferSize: 350,
        encodedBodySize: 50, decodedBodySize: 1600, contentEncoding: 'dcz' }),
      entry('https://example.com/logo.png', { initiatorType: 'img', transferSize: 900,
        encodedBodySize: 600, decodedBodySize: 600 }),
      entry('https://example.com/api', { initiatorType: 'fetch', transferSize: 340,
        encodedBodySize: 40, decodedBodySize: 80, responseStatus: 304, contentEncoding: 'gzip' }),
      entry('https://cdn.example.net/lib.js', { transferSize: 800, encodedBodySize: 500,
        decodedBodySize: 900, contentEncoding: 'br' }),
      entry('https://example.com/rum', { initiatorType: 'fetch', transferSize: 300 }),
      entry('https://example.com/favicon.ico', { initiatorType: 'other', transferSize: 314,
        encodedBodySize: 14, decodedBodySize: 14, responseStatus: 404 }),
    ],
  );
  const send = rum('/rum', 1, w);
  assert.equal(typeof send, 'function');
  w.fire('pagehide');
  w.document.visibilityState = 'hidden';
  w.fire('visibilitychange');
  assert.equal(w.fetches.length, 1, 'sent once');
  const { url, init } = w.fetches[0];
  assert.equal(url, '/rum');
  assert.deepEqual(
    { method: init.method, keepalive: init.keepalive, credentials: init.credentials, mode: init.mode },
    { method: 'POST', keepalive: true, credentials: 'omit', mode: 'no-cors' },
  );
  assert.equal(init.headers, undefined, 'no header beyond the safelisted');
  assert.deepEqual(JSON.parse(init.body), {
    v: 1,
    sample: 1,
    kinds: {
      document: { br: { n: 1, transfer: 1300, body: 1000, file: 4000 } },
      script: {
        dcb: { n: 1, transfer: 500, body: 200, file: 9000 },
        cache: { n: 1, transfer: 0, body: 3000, file: 12000 },
      },
      style: {
        cache: { n: 1, transfer: 300, body: 936, file: 2503 },
        dcz: { n: 2, transfer: 1050, body: 450, file: 3200 },
      },
      other: {
        identity: { n: 1, transfer: 900, body: 600, file: 600 },
        cache: { n: 1, transfer: 340, body: 40, file: 80 },
      },
    },
  });
  assert.doesNotMatch(init.body, /example|shop|png|app-2/, 'no URL leaves the page');
});

test('a browser that does not report the coding counts as unknown', () => {
  const e = entry('https://example.com/a.js', { transferSize: 400, encodedBodySize: 100,
    decodedBodySize: 300 });
  delete e.contentEncoding;
  const w = fakeWindow([], [e]);
  rum('https://collect.example.org/r', 1, w)();
  assert.deepEqual(JSON.parse(w.fetches[0].init.body).kinds,
    { script: { unknown: { n: 1, transfer: 400, body: 100, file: 300 } } });
});

test('sampled out, or with no fetch: nothing listens and nothing is sent', () => {
  const w = fakeWindow([], []);
  assert.equal(rum('/rum', 0, w), undefined);
  w.fire('pagehide');
  assert.equal(w.fetches.length, 0);
  assert.equal(rum('/rum', 1, { ...w, fetch: undefined }), undefined);
});

test("docs/rum.md's <script> is the module's rum, called", () => {
  const doc = readFileSync(new URL('../../../docs/rum.md', import.meta.url), 'utf8');
  const block = doc.match(/```html\n(<script>\n[\s\S]*?\n<\/script>)\n```/);
  assert.ok(block, 'docs/rum.md has a ```html <script> block');
  const expected = `<script>\n(${rum.toString()})('https://collect.example.com/rum', 0.1);\n</script>`;
  assert.equal(block[1], expected, `docs/rum.md's snippet drifted from lib/rum.js; paste:\n${expected}`);
});
