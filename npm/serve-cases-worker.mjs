// The shared serving table (fixtures/serve-cases.json) against the Cloudflare
// Worker (precompressor/worker) in workerd, through miniflare 3 with the site
// deployed as Workers Static Assets, the Worker run first for every request
// (wrangler's `run_worker_first = true`) and assets' defaults otherwise.
// Every case goes over real HTTP with the runner's raw node:http client
// (never dispatchFetch, which decodes bodies):
//
//   node serve-cases-worker.mjs TABLE worker worker-direct
//
// worker         miniflare's own port: its imitation of Cloudflare's edge runs in
//                front (client Accept-Encoding moved to request.cf, URL parsed
//                again, responses re-encoded to the client's first of gzip/br).
//                The cases that imitation rewrites are skipped, each with why.
//                Also checks that a missing or broken manifest is a 500 naming it.
// worker-direct  workerd's own socket for the Worker (miniflare's
//                unsafeDirectSockets), the same Worker and ASSETS binding with no
//                edge imitation in front: every case of the table but the two
//                absolute-form targets workerd itself refuses (WORKERD).
//
// Run from a project where precompressor and miniflare@3 are installed
// (npm/test.sh); PRECOMPRESS_BIN as for serve-cases.mjs. Exits 1 on any failure.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addTarget, main, request } from './serve-cases.mjs';

/**
 * What miniflare 3's edge imitation (entry.worker.js: getUserRequest, then
 * ensureAcceptableEncoding on the Worker's answer) does to a case, by name:
 * a response of a compressible type (or none) that is identity, gzip or br
 * is decoded and re-encoded to the first of gzip/br the client lists, chunked,
 * the Worker's ETag and Content-Length kept. Seen on every case named here
 * (worker-direct answers each as the table says); a new case it rewrites
 * fails until it is added.
 */
export const EDGE = {
  'without zstd, brotli': 'br re-encoded as gzip, the first of gzip/br the client lists',
  'identity;q=0 and nothing else acceptable: 406': 'the 406 replaced by a 415',
  'a page: its variant, revalidated': 'br re-encoded as gzip',
  "a page is the dictionary of its own URLs' next version, with a delta against its identical earlier self (Available-Dictionary in Vary), and Sec-Fetch-Dest in it": 'br re-encoded as gzip',
  'a Chromium navigation may keep a page as a dictionary, and revalidates it before each use': 'br re-encoded as gzip',
  'a navigation of a browser with no RFC 9842 (no Sec-CH-UA): no-cache': 'br re-encoded as gzip',
  'a fetch() of a page in Chromium: no-cache, never the kept copy': 'br re-encoded as gzip',
  '/about is about.html, the same page to a navigation': 'br re-encoded as gzip',
  'a file too small for variants: identity, no Vary': 'identity gzipped on the fly',
  'HEAD: the headers of GET, no body': 'Content-Encoding br rewritten to gzip',
  'the root is its index.html': 'br re-encoded as gzip',
  "a folder's index.html": 'br re-encoded as gzip',
  '/about is about.html': 'br re-encoded as gzip',
  'nothing there: the 404 page with 404': 'br re-encoded as gzip',
  'the 404 page is never a 304': 'br re-encoded as gzip',
  'a variant is not served by its own name': 'br re-encoded as gzip',
  "If-None-Match with the representation's ETag: 304 with its validators": 'Content-Encoding gzip added to the 304',
  'the code dictionary asked by Chromium holding no dictionary (an idle fetch before the chunk it is a delta against is stored): 204, kept nowhere, so it asks again on its next page': 'Content-Encoding gzip added to the 204',
  "If-None-Match with another representation's ETag: the body": 'br re-encoded as gzip',
  'traversal is refused': 'the URL parsed again, %2e%2e resolved, before the Worker sees it',
};

/**
 * What workerd's HTTP server does before any Worker runs, on either socket:
 * an absolute-form target naming another host is an invalid URL to it, its
 * own 500 (kj/compat/url.c++). On Cloudflare the edge takes the request
 * first. The Worker reads the path of any request.url it is given
 * (negotiate.js's splitTarget).
 */
export const WORKERD = {
  'an absolute-form target is served by its path (RFC 9112 3.2.2)': "workerd's own 500 (invalid URL) before the Worker runs",
  'an absolute-form target of a folder is redirected by its path': "workerd's own 500 (invalid URL) before the Worker runs",
};

