// The Node handler's start-up refusals and its fallthrough; what it answers
// is held to `precompress serve` by the shared table (npm/serve-cases.mjs).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { contentTypeOf, createHandler } from '../lib/serve.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'precompress-serve-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('a missing folder, a missing manifest and a broken one are refused, naming the path and the cause', () => {
  assert.throws(() => createHandler(path.join(tmp, 'nope')), (e) => e.message.includes(path.join(tmp, 'nope')) && /no such folder/.test(e.message));
  const dir = path.join(tmp, 'site');
  mkdirSync(dir);
  const m = path.join(dir, 'precompress-manifest.json');
  assert.throws(() => createHandler(dir), (e) => e.message.startsWith(m) && /cannot read the manifest \(ENOENT\)/.test(e.message));
  writeFileSync(m, '{"version": 1, "files": ');
  assert.throws(() => createHandler(dir), (e) => e.message.startsWith(`${m}: invalid manifest`));
  writeFileSync(m, JSON.stringify({ version: 1, files: { '../x': {} } }));
  assert.throws(() => createHandler(dir), (e) => e.message.startsWith(`${m}: invalid manifest: file "../x"`));
});

test('with a next, what it does not serve goes on to the next handler', async () => {
  const dir = path.join(tmp, 'empty');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'precompress-manifest.json'), JSON.stringify({ version: 1, files: {} }));
  const serve = createHandler(dir);
  const server = http.createServer((req, res) => serve(req, res, () => res.end(`next: ${req.method} ${req.url}`)));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const get = (method, p) =>
    new Promise((resolve, reject) => {
      http.request({ host: '127.0.0.1', port: server.address().port, method, path: p }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(`${res.statusCode} ${body}`));
      }).on('error', reject).end();
    });
  try {
    assert.equal(await get('GET', '/api/users'), '200 next: GET /api/users');
    assert.equal(await get('POST', '/form'), '200 next: POST /form');
    // The 404 page is the next handler's to give; what is refused is never passed on.
    writeFileSync(path.join(dir, '404.html'), 'not found');
    writeFileSync(path.join(dir, 'a.js'), 'x');
    writeFileSync(path.join(dir, 'a.js.br'), 'x');
    assert.equal(await get('GET', '/missing'), '200 next: GET /missing');
    assert.equal(await get('GET', '/a.js.br'), '404 404 Not Found\n');
    assert.equal(await get('GET', '/precompress-manifest.json'), '404 404 Not Found\n');
    assert.equal(await get('GET', '/.env'), '404 404 Not Found\n');
    assert.equal(await get('GET', '/%2e%2e/x'), '400 400 Bad Request\n');
  } finally {
    server.close();
  }
});

test('a 304 needs the source unchanged, not the variant opened: as precompress serve answers', async () => {
  const dir = path.join(tmp, 'conditional');
  mkdirSync(dir);
  const src = 'console.log(1);\n'.repeat(100);
  writeFileSync(path.join(dir, 'a.js'), src);
  writeFileSync(path.join(dir, 'a.js.br'), 'b'.repeat(50));
  const etag = `"${'b'.repeat(32)}"`;
  const files = {
    'a.js': {
      blake3: 'a'.repeat(64), etag: `"${'a'.repeat(32)}"`, size: src.length,
      sha256: createHash('sha256').update(src).digest('base64'),
      content_type: 'text/javascript; charset=utf-8', cache: 'revalidate',
      encodings: [{ coding: 'br', path: 'a.js.br', size: 50, etag, blake3: 'b'.repeat(64) }],
    },
  };
  writeFileSync(path.join(dir, 'precompress-manifest.json'), JSON.stringify({ version: 1, files }));
  const serve = createHandler(dir);
  const server = http.createServer(serve);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const get = (headers) =>
    new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: server.address().port, path: '/a.js', headers }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, etag: res.headers.etag, coding: res.headers['content-encoding'], body }));
      }).on('error', reject);
    });
  try {
    assert.equal((await get({ 'accept-encoding': 'br' })).coding, 'br');
    unlinkSync(path.join(dir, 'a.js.br'));
    const cond = { 'accept-encoding': 'br', 'if-none-match': etag };
    assert.deepEqual(await get(cond), { status: 304, etag, coding: undefined, body: '' });
    const r = await get({ 'accept-encoding': 'br' });
    assert.deepEqual([r.status, r.coding, r.body === src], [200, undefined, true]);
    // The source edited: its variant's ETag is no longer current.
    writeFileSync(path.join(dir, 'a.js'), `${src}// edited\n`);
    assert.equal((await get(cond)).status, 200);
  } finally {
    server.close();
  }
});

test("an unlisted file's extension is data: x.constructor, x.__proto__ find no Object member (issue #29)", () => {
  for (const name of ['x.constructor', 'x.__proto__', 'x.toString', 'x.hasOwnProperty', 'x.valueOf', 'x.isPrototypeOf'])
    assert.equal(contentTypeOf(name), 'application/octet-stream', name);
  assert.equal(contentTypeOf('a/b.JS'), 'text/javascript; charset=utf-8');
  assert.equal(contentTypeOf('noext'), 'application/octet-stream');
});
