// The shared serving table (fixtures/serve-cases.json) against the CloudFront
// Functions `precompress objects SITE --edge cloudfront` and
// `--edge cloudfront-response` print, in front of an S3 bucket holding what
// `precompress objects SITE --format json` lists, both emulated in Node:
//
//   node serve-cases-edge.mjs TABLE edge
//
// What is emulated, and how far (an emulation of documented behaviour, not AWS):
// - CloudFront: the behavior allows GET and HEAD (anything else is CloudFront's
//   own 403, before any function); the viewer-request event is built from the
//   real request in the documented shape (lower-case header names, repeated
//   fields as multiValue, cookies apart, the URI and query as received); the
//   function runs in a node:vm context with only what cloudfront-js-2.0 gives
//   a function (Buffer, console.log; no require, process, timers or network),
//   fresh for each event; a response it returns goes straight to the viewer.
//   The rewritten URI is the cache key (cache policy without headers, cookies
//   or query strings; Compress off). A 403 or 404 from the origin is the custom
//   error response /404.html with 404, which no function sees. The
//   viewer-response function runs on every other response.
// - S3 with origin access control and no s3:ListBucket: a missing key is 403;
//   an object comes back with the Content-Type, Content-Encoding and
//   Cache-Control it was uploaded with, its metadata as x-amz-meta-*, S3's own
//   ETag (the quoted MD5 of its bytes), Last-Modified (the upload), and
//   Accept-Ranges: bytes.
// Before the table, the viewer-request function is held to negotiate.js (the
// JS port of the crate's serving decisions) on every manifest asset, for every
// Accept-Encoding of fixtures/accept-encoding.json (beside TABLE) and 7
// Available-Dictionary values: a disagreement fails the run.
//
// PRECOMPRESS_BIN as for serve-cases.mjs. Exits 1 on any failure.

import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { addTarget, listen, main } from './serve-cases.mjs';

/** CloudFront Functions' size quota. */
const LIMIT = 10 * 1024;
/** The custom error response the README sets up: 403 and 404 from the origin. */
const ERROR_PAGE = '/404.html';

const precompress = (...args) =>
  execFileSync(process.env.PRECOMPRESS_BIN ?? path.resolve('node_modules/.bin/precompress'), args, {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });

/** Headers CloudFront never shows a function (and refuses from one). */
const DISALLOWED = /^(connection|expect|keep-alive|proxy-authenticate|proxy-authorization|proxy-connection|trailer|upgrade|x-accel-.*|x-amz-cf-.*|x-amzn-.*|x-cache|x-edge-.*|x-forwarded-proto|x-real-ip)$/;
const READ_ONLY = { 'viewer-request': ['content-length', 'host', 'transfer-encoding', 'via'], 'viewer-response': ['warning', 'via'] };

/**
 * A CloudFront Function: `(event) => result`, each call in a fresh context
 * that offers only what cloudfront-js-2.0 does. Refused, as CloudFront
 * refuses to publish it, past 10 KB.
 */
function cloudFrontFunction(source, name) {
  const size = Buffer.byteLength(source);
  if (size > LIMIT) throw new Error(`${name}: ${size} bytes, over CloudFront Functions' 10 KB`);
  // The runtime is strict: an undeclared global is an error, not state kept
  // from one event to the next.
  const script = new vm.Script(`"use strict";${source}`, { filename: name });
  const context = vm.createContext({ Buffer, console: { log: (m) => void m } });
  return (event) => {
    // Evaluated again for each event: every global starts over.
    script.runInContext(context, { timeout: 1000 });
    // The event crosses into the runtime as data, and the result back out.
    context.eventJson = JSON.stringify(event);
    return JSON.parse(vm.runInContext('JSON.stringify(handler(JSON.parse(eventJson)))', context, { timeout: 1000 }));
  };
}

/** `fields[name]` as the event shapes a (possibly repeated) field. */
function addField(fields, name, value) {
  const f = fields[name];
  if (!f) {
    fields[name] = { value };
    return;
  }
  f.multiValue ??= [{ value: f.value }];
  f.multiValue.push({ value });
}