/** Miniflare running precompressor/worker over `site`; `direct` adds workerd's own socket for it. */
async function startWorker(site, { direct = false, bindings = {}, stdio } = {}) {
  const { Miniflare } = await import('miniflare');
  const script = fileURLToPath(import.meta.resolve('precompressor/worker'));
  const lib = path.dirname(script);
  const mf = new Miniflare({
    modulesRoot: lib,
    modules: [
      { type: 'ESModule', path: script },
      { type: 'ESModule', path: path.join(lib, 'negotiate.js') },
      { type: 'ESModule', path: path.join(lib, 'content-types.js') },
    ],
    compatibilityDate: '2025-07-01',
    bindings: { CF_VERSION_METADATA: { id: 'serve-cases', tag: '', timestamp: new Date().toISOString() }, ...bindings },
    assets: {
      directory: site,
      binding: 'ASSETS',
      routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
    },
    ...(direct ? { unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }] } : {}),
    ...(stdio ? { handleRuntimeStdio: stdio } : {}),
  });
  const url = direct ? await mf.unsafeGetDirectURL() : await mf.ready;
  return { url: url.href, close: () => mf.dispose() };
}

/** A missing, unparsable or invalid manifest: a 500 naming it and the cause, and logged; throws if not. */
async function checkManifestErrors() {
  const cases = [
    ['no manifest', undefined, 'cannot read the manifest (the ASSETS binding answered 404)'],
    ['a manifest that is not JSON', '{"version": 1, "files": ', 'invalid manifest: '],
    ['a manifest with a path out of the folder', JSON.stringify({ version: 1, files: { '../secret.txt': { content_type: 'text/plain', etag: '"a"', size: 1 } } }), 'invalid manifest: file "../secret.txt": dot segment'],
    [
      'a manifest listing a dot-file as a variant',
      JSON.stringify({ version: 1, files: { 'index.html': { content_type: 'text/html', etag: '"a"', size: 12, encodings: [{ coding: 'br', path: '.env', size: 1, etag: '"b"' }] } } }),
      'invalid manifest: file "index.html": br variant path ".env" is not "index.html.br"',
    ],
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'precompress-worker-manifest-'));
  try {
    for (const [i, [what, manifest, cause]] of cases.entries()) {
      const site = path.join(dir, String(i));
      fs.mkdirSync(site);
      fs.writeFileSync(path.join(site, 'index.html'), '<p>home</p>\n');
      if (manifest !== undefined) fs.writeFileSync(path.join(site, 'precompress-manifest.json'), manifest);
      let logged = '';
      const stdio = (out, err) => {
        for (const s of [out, err]) s.on('data', (c) => (logged += c));
      };
      const server = await startWorker(site, { stdio });
      let r;
      try {
        r = await request(server.url, 'GET', '/', {});
        // workerd's log reaches the pipe a moment after the answer.
        for (let n = 0; n < 50 && !logged.includes(cause); n++) await new Promise((ok) => setTimeout(ok, 20));
      } finally {
        await server.close();
      }
      const body = r.body.toString('utf8');
      const said = `/precompress-manifest.json: ${cause}`;
      if (r.status !== 500 || !body.includes(said)) throw new Error(`worker: ${what}: ${r.status} ${JSON.stringify(body)}, expected 500 saying ${JSON.stringify(said)}`);
      if (!logged.includes(said)) throw new Error(`worker: ${what}: answered 500 but logged ${JSON.stringify(logged)}, not ${JSON.stringify(said)}`);
      console.log(`worker: ${what}: 500 "${body.trim().split('\n')[1]}", logged`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const supports = ['hosts', 'conditional', 'range', 'pages'];

addTarget('worker', async () => {
  await checkManifestErrors();
  const skip = Object.fromEntries([
    ...Object.entries(EDGE).map(([name, why]) => [name, `miniflare's edge imitation: ${why}`]),
    ...Object.entries(WORKERD),
  ]);
  return { supports, skip, start: (site) => startWorker(site) };
});

addTarget('worker-direct', async () => ({ supports, skip: WORKERD, start: (site) => startWorker(site, { direct: true }) }));

if (import.meta.url === `file://${process.argv[1]}`) {
  await main(process.argv.slice(2));
}
