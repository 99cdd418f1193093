// The shared serving table (fixtures/serve-cases.json) for JavaScript
// servers: builds its releases with the real binary, then sends every case to
// a server and compares status, body and headers, as tests/serve_cases.rs
// does for `precompress serve` and the tower Service. npm/test.sh copies this
// file into a project where precompressor, Express, Fastify and miniflare are
// installed from the registry, and runs it there:
//
//   node serve-cases.mjs TABLE TARGET...      (TARGET: node, express, fastify, hono)
//
// PRECOMPRESS_BIN names the binary (default: the project's
// node_modules/.bin/precompress). Exits 1 on any failure.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

/** The table's file templates: `{i}`, `{page}`, `{lines}`. */
function fileText(t, spec) {
  if (spec.page !== undefined) {
    let lines = '';
    for (let i = 1; i <= t.page_lines; i++) lines += t.page_line.replaceAll('{page}', spec.page).replaceAll('{i}', String(i));
    return t.page.replaceAll('{page}', spec.page).replaceAll('{lines}', lines);
  }
  let out = '';
  for (let i = 1; i <= (spec.repeat ?? 1); i++) out += spec.text.replaceAll('{i}', String(i));
  return out + (spec.tail ?? '');
}

const OURS = /\.(br|zst|gz|dcb|dcz)$|^precompress-manifest\.json$|^\.precompress/;

function copySources(from, to) {
  for (const e of fs.readdirSync(from, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath ?? e.path, e.name);
    const rel = path.relative(from, abs);
    if (OURS.test(rel)) continue;
    fs.mkdirSync(path.dirname(path.join(to, rel)), { recursive: true });
    fs.copyFileSync(abs, path.join(to, rel));
  }
}

function precompress(bin, root, dir, release) {
  const args = release.args.map((a) => (fs.existsSync(path.join(root, a)) ? path.join(root, a) : a));
  execFileSync(bin, ['--no-config', '-q', dir, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
}

/** Builds every release of table `t` under `root`; returns the last one's folder. */
export function build(t, root, bin) {
  let last;
  for (const r of t.releases) {
    const dir = path.join(root, r.dir);
    if (r.copy) copySources(path.join(root, r.copy), dir);
    for (const gone of r.remove ?? []) fs.rmSync(path.join(dir, gone));
    for (const [rel, spec] of Object.entries(r.files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), fileText(t, spec));
    }
    precompress(bin, root, dir, r);
    last = dir;
  }
  return last;
}

const readManifest = (site) => JSON.parse(fs.readFileSync(path.join(site, 'precompress-manifest.json'), 'utf8'));

/** Every representation the manifest lists, by path: its ETag. */
function representations(site) {
  const out = new Map();
  for (const [key, a] of Object.entries(readManifest(site).files)) {
    out.set(key, a.etag);
    for (const v of a.encodings) out.set(v.path, v.etag);
    for (const d of a.deltas ?? []) out.set(d.path, d.etag);
  }
  return out;
}

function expand(t, root, site, s) {
  if (s.includes('{shared}')) s = s.replaceAll('{shared}', readManifest(site).shared_dictionary);
  return s.replaceAll('{chrome}', t.chrome).replace(/\{(dictionary|delta|etag|size):([^}]+)\}/g, (_, kind, arg) => {
    switch (kind) {
      case 'dictionary':
        return `:${createHash('sha256').update(fs.readFileSync(path.join(root, arg))).digest('base64')}:`;
      case 'delta': {
        const i = arg.lastIndexOf(':');
        const [asset, coding] = [arg.slice(0, i), arg.slice(i + 1)];
        const d = readManifest(site).files[asset].deltas.find((x) => x.coding === coding);
        if (!d) throw new Error(`no ${coding} delta of ${asset}`);
        return d.path;
      }
      case 'etag':
        return representations(site).get(arg);
      default:
        return String(fs.statSync(path.join(site, arg)).size);
    }
  });
}