/** The viewer-request event for a node:http request, as CloudFront builds it. */
function viewerRequestEvent(req) {
  const q = req.url.indexOf('?');
  const uri = q < 0 ? req.url : req.url.slice(0, q);
  const querystring = {};
  for (const part of q < 0 ? [] : req.url.slice(q + 1).split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    addField(querystring, eq < 0 ? part : part.slice(0, eq), eq < 0 ? '' : part.slice(eq + 1));
  }
  const headers = {};
  const cookies = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    const value = req.rawHeaders[i + 1];
    if (name === 'cookie') {
      for (const c of value.split(';')) {
        const eq = c.indexOf('=');
        if (eq > 0) addField(cookies, c.slice(0, eq).trim(), c.slice(eq + 1).trim());
      }
    } else if (!DISALLOWED.test(name)) {
      addField(headers, name, value);
    }
  }
  return {
    version: '1.0',
    context: { distributionDomainName: 'd111111abcdef8.cloudfront.net', distributionId: 'EDFDVBD6EXAMPLE', eventType: 'viewer-request', requestId: randomBytes(12).toString('base64url') },
    viewer: { ip: req.socket.remoteAddress },
    request: { method: req.method, uri, querystring, headers, cookies },
  };
}

/** What CloudFront's validation of a function's result refuses (a 502), or undefined. */
function invalid(eventType, before, after) {
  const headers = after.headers ?? {};
  for (const name of Object.keys(headers)) {
    if (name !== name.toLowerCase()) return `header name ${name} is not lower case`;
    if (DISALLOWED.test(name)) return `disallowed header ${name}`;
  }
  if (after.statusCode === undefined) {
    if (eventType !== 'viewer-request') return 'no statusCode';
    if (typeof after.uri !== 'string' || !after.uri.startsWith('/')) return `uri ${after.uri} does not start with /`;
    if (after.method !== before.method) return 'method changed';
  } else if (!Number.isInteger(after.statusCode)) {
    return `statusCode ${after.statusCode} is not an integer`;
  }
  // A response made in viewer request is new: only a returned request keeps the request's fields.
  const same = eventType === 'viewer-response' || after.statusCode === undefined;
  for (const name of same ? READ_ONLY[eventType] : []) {
    if (JSON.stringify(before.headers?.[name]) !== JSON.stringify(headers[name])) return `read-only header ${name} changed`;
  }
  return undefined;
}

/** An S3 bucket: the objects the upload list names, with the headers S3 keeps. */
function bucket(site) {
  const objects = new Map();
  for (const line of precompress('objects', site, '--format', 'json').split('\n')) {
    if (!line) continue;
    const o = JSON.parse(line);
    const body = fs.readFileSync(path.join(site, o.file));
    const headers = { 'content-type': o.content_type, 'cache-control': o.cache_control };
    if (o.content_encoding) headers['content-encoding'] = o.content_encoding;
    for (const [k, v] of Object.entries(o.metadata)) headers[`x-amz-meta-${k.toLowerCase()}`] = v;
    headers.etag = `"${createHash('md5').update(body).digest('hex')}"`;
    headers['last-modified'] = new Date().toUTCString();
    if (objects.has(o.key)) throw new Error(`the upload list names ${o.key} twice`);
    objects.set(o.key, { body, headers });
  }
  return {
    size: objects.size,
    /** A GET of the request path `uri`, as S3 decodes it. */
    get(uri) {
      let key;
      try {
        key = uri.slice(1).split('/').map(decodeURIComponent).join('/');
      } catch {
        return { status: 400, headers: { 'content-type': 'application/xml' }, body: Buffer.from('<Error><Code>InvalidURI</Code></Error>') };
      }
      const o = objects.get(key);
      if (!o) return { status: 403, headers: { 'content-type': 'application/xml' }, body: Buffer.from('<Error><Code>AccessDenied</Code></Error>') };
      return {
        status: 200,
        headers: { ...o.headers, 'content-length': String(o.body.length), 'accept-ranges': 'bytes', server: 'AmazonS3', 'x-amz-request-id': randomBytes(8).toString('hex').toUpperCase() },
        body: o.body,
      };
    },
  };
}

