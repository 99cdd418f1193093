// negotiate.js's router (route) against fixtures/routes.json, the table
// serve::route's unit test reads: over a lookup of the folder as the Node
// handler has it (every file and folder), and over the manifest's listing as
// the Worker has it (a key it does not list is asked of the store last).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answer, CACHE_PAGE_KEPT, indexManifest, route, setBase, siblingSource } from '../lib/negotiate.js';
import { fixture } from './tables.js';

const t = fixture('routes.json');
const files = new Set(t.files);
const folders = new Set(t.folders);
for (const f of t.files) for (let i = f.indexOf('/'); i >= 0; i = f.indexOf('/', i + 1)) folders.add(f.slice(0, i));

/** The folder as the Node handler sees it: every file, every folder. */
const disk = {
  node: (key) => (files.has(key) ? key : key === '' || folders.has(key) ? 'folder' : undefined),
  isManifest: (key, file) => file === t.manifest,
};

/** What a manifest of the folder lists: sources, no variant or delta beside its source, no manifest, no dot-file but .well-known. */
const listed = new Set(
  t.files.filter((f) => {
    const src = siblingSource(f);
    const hidden = f.split('/').some((s) => s.startsWith('.') && s !== '.well-known');
    return !(src !== undefined && files.has(src)) && f !== t.manifest && !hidden;
  }),
);
const dirs = new Set(['']);
for (const k of listed) for (let i = k.indexOf('/'); i >= 0; i = k.indexOf('/', i + 1)) dirs.add(k.slice(0, i));

/** The folder as the Worker sees it: the manifest's listing. */
const listing = {
  node: (key) => (key !== '' && listed.has(key) ? key : dirs.has(key) ? 'folder' : undefined),
  isManifest: (key) => key === t.manifest,
};

function verdict(index, c, lookup, options) {
  const request = { method: c.method ?? 'GET', path: c.path, query: c.query === undefined ? '' : `?${c.query}` };
  let r = route(index, request, lookup, { spa: c.spa ?? false, ...options });
  // The store has the unlisted file, or the answer is what comes after.
  if (r.probe) r = files.has(r.key) ? { status: 200, key: r.key } : r.otherwise;
  if (r.key !== undefined) return { status: r.status, file: r.key };
  const location = r.headers.find(([n]) => n === 'Location')?.[1];
  return location === undefined ? { status: r.status } : { status: r.status, location };
}

test('every route of fixtures/routes.json, as serve::route decides it: over the disk and over the manifest', () => {
  assert.ok(t.cases.length >= 40, `${t.cases.length} rows`);
  const index = indexManifest('m.json', { version: 1, files: {} });
  for (const c of t.cases) {
    setBase(index, c.base ?? '/');
    assert.deepEqual(verdict(index, c, disk, {}), c.want, `disk: ${JSON.stringify(c)}`);
    assert.deepEqual(verdict(index, c, listing, { partial: true }), c.by_listing?.want ?? c.want, `listing: ${JSON.stringify(c)}`);
  }
});

test('falling through, nothing is the 404 page and what is refused says so', () => {
  const index = indexManifest('m.json', { version: 1, files: {} });
  const r = (path) => route(index, { method: 'GET', path, query: '' }, disk, { notFoundPage: false });
  const missing = r('/missing');
  assert.deepEqual([missing.status, missing.key, missing.refused], [404, undefined, false]);
  for (const p of ['/assets/app.js.br', '/precompress-manifest.json', '/.env']) assert.equal(r(p).refused, true, p);
});

test("with spa the shell, a page, is its next version's dictionary at every route; a Chromium navigation may keep it", () => {
  const etag = '"0123456789abcdef0123456789abcdef"';
  const index = indexManifest('m.json', {
    version: 1,
    base: '/app/',
    files: {
      'index.html': {
        size: 900, blake3: '00', sha256: 'x', content_type: 'text/html; charset=utf-8', etag, encodings: [], skipped: {},
        cache: 'page', use_as_dictionary: 'match="/app/{index.html}?", match-dest=("document")',
      },
    },
  });
  const lookup = {
    node: (key) => (key === 'index.html' ? key : key === '' ? 'folder' : undefined),
    isManifest: () => false,
    open: () => ({ file: 'index.html' }),
    plain: () => undefined,
  };
  const chromium = { 'sec-fetch-dest': 'document', 'sec-ch-ua': '"Chromium";v="156"' };
  const ask = (path, spa, fields) => {
    const request = { method: 'GET', path, query: '', header: (n) => fields[n], single: (n) => fields[n] };
    const t = route(index, request, lookup, { spa });
    return Object.fromEntries(answer(index, request, t, lookup).headers);
  };
  for (const path of ['/app/reports', '/app/']) {
    const h = ask(path, true, chromium);
    assert.equal(h['Use-As-Dictionary'], 'match="/app/*", match-dest=("document")', path);
    assert.equal(h['Cache-Control'], CACHE_PAGE_KEPT, path);
    assert.equal(h.Vary, 'Sec-Fetch-Dest', path);
  }
  assert.equal(ask('/app/reports', true, {})['Cache-Control'], 'no-cache');
  assert.equal(ask('/app/', false, chromium)['Use-As-Dictionary'], 'match="/app/{index.html}?", match-dest=("document")');
});
