// The shared serving table (fixtures/serve-cases.json) against the Cloudflare
// Pages recipe (precompressor/pages) in wrangler's local runtime: a Pages
// project whose `functions/[[path]].js` is the one line docs/servers.md gives,
// run by `wrangler pages dev SITE` (workerd, with Pages' asset server as
// env.ASSETS), every case over real HTTP on its port:
//
//   node serve-cases-pages.mjs TABLE pages
//   node serve-cases-pages.mjs --serve SITE      (prints the URL; for check --url)
//
// wrangler's port is miniflare's imitation of Cloudflare's edge, as for the
// Worker's `worker` target (serve-cases-worker.mjs, EDGE: the cases it
// rewrites, each with why). Needs wrangler 4 (Node 20+) installed where this
// runs; .ci/e2e.sh installs it into target/edge. wrangler fetches nothing it
// needs: without the network it uses a placeholder `request.cf`, and the
// client's Accept-Encoding is read from the header. PRECOMPRESS_BIN as for
// serve-cases.mjs. Exits 1 on any failure.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addTarget, main } from './serve-cases.mjs';
import { EDGE, WORKERD } from './serve-cases-worker.mjs';

/** The user's function file: the recipe of docs/servers.md, as it is. */
const FUNCTION = "export { onRequest } from 'precompressor/pages';\n";

/** A free loopback port (wrangler takes a port, not 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** `wrangler pages dev SITE` in a Pages project with the recipe: { url, close }. */
export async function startPages(site) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'precompress-pages-'));
  fs.mkdirSync(path.join(root, 'functions'));
  // PRECOMPRESS_FUNCTION: the user's own file (e2e/edge/preview.sh), or
  // `none`: the folder as Pages serves it alone (bench/edge_latency.sh).
  const own = process.env.PRECOMPRESS_FUNCTION;
  if (own !== 'none') fs.writeFileSync(path.join(root, 'functions', '[[path]].js'), own ? fs.readFileSync(own) : FUNCTION);
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'pages-site', private: true, type: 'module', dependencies: { precompressor: '*' } }));
  const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.resolve('precompressor/pages'))));
  fs.mkdirSync(path.join(root, 'node_modules'));
  fs.symlinkSync(pkg, path.join(root, 'node_modules', 'precompressor'), 'dir');
  const wrangler = fileURLToPath(import.meta.resolve('wrangler/bin/wrangler.js'));
  const port = await freePort();
  const child = spawn(process.execPath, [wrangler, 'pages', 'dev', site, '--ip', '127.0.0.1', '--port', String(port), '--compatibility-date', '2025-07-01', '--log-level', 'warn', '--show-interactive-dev-session', 'false'], {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', XDG_CONFIG_HOME: path.join(root, '.config') },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  for (const s of [child.stdout, child.stderr]) s.on('data', (c) => (log += c));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const close = async () => {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {}
    await exited;
    fs.rmSync(root, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler pages dev exited (${child.exitCode}):\n${log}`);
    try {
      const r = await fetch(new URL('/precompress-manifest.json', url));
      await r.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) {
        await close();
        throw new Error(`wrangler pages dev did not answer on ${url} within 60 s:\n${log}`);
      }
      await new Promise((ok) => setTimeout(ok, 200));
    }
  }
  return { url, close };
}

/**
 * A Pages deployment shows a function no time of its own (no version
 * metadata binding, unlike a Worker's): no Last-Modified, so the cases that
 * need one. createPagesFunction({ lastModified }) sets one.
 */
const NO_DATE = 'no Last-Modified: a Pages deployment shows a function no time of its own';
const DATES = Object.fromEntries(
  [
    'a browser gets the smallest variant it accepts',
    'If-Modified-Since later than the file: 304',
    'If-Unmodified-Since before the file: 412',
    'If-Modified-Since in the RFC 850 form, its year 60 read as 2060',
    'If-Modified-Since in the asctime form',
  ].map((name) => [name, NO_DATE]),
);

/** wrangler's own dev proxy, not Pages: its bytes are kept, its length is not. */
const HTML =
  "wrangler's dev proxy (templates/startDevWorker/ProxyWorker.ts) passes every text/html answer through HTMLRewriter for live reload, which drops Content-Length";

addTarget('pages', async () => ({
  supports: ['hosts', 'conditional', 'range', 'pages'],
  skip: Object.fromEntries([
    ...Object.entries(EDGE).map(([name, why]) => [name, `miniflare's edge imitation: ${why}`]),
    ...Object.entries(WORKERD),
    ...Object.entries(DATES),
  ]),
  unlengthed: (r) => (r.headers['content-type']?.startsWith('text/html') ? HTML : undefined),
  start: (site) => startPages(site),
}));

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === '--serve') {
    const s = await startPages(path.resolve(process.argv[3]));
    console.log(`pages: ${s.url}`);
    process.on('SIGTERM', async () => {
      await s.close();
      process.exit(0);
    });
  } else {
    await main(process.argv.slice(2));
  }
}
