// negotiate.js's router (route) against fixtures/routes.json, the table
// serve::route's unit test reads: over a lookup of the folder as the Node
// handler has it (every file and folder), and over the manifest's listing as
// the Worker has it (a key it does not list is asked of the store last).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexManifest, route, setBase, siblingSource } from '../lib/negotiate.js';
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
