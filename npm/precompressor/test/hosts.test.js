// precompressor/netlify and precompressor/pages before any request: what
// each refuses and says. Their answers are held to the shared table in the
// hosts' local runtimes (tests/serve_edge_hosts.rs).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import netlify, { config, createEdgeFunction } from '../lib/netlify.js';
import { createPagesFunction, onRequest } from '../lib/pages.js';

test('the Netlify function runs for every path', () => {
  assert.deepEqual(config, { path: '/*' });
  assert.equal(typeof netlify, 'function');
});

test('the Netlify function refuses a binding: the files are the deploy\'s', () => {
  assert.throws(() => createEdgeFunction({ binding: 'ASSETS' }), /precompressor\/netlify: option `binding` has no meaning on Netlify/);
});

test('an invalid option is refused by name, as the Worker refuses it', () => {
  assert.throws(() => createEdgeFunction({ base: '/../app/' }), /precompressor\/worker: base "\/..\/app\/" is not a path like \/app\//);
  assert.throws(() => createPagesFunction({ manifest: 'm.json' }), /precompressor\/worker: manifest "m.json" is not a path/);
});

test('without context.next the Netlify function answers 500 saying where it runs, and logs it', async () => {
  const said = [];
  const f = createEdgeFunction({ log: (m) => said.push(m) });
  const r = await f(new Request('http://example.com/app.js'), {});
  assert.equal(r.status, 500);
  assert.match(await r.text(), /run this as a Netlify Edge Function/);
  assert.equal(said.length, 1);
});

test('the Pages function with no ASSETS binding is a 500 naming it', async () => {
  const r = await onRequest({ request: new Request('http://example.com/'), env: {} });
  assert.equal(r.status, 500);
  assert.match(await r.text(), /no ASSETS binding/);
});