/** `example-header-name` as CloudFront writes it: `Example-Header-Name`. */
const titleCase = (name) => name.replace(/(^|-)([a-z])/g, (_, d, c) => d + c.toUpperCase());

/** A distribution: the two functions on one behavior in front of `origin`. */
function distribution(onRequest, onResponse, origin) {
  const cache = new Map();
  const fetchCached = (uri) => {
    const hit = cache.get(uri);
    if (hit) return { ...hit, cache: 'Hit' };
    const r = origin.get(uri);
    if (r.status === 200) cache.set(uri, r);
    return { ...r, cache: 'Miss' };
  };
  const send = (req, res, status, text, headers, body, cacheResult) => {
    const out = {};
    for (const [n, v] of Object.entries(headers)) out[titleCase(n)] = v;
    out['Content-Length'] = String(body.length);
    out.Via = '1.1 0123456789abcdef.cloudfront.net (CloudFront)';
    if (cacheResult) out['X-Cache'] = `${cacheResult} from cloudfront`;
    res.writeHead(status, text, out);
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const fields = (h) => Object.fromEntries(Object.entries(h).map(([n, v]) => [n, v.multiValue ? v.multiValue.map((x) => x.value).join(', ') : v.value]));
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(req, res, 403, 'Forbidden', { 'content-type': 'text/html' }, Buffer.from('This distribution is not configured to allow the HTTP request method that was used for this request.'));
    }
    const event = viewerRequestEvent(req);
    const r = onRequest(event);
    const bad = invalid('viewer-request', event.request, r);
    if (bad) return send(req, res, 502, 'Bad Gateway', {}, Buffer.from(`viewer-request function: ${bad}`));
    if (r.statusCode !== undefined) {
      const body = r.body === undefined ? Buffer.alloc(0) : typeof r.body === 'string' ? Buffer.from(r.body) : Buffer.from(r.body.data, r.body.encoding === 'base64' ? 'base64' : 'utf8');
      return send(req, res, r.statusCode, r.statusDescription, fields(r.headers ?? {}), body, 'FunctionGeneratedResponse');
    }
    let got = fetchCached(r.uri);
    if (got.status === 403 || got.status === 404) {
      const page = fetchCached(ERROR_PAGE);
      if (page.status === 200) return send(req, res, 404, 'Not Found', page.headers, page.body, 'Error');
      return send(req, res, got.status, http.STATUS_CODES[got.status], got.headers, got.body, 'Error');
    }
    if (got.status >= 400) return send(req, res, got.status, http.STATUS_CODES[got.status], got.headers, got.body, 'Error');
    const response = { statusCode: got.status, statusDescription: 'OK', headers: {}, cookies: {} };
    for (const [n, v] of Object.entries(got.headers)) response.headers[n] = { value: v };
    const responseEvent = { ...event, context: { ...event.context, eventType: 'viewer-response' }, request: r, response };
    const s = onResponse(responseEvent);
    const sbad = invalid('viewer-response', response, s);
    if (sbad) return send(req, res, 502, 'Bad Gateway', {}, Buffer.from(`viewer-response function: ${sbad}`));
    send(req, res, s.statusCode, s.statusDescription, fields(s.headers), got.body, got.cache);
  };
}

/**
 * Every Accept-Encoding of fixtures/accept-encoding.json (the rule table the
 * Rust and JS unit tests read, found beside the serving table given), as a
 * client sends it: undefined for none, a list for repeated fields.
 */
function acceptValues(tablePath) {
  const t = JSON.parse(fs.readFileSync(path.join(path.dirname(path.resolve(tablePath)), 'accept-encoding.json'), 'utf8'));
  const values = new Map();
  for (const row of t.cases) values.set(JSON.stringify(row.accept), row.accept ?? undefined);
  return [...values.values()];
}
const ACCEPT = acceptValues(process.argv[2]);

