// The CloudFront Functions of `precompress objects --edge` (src/deploy/
// cloudfront-request.js and cloudfront-response.js, which the Rust build
// embeds) run in node:vm as the runtime runs them, against the rule tables of
// fixtures/ that serve::route, serve::Index and negotiate.js are held to:
// Accept-Encoding and Available-Dictionary (accept-encoding.json), request
// paths (request-paths.json) and routes in front of a bucket (routes.json).
// The data a function starts with is written here as deploy::cloudfront
// writes it (routing_data); npm/serve-cases-edge.mjs runs the generated
// functions on a real site.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import vm from 'node:vm';
import { parseAvailableDictionary } from '../lib/negotiate.js';
import { accept, dictionary, fixture } from './tables.js';

const source = (name) => readFileSync(new URL(`../../../src/deploy/${name}`, import.meta.url), 'utf8');

/** As deploy::cloudfront's `compact`: the header comment, then code lines without indentation or comments. */
function compact(js) {
  let header = true;
  const out = [];
  for (const line of js.split('\n').slice(0, js.endsWith('\n') ? -1 : undefined)) {
    header &&= line.startsWith('//');
    const code = line.trimStart();
    if (header || !(code === '' || code.startsWith('//'))) out.push(header ? line : code);
  }
  return `${out.join('\n')}\n`;
}

const TOKENS = { br: 'b', zstd: 'z', gzip: 'g', dcb: 'b', dcz: 'z' };

/**
 * The `var` lines deploy::cloudfront::routing_data writes: the base, the
 * manifest, the 404 page, the dictionaries, and each route as its sizes'
 * ranks. A route is { key, identity, variants: [[coding, size]],
 * deltas: [[coding, dictionary, size]] }, each list smallest first.
 */
function routingData(base, manifest, routes) {
  const dictionaries = [];
  const folders = {};
  for (const r of routes) {
    const sizes = [...new Set([r.identity, ...r.variants.map((v) => v[1]), ...r.deltas.map((d) => d[2])])].sort((a, b) => a - b);
    const rank = (s) => sizes.indexOf(s);
    let value = String(rank(r.identity));
    for (const [coding, size] of r.variants) value += ` ${TOKENS[coding]}${rank(size)}`;
    for (const [coding, dict, size] of r.deltas) {
      if (!dictionaries.includes(dict)) dictionaries.push(dict);
      value += ` ${dictionaries.indexOf(dict)}${TOKENS[coding]}${rank(size)}`;
    }
    const slash = r.key.lastIndexOf('/') + 1;
    (folders[r.key.slice(0, slash)] ??= []).push(r.key.slice(slash), value);
  }
  const s = JSON.stringify;
  return `var B = ${s(base)}, M = ${manifest === undefined ? 'null' : s(manifest)}, P = "404.html", N = null;\nvar D = ${s(dictionaries)};\nvar A = ${s(folders)};\n`;
}

/** The viewer-request function for `data`, as a function of an event: each call in a fresh context. */
function viewerRequest(data) {
  const code = compact(source('cloudfront-request.js'));
  assert.ok(code.includes('/*DATA*/\n'), 'the request function has its /*DATA*/ line');
  const script = new vm.Script(`"use strict";${code.replace('/*DATA*/\n', data)}`);
  return (request) => {
    const context = vm.createContext({ Buffer, console: { log() {} } });
    script.runInContext(context);
    context.event = JSON.parse(JSON.stringify({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '127.0.0.1' }, request }));
    return JSON.parse(vm.runInContext('JSON.stringify(handler(event))', context));
  };
}

