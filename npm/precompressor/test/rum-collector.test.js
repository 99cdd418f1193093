// precompressor/rum-collector: reports added up, everything else refused and
// counted apart, through the Fetch API handler and the node:http one. The
// real browser posting to it is tests/rum_browser.rs.

import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { createCollector, parseReport } from '../lib/rum-collector.js';

const report = (sample, scriptDcb, page = 1000) => ({
  v: 1,
  sample,
  kinds: {
    document: { br: { n: 1, transfer: page + 300, body: page, file: 4 * page } },
    script: { dcb: { n: 1, transfer: scriptDcb + 300, body: scriptDcb, file: 20_000 }, br: { n: 1, transfer: 5300, body: 5000, file: 20_000 } },
  },
});

const post = (c, body, path = '/rum') =>
  c.fetch(new Request(`https://collect.example${path}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }));

test('reports are added up per kind and coding, views estimated by their sample', async () => {
  const seen = [];
  const c = createCollector({ onReport: (r) => seen.push(r) });
  assert.equal((await post(c, report(0.1, 70))).status, 204);
  assert.equal((await post(c, report(0.5, 30))).status, 204);
  const t = c.totals();
  assert.equal(t.views, 2);
  assert.equal(t.estimatedViews, 12);
  assert.deepEqual(t.kinds.script.dcb, { n: 2, transfer: 700, body: 100, file: 40_000 });
  assert.deepEqual(t.kinds.document.br, { n: 2, transfer: 2600, body: 2000, file: 8000 });
  // Half the script bytes fetched came as deltas.
  assert.equal(t.codeFileBytesAsDeltas, 0.5);
  assert.equal(seen.length, 2);
  const got = await c.fetch(new Request('https://collect.example/rum'));
  assert.equal(got.status, 200);
  assert.equal(got.headers.get('cache-control'), 'no-store');
  assert.deepEqual(await got.json(), t);
});

test('what is not a report is refused whole and counted apart', async () => {
  const c = createCollector();
  const bad = [
    'not json',
    '[]',
    { v: 2, sample: 1, kinds: {} },
    { v: 1, sample: 0, kinds: {} },
    { v: 1, sample: 2, kinds: {} },
    { v: 1, sample: 1, kinds: { font: { br: { n: 1, transfer: 1, body: 1, file: 1 } } } },
    { v: 1, sample: 1, kinds: { script: { lzma: { n: 1, transfer: 1, body: 1, file: 1 } } } },
    { v: 1, sample: 1, kinds: { script: { br: { n: -1, transfer: 1, body: 1, file: 1 } } } },
    { v: 1, sample: 1, kinds: { script: { br: { n: 1.5, transfer: 1, body: 1, file: 1 } } } },
    { v: 1, sample: 1, kinds: { script: { br: { n: 1, transfer: 1, body: 1 } } } },
    { v: 1, sample: 1, kinds: { script: { br: { n: 1e9, transfer: 1, body: 1, file: 1 } } } },
    '{"v": 1, "sample": 1, "kinds": {"__proto__": {"br": {"n": 1, "transfer": 1, "body": 1, "file": 1}}}}',
  ];
  for (const b of bad) assert.equal((await post(c, b)).status, 400, JSON.stringify(b));
  assert.equal((await post(c, 'x'.repeat(20_000))).status, 413);
  assert.equal((await post(c, report(1, 10), '/other')).status, 404);
  const put = await c.fetch(new Request('https://collect.example/rum', { method: 'PUT', body: '{}' }));
  assert.equal(put.status, 405);
  assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
  const t = c.totals();
  assert.equal(t.views, 0);
  assert.equal(t.refused, bad.length + 1);
  assert.deepEqual(t.kinds, {});
  assert.equal(parseReport(JSON.stringify(report(1, 10))).sample, 1);
});

test('the node:http handler answers as the fetch one', async () => {
  const c = createCollector({ path: '/_rum' });
  const server = http.createServer(c.node);
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    const sent = await fetch(`${base}/_rum`, { method: 'POST', body: JSON.stringify(report(1, 50)) });
    assert.equal(sent.status, 204);
    assert.equal((await fetch(`${base}/_rum`, { method: 'POST', body: 'x'.repeat(20_000) })).status, 413);
    const t = await (await fetch(`${base}/_rum`)).json();
    assert.equal(t.views, 1);
    assert.equal(t.refused, 1);
    assert.deepEqual(t.kinds.script.dcb, { n: 1, transfer: 350, body: 50, file: 20_000 });
  } finally {
    server.close();
  }
});