/** One request exactly as given (no normalization, no decoding): { status, headers (lower-case), body }. */
export function request(base, method, target, headers) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: target, headers: { ...headers, connection: 'close' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function checkCase(t, root, site, url, c, unlengthed) {
  const x = (s) => expand(t, root, site, s);
  const method = c.method ?? 'GET';
  const headers = Object.fromEntries(Object.entries(c.headers).map(([n, v]) => [n, x(v)]));
  const r = await request(url, method, x(c.path), headers);
  if (r.status !== c.status) return `status ${r.status}, expected ${c.status}`;
  const expect = c.expect ?? {};
  if (c.body === null) {
    if (r.body.length) return `a body of ${r.body.length} bytes, expected none`;
  } else if (c.body !== '*') {
    const rel = x(c.body);
    const whole = fs.readFileSync(path.join(site, rel));
    let want = whole;
    if (c.range) {
      const a = c.range[0] < 0 ? whole.length + c.range[0] : c.range[0];
      const b = c.range[1] ?? whole.length - 1;
      want = whole.subarray(a, b + 1);
    }
    const length = r.headers['content-length'];
    const lengthless = unlengthed?.(r);
    if (lengthless) {
      if (length !== undefined) return `Content-Length ${length}, expected none (${lengthless})`;
    } else if (length !== String(want.length)) {
      return `Content-Length ${length}, expected ${want.length}`;
    }
    if (method === 'HEAD') {
      if (r.body.length) return 'a body after HEAD';
    } else if (!r.body.equals(want)) {
      return `a body of ${r.body.length} bytes that is not ${rel}'s`;
    }
    const etag = representations(site).get(rel);
    if (etag !== undefined && !('ETag' in expect) && r.headers.etag !== etag) return `ETag ${r.headers.etag}, expected the manifest's ${etag}`;
  }
  for (const [name, want] of Object.entries(expect)) {
    const got = r.headers[name.toLowerCase()];
    const ok = want === null ? got === undefined : typeof want === 'string' ? got === x(want) : got !== undefined && new RegExp(want.re).test(got);
    if (!ok) return `${name}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  }
  return undefined;
}

/**
 * Runs table `t` against a server: `start(site)` starts it on the built site
 * and resolves to { url, close }; `supports` lists the `needs` it meets;
 * `skip` maps case names to why they do not apply; `unlengthed(response)`,
 * why the server sends that response no Content-Length, or undefined (each
 * body is still compared byte for byte, and a Content-Length is then a
 * failure). Returns { sent, failures }.
 */
export async function runTable(t, { bin, start, supports, skip = {}, unlengthed }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'precompress-serve-cases-'));
  const site = build(t, root, bin);
  const server = await start(site);
  const failures = [];
  let sent = 0;
  try {
    for (const phase of t.phases) {
      for (const e of phase.edit ?? []) {
        const p = path.join(site, e.path);
        if (e.write !== undefined) {
          fs.mkdirSync(path.dirname(p), { recursive: true });
          fs.writeFileSync(p, e.write);
        } else {
          fs.writeFileSync(p, fs.readFileSync(p, 'utf8').replaceAll(e.replace[0], e.replace[1]));
        }
      }
      if (phase.run) precompress(bin, root, site, t.releases.at(-1));
      for (const c of phase.cases) {
        // `manifest`: every server here reads it.
        if ((c.needs ?? []).some((n) => n !== 'manifest' && !supports.includes(n)) || c.name in skip) continue;
        sent++;
        const why = await checkCase(t, root, site, server.url, c, unlengthed);
        if (why) failures.push(`${phase.name} / ${c.name}: ${why}`);
      }
    }
  } finally {
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return { sent, failures };
}

/** Listens on a free loopback port. */
export function listen(server) {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

const ALL = ['hosts', 'conditional', 'range', 'rebuild', 'pages'];

/** The Node handler's targets: how each framework mounts it. */
const TARGETS = {
  async node() {
    const { createHandler } = await import('precompressor/serve');
    return { supports: ALL, start: async (site) => listen(http.createServer(createHandler(site))) };
  },
  async express() {
    const { createHandler } = await import('precompressor/serve');
    const { default: express } = await import('express');
    return {
      supports: ALL,
      start: async (site) => {
        const app = express();
        app.use(createHandler(site, { fallthrough: false }));
        return listen(http.createServer(app));
      },
    };
  },
  async fastify() {
    const { createHandler } = await import('precompressor/serve');
    const { default: Fastify } = await import('fastify');
    return {
      supports: ALL,
      start: async (site) => {
        const app = Fastify();
        const serve = createHandler(site);
        app.all('/*', (request, reply) => {
          reply.hijack();
          serve(request.raw, reply.raw);
        });
        await app.listen({ port: 0, host: '127.0.0.1' });
        return { url: `http://127.0.0.1:${app.server.address().port}/`, close: () => app.close() };
      },
    };
  },
  async hono() {
    const { createHandler } = await import('precompressor/serve');
    const { Hono } = await import('hono');
    const { serve } = await import('@hono/node-server');
    const { RESPONSE_ALREADY_SENT } = await import('@hono/node-server/utils/response');
    return {
      supports: ALL,
      start: async (site) => {
        const handler = createHandler(site, { fallthrough: false });
        const app = new Hono();
        // Hono's Node adapter hands over Node's own request and response.
        app.all('*', (c) => {
          handler(c.env.incoming, c.env.outgoing);
          return RESPONSE_ALREADY_SENT;
        });
        const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
        await new Promise((r) => server.once('listening', r));
        return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) };
      },
    };
  },
};

/** Extra targets from other modules (the Worker's), registered before main runs. */
export function addTarget(name, make) {
  TARGETS[name] = make;
}

export async function main(argv) {
  const [tablePath, ...targets] = argv;
  const t = JSON.parse(fs.readFileSync(tablePath, 'utf8'));
  const bin = process.env.PRECOMPRESS_BIN ?? path.resolve('node_modules/.bin/precompress');
  let failed = false;
  for (const name of targets) {
    if (!TARGETS[name]) throw new Error(`unknown target ${name}; known: ${Object.keys(TARGETS).join(', ')}`);
    const target = await TARGETS[name]();
    const { sent, failures } = await runTable(t, { bin, ...target });
    const skipped = Object.keys(target.skip ?? {}).length;
    if (sent < 20) failures.push(`only ${sent} cases sent`);
    console.log(`${name}: ${sent - failures.length} of ${sent} cases answered as the table says${skipped ? ` (${skipped} skipped: ${Object.entries(target.skip).map(([n, why]) => `${n}: ${why}`).join('; ')})` : ''}`);
    for (const f of failures) console.log(`  FAIL ${name}: ${f}`);
    failed ||= failures.length > 0;
  }
  if (failed) process.exit(1);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main(process.argv.slice(2));
}