/** A viewer-request event's request: repeated fields as multiValue. */
function request(uri, fields = {}, { method = 'GET', query } = {}) {
  const headers = {};
  for (const [name, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    headers[name] = Array.isArray(v) ? { value: v[0], multiValue: v.map((value) => ({ value })) } : { value: v };
  }
  const querystring = {};
  for (const part of query ? query.split('&') : []) {
    const eq = part.indexOf('=');
    querystring[eq < 0 ? part : part.slice(0, eq)] = { value: eq < 0 ? '' : part.slice(eq + 1) };
  }
  return { method, uri, querystring, headers, cookies: {} };
}

const hex = (b64) => Buffer.from(b64, 'base64').toString('hex');
const SUFFIX = { br: '.br', zstd: '.zst', gzip: '.gz' };

test('the functions are ES5 and the request function holds its routes in 10 KB', () => {
  for (const name of ['cloudfront-request.js', 'cloudfront-response.js']) {
    const code = compact(source(name));
    assert.ok(/^[\x00-\x7f]*$/.test(code), `${name} is ASCII`);
    assert.ok(code.includes('function handler('), name);
    for (const modern of ['=>', '?.', '??', '...', 'const ', 'let ', 'class ']) assert.ok(!code.includes(modern), `${modern} in ${name}`);
    new vm.Script(code.replace('/*DATA*/\n', 'var B = "/", M = null, P = "404.html", N = null, D = [], A = {};\n'));
  }
  assert.ok(compact(source('cloudfront-request.js')).length < 5000);
});

test('Accept-Encoding and Available-Dictionary (fixtures/accept-encoding.json): the function picks what serve::Index picks', () => {
  const t = fixture('accept-encoding.json');
  const routes = Object.entries(t.offers).map(([name, offer]) => ({
    key: `app-3f2a9c1b.${name}.js`,
    identity: offer.identity,
    variants: [...offer.variants].sort((a, b) => a[1] - b[1]),
    deltas: (offer.deltas ?? []).map(([c, d, size]) => [c, dictionary(t, d), size]).sort((a, b) => a[2] - b[2]),
  }));
  const handler = viewerRequest(routingData('/', undefined, routes));
  assert.ok(t.cases.length >= 62, `${t.cases.length} rows`);
  for (const row of t.cases) {
    const key = `app-3f2a9c1b.${row.offer}.js`;
    const ad = row.dictionary === undefined ? undefined : [row.dictionary].flat().map((d) => dictionary(t, d));
    const r = handler(request(`/${key}`, { 'accept-encoding': row.accept ?? undefined, 'available-dictionary': ad?.length === 1 ? ad[0] : ad }));
    let want = `/${key}`;
    if (row.want === '406') want = 406;
    else if (SUFFIX[row.want]) want += SUFFIX[row.want];
    else if (row.want !== 'identity') want += `.${hex(parseAvailableDictionary(ad[0]))}.${row.want}`;
    assert.equal(r.statusCode ?? r.uri, want, `${JSON.stringify(row)} (Accept-Encoding ${JSON.stringify(accept(row))})`);
  }
});

test('request paths (fixtures/request-paths.json): 400 where serve::path refuses, the 404 page for a dot-file', () => {
  const { cases } = fixture('request-paths.json');
  const routes = [{ key: '404.html', identity: 10, variants: [], deltas: [] }];
  const handler = viewerRequest(routingData('/', 'precompress-manifest.json', routes));
  let run = 0;
  for (const c of cases) {
    // A viewer-request URI always starts with `/`.
    if (c.error === 'not-absolute') continue;
    const r = handler(request(c.path));
    const got = r.statusCode ?? (r.uri === '/404.html' ? 'the 404 page' : 'on');
    const want = c.error === undefined ? 'on' : c.error === 'hidden' ? 'the 404 page' : 400;
    assert.equal(got, want, JSON.stringify(c));
    run++;
  }
  assert.ok(run >= 35, `${run} rows`);
});

test('routes (fixtures/routes.json), in front of a bucket of the folder: what serve::route serves', () => {
  const t = fixture('routes.json');
  const dict = Buffer.alloc(32, 0xab).toString('base64');
  const hidden = (f) => f.split('/').some((s) => s.startsWith('.') && s !== '.well-known');
  const bucket = new Set(t.files.filter((f) => !hidden(f) && f !== t.manifest));
  const routes = t.files
    .filter((f) => f.endsWith('.html'))
    .map((key) => ({ key, identity: 100, variants: [], deltas: [] }))
    .concat([{ key: 'assets/app.js', identity: 1000, variants: [['br', 300]], deltas: [['dcb', `:${dict}:`, 50]] }])
    .sort((a, b) => (a.key < b.key ? -1 : 1));
  let run = 0;
  for (const c of t.cases) {
    if (c.edge?.skip) continue;
    const base = c.base ?? '/';
    const handler = viewerRequest(routingData(base, t.manifest, routes));
    const r = handler(request(c.path, {}, { method: c.method, query: c.query }));
    let got;
    if (r.statusCode !== undefined) {
      got = { status: r.statusCode };
      if (r.headers.location) got.location = r.headers.location.value;
    } else {
      // The bucket has the object (the 404 page's says 404), or CloudFront's custom error response is the 404 page.
      const key = r.uri.startsWith(base) ? decodeURIComponent(r.uri.slice(base.length)) : undefined;
      got = bucket.has(key) ? { status: key === '404.html' ? 404 : 200, file: key } : { status: 404, file: '404.html' };
    }
    assert.deepEqual(got, c.edge?.want ?? c.by_listing?.want ?? c.want, JSON.stringify(c));
    run++;
  }
  assert.ok(run >= 40, `${run} rows`);
});

test('the response function puts back what the bucket could not store, and the 404 page\'s status', () => {
  const script = new vm.Script(`"use strict";${compact(source('cloudfront-response.js'))}`);
  const context = vm.createContext({});
  script.runInContext(context);
  const meta = (n, value) => [`x-amz-meta-precompress-${n}`, { value }];
  context.event = {
    response: {
      statusCode: 200,
      statusDescription: 'OK',
      headers: Object.fromEntries([
        meta('etag', '"e"'), meta('vary', 'Accept-Encoding'), meta('status', '404'),
        ['etag', { value: '"md5"' }], ['content-encoding', { value: 'br' }], ['accept-ranges', { value: 'bytes' }],
      ]),
    },
  };
  const s = vm.runInContext('handler(event)', context);
  assert.equal(s.statusCode, 404);
  assert.equal(s.headers.etag.value, '"e"');
  assert.equal(s.headers.vary.value, 'Accept-Encoding');
  assert.equal(s.headers['accept-ranges'], undefined);
  assert.equal(s.headers['x-content-type-options'].value, 'nosniff');
  assert.deepEqual(Object.keys(s.headers).filter((n) => n.startsWith('x-amz-meta-')), []);
});

test("the response function sends a page's kept policy to a Chromium navigation only (serve::keeps_page)", () => {
  const script = new vm.Script(`"use strict";${compact(source('cloudfront-response.js'))}`);
  const context = vm.createContext({});
  script.runInContext(context);
  const kept = 'private, max-age=0, stale-while-revalidate=2592000';
  const answer = (request) => {
    context.event = {
      request: { headers: request },
      response: {
        statusCode: 200,
        statusDescription: 'OK',
        headers: { 'cache-control': { value: 'no-cache' }, 'x-amz-meta-precompress-page': { value: kept } },
      },
    };
    const s = vm.runInContext('handler(event)', context);
    assert.equal(s.headers['x-amz-meta-precompress-page'], undefined);
    return s.headers['cache-control'].value;
  };
  assert.equal(answer({ 'sec-fetch-dest': { value: 'document' }, 'sec-ch-ua': { value: '"Chromium";v="156"' } }), kept);
  assert.equal(answer({ 'sec-fetch-dest': { value: 'document' } }), 'no-cache');
  assert.equal(answer({ 'sec-fetch-dest': { value: 'empty' }, 'sec-ch-ua': { value: '"Chromium"' } }), 'no-cache');
  assert.equal(answer({}), 'no-cache');
});