/** The viewer-request function against negotiate.js on every asset of `site`: the mismatches. */
async function differential(site, onRequest) {
  const lib = path.dirname(fileURLToPath(import.meta.resolve('precompressor/serve')));
  const { indexManifest, select } = await import(pathToFileURL(path.join(lib, 'negotiate.js')).href);
  const manifestPath = path.join(site, 'precompress-manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const index = indexManifest(manifestPath, manifest);
  const held = [...new Set(Object.values(manifest.files).flatMap((a) => (a.deltas ?? []).map((d) => d.dictionary)))];
  const dictionaries = [undefined, ...held, ...held.map((d) => ` \t${d}  `), ':AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=:', ':AQEB:', 'not a hash', ...held.map((d) => [d, d])];
  const wrong = [];
  let compared = 0;
  for (const [key, entry] of index.assets) {
    const routed = entry.variants.length > 0 || entry.deltas.length > 0 || key.endsWith('.html');
    for (const ae of ACCEPT) {
      for (const ad of dictionaries) {
        const headers = {};
        for (const [name, v] of [['accept-encoding', ae], ['available-dictionary', ad]]) {
          for (const value of v === undefined ? [] : [v].flat()) addField(headers, name, value);
        }
        const uri = `/${key.split('/').map(encodeURIComponent).join('/')}`;
        const r = onRequest({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '127.0.0.1' }, request: { method: 'GET', uri, querystring: {}, headers, cookies: {} } });
        const got = r.statusCode === 406 ? '406' : r.statusCode ? `status ${r.statusCode}` : decodeURIComponent(r.uri.slice(1));
        // A repeated Available-Dictionary is no valid value; a joined Accept-Encoding is the fields'.
        const s = select(entry, ae === undefined ? undefined : [ae].flat().join(','), Array.isArray(ad) ? undefined : ad);
        let want = s.notAcceptable ? '406' : s.representation.path;
        // What the function does not route goes on unchanged, whatever was accepted.
        if (!routed) want = key;
        compared++;
        if (got !== want) wrong.push(`${key} with Accept-Encoding ${JSON.stringify(ae)}, Available-Dictionary ${JSON.stringify(ad)}: the function gives ${got}, negotiate.js ${want}`);
      }
    }
  }
  return { compared, wrong, assets: index.assets.size, dictionaries: dictionaries.length };
}

addTarget('edge', async () => ({
  supports: ['hosts', 'pages'],
  skip: {
    'nothing there: the 404 page with 404':
      'a key the function does not know goes on to S3, whose 403 CloudFront turns into the custom error response /404.html: uncompressed, with S3 ETag, no function runs on it',
    'POST is not allowed': "the behavior allows GET and HEAD: CloudFront's own 403 comes before any function",
    // The emulation puts the target in the event as it came; what CloudFront
    // makes of these before a function sees them is not documented, so not guessed.
    'an absolute-form target is served by its path (RFC 9112 3.2.2)': "what CloudFront puts in the event's uri for an absolute-form target is not documented",
    'an absolute-form target of a folder is redirected by its path': "what CloudFront puts in the event's uri for an absolute-form target is not documented",
    'a fragment in the target is not part of the path': "what CloudFront does with a `#` in the target is not documented",
    'a fragment after the query is not part of the query': "what CloudFront does with a `#` in the target is not documented",
  },
  start: async (site) => {
    const request = precompress('objects', site, '--edge', 'cloudfront');
    const onRequest = cloudFrontFunction(request, 'viewer-request.js');
    const onResponse = cloudFrontFunction(precompress('objects', site, '--edge', 'cloudfront-response'), 'viewer-response.js');
    const { compared, wrong, assets, dictionaries } = await differential(site, onRequest);
    const origin = bucket(site);
    console.log(`edge: the viewer-request function is ${Buffer.byteLength(request)} bytes (limit ${LIMIT}); the bucket holds ${origin.size} objects`);
    if (wrong.length) {
      console.log(`edge: the viewer-request function and negotiate.js disagree on ${wrong.length} of ${compared} requests`);
      for (const w of wrong.slice(0, 20)) console.log(`  FAIL edge: ${w}`);
      process.exitCode = 1;
    } else {
      console.log(`edge: it picks what negotiate.js picks for ${assets} assets x ${ACCEPT.length} Accept-Encoding x ${dictionaries} Available-Dictionary values (${compared} requests)`);
    }
    return listen(http.createServer(distribution(onRequest, onResponse, origin)));
  },
}));

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
