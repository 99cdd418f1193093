// The Node handler: serves a precompressed folder from its manifest in
// node:http, Express/Connect, Fastify (through `reply.hijack()`), Hono's Node
// adapter and `vite preview`, answering exactly as `precompress serve` does
// (the shared table fixtures/serve-cases.json holds both to it). The
// decisions are negotiate.js's; this file owns the disk: the manifest loaded
// and reloaded, each file resolved under the folder and checked unchanged
// since the load, bodies streamed.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  CACHE_REVALIDATE,
  httpDate,
  indexManifest,
  normalizeBase,
  notModified,
  parseRange,
  parseRequestPath,
  preconditionFailed,
  rangeApplies,
  select,
  setBase,
  siblingSource,
  splitTarget,
  stripBase,
} from './negotiate.js';

export const MANIFEST_NAME = 'precompress-manifest.json';

/** A stat that tells a rewrite apart: size, mtime, inode and ctime, to the nanosecond. */
function stampOf(p) {
  try {
    const s = fs.statSync(p, { bigint: true });
    return `${s.size}:${s.mtimeNs}:${s.dev}:${s.ino}:${s.ctimeNs}`;
  } catch {
    return undefined;
  }
}

const fileStamp = (s) => `${s.size}:${s.mtimeNs}:${s.dev}:${s.ino}:${s.ctimeNs}`;

/** Loads DIR's index: the manifest checked, each source compared with its sha256, every listed file stamped. */
function load(given, manifestPath, base) {
  let root;
  try {
    root = fs.realpathSync(given);
  } catch (e) {
    throw new Error(`${given}: ${e.code === 'ENOENT' ? 'no such folder' : e.message}`);
  }
  if (!fs.statSync(root).isDirectory()) throw new Error(`${given}: not a folder`);
  const stamp = stampOf(manifestPath);
  let text;
  try {
    text = fs.readFileSync(manifestPath, 'utf8');
  } catch (e) {
    throw new Error(`${manifestPath}: cannot read the manifest (${e.code ?? e.message}); run \`precompress ${given}\` first`);
  }
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`${manifestPath}: invalid manifest: ${e.message}`);
  }
  const index = indexManifest(manifestPath, json);
  if (base !== undefined) setBase(index, base);
  const files = new Map();
  for (const [key, entry] of [...index.assets]) {
    const p = path.join(root, key);
    let st;
    try {
      st = fs.statSync(p, { bigint: true });
    } catch {
      st = undefined;
    }
    // Changed after precompress ran: its variants are stale, so it is a plain file here.
    if (!st?.isFile() || Number(st.size) !== entry.identity.size || sha256Of(p) !== json.files[key].sha256) {
      index.assets.delete(key);
      continue;
    }
    entry.lastModified = Number(st.mtimeNs / 1000000n);
    for (const r of [entry.identity, ...entry.variants, ...entry.deltas]) {
      const s = stampOf(path.join(root, r.path));
      if (s) files.set(r.path, s);
    }
  }
  let manifestReal;
  try {
    manifestReal = fs.realpathSync(manifestPath);
  } catch {
    manifestReal = path.resolve(manifestPath);
  }
  return { root, index, stamp, files, manifestReal };
}

function sha256Of(p) {
  try {
    return createHash('sha256').update(fs.readFileSync(p)).digest('base64');
  } catch {
    return undefined;
  }
}

/** The canonical path of `key` under `root`, or undefined (missing, or a symlink out of the folder). */
function resolve(root, key) {
  const p = path.join(root, ...key.split('/').filter((s) => s !== ''));
  try {
    const real = fs.realpathSync(p);
    return real === root || real.startsWith(root + path.sep) ? real : undefined;
  } catch {
    return undefined;
  }
}

// A Map, not an object: the extension comes from the request, and `x.constructor`
// or `x.__proto__` must not find Object.prototype's members.
const TYPES = new Map(Object.entries({
  html: 'text/html; charset=utf-8', htm: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8', cjs: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8',
  json: 'application/json', map: 'application/json', txt: 'text/plain; charset=utf-8', xml: 'application/xml',
  svg: 'image/svg+xml', wasm: 'application/wasm', webmanifest: 'application/manifest+json', png: 'image/png',
  jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', avif: 'image/avif', ico: 'image/x-icon',
  woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf', pdf: 'application/pdf', mp4: 'video/mp4',
  webm: 'video/webm', mp3: 'audio/mpeg', md: 'text/markdown; charset=utf-8', csv: 'text/csv; charset=utf-8',
}));

/** The Content-Type of a file the manifest does not describe. */
export function contentTypeOf(key) {
  const ext = /\.([^./]+)$/.exec(key)?.[1]?.toLowerCase();
  return TYPES.get(ext) ?? 'application/octet-stream';
}

/**
 * A `(req, res, next)` handler serving `dir` from its manifest. Throws, naming
 * the path and the cause, when the folder or the manifest cannot be used.
 *
 * options.manifest   the manifest (default DIR/precompress-manifest.json)
 * options.base       the URL path DIR is served at (default: the manifest's, else /)
 * options.spa        a client-routed app: a path with no file and no `.` in its
 *                    last segment gets index.html
 * options.fallthrough  when nothing is found (and for methods other than GET and
 *                    HEAD), call `next()` instead of answering 404 (or the
 *                    404.html page) or 405; default: true when a `next` is passed
 * options.warn       where warnings go (default console.warn)
 */
export function createHandler(dir, options = {}) {
  const given = path.resolve(dir);
  const manifestPath = path.resolve(options.manifest ?? path.join(given, MANIFEST_NAME));
  let base;
  if (options.base !== undefined) {
    base = normalizeBase(options.base);
    if (base === undefined) throw new Error(`base ${JSON.stringify(options.base)} is not a path like /app/`);
  }
  const warn = options.warn ?? ((m) => console.warn(`precompressor/serve: ${m}`));
  let loaded = load(given, manifestPath, base);

  /** The index, reloaded first when precompress rewrote the manifest or the folder's symlink moved. */
  function current() {
    const now = stampOf(manifestPath);
    let root;
    try {
      root = fs.realpathSync(given);
    } catch {
      root = undefined;
    }
    if (now === loaded.stamp && root === loaded.root) return loaded;
    try {
      loaded = load(given, manifestPath, base);
    } catch (e) {
      warn(`${e.message}; keeping the manifest loaded before`);
      loaded = { ...loaded, stamp: now };
    }
    return loaded;
  }

  function handler(req, res, next) {
    const fallthrough = options.fallthrough ?? typeof next === 'function';
    const pass = () => {
      if (fallthrough && typeof next === 'function') {
        next();
        return true;
      }
      return false;
    };
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') {
      if (!pass()) text(res, 405, [['Allow', 'GET, HEAD']]);
      return;
    }
    const site = current();
    // `GET http://host/x` and `/x#frag` name /x, as they do to precompress serve.
    const { path: rawPath, query } = splitTarget(req.originalUrl ?? req.url);
    let t = target(site, rawPath, query);
    // Falling through, the 404 page is the next handler's to give.
    if (t.status === 404) t = fallback(site, rawPath, !(fallthrough && typeof next === 'function')) ?? t;
    if (t.key === undefined) {
      // Nothing here goes on to the next handler; what is here but refused
      // (a variant by its own name, the manifest, a dot-file) never does.
      if (t.status === 404 && !t.refused && pass()) return;
      text(res, t.status, t.headers);
      return;
    }
    answer(site, req, res, method === 'HEAD', t);
  }

  function target(site, fullPath, query) {
    const raw = stripBase(site.index.base, fullPath);
    if (raw === undefined) return { status: 404 };
    if (raw === '/' && !fullPath.endsWith('/')) return { status: 301, headers: [['Location', `${fullPath}/${query}`]] };
    const rp = parseRequestPath(raw);
    if (rp.error === 'hidden') return { status: 404, refused: true };
    if (rp.error) return { status: 400 };
    const found = resolve(site.root, rp.key);
    if (!found) return { status: 404 };
    const st = fs.statSync(found, { throwIfNoEntry: false });
    if (st?.isDirectory()) {
      if (!rp.trailingSlash && rp.key !== '') {
        // One leading slash: `//docs/` would be another host.
        const location = `${site.index.base.slice(0, -1)}/${raw.replace(/^\/+/, '')}/${query}`;
        return { status: 301, headers: [['Location', location]] };
      }
      const key = rp.key === '' ? 'index.html' : `${rp.key}/index.html`;
      const idx = resolve(site.root, key);
      if (!idx || !fs.statSync(idx).isFile()) return { status: 404 };
      return { status: 200, key, resolved: idx };
    }
    if (st?.isFile() && internal(site, rp.key, found)) return { status: 404, refused: true };
    if (rp.trailingSlash || !st?.isFile()) return { status: 404 };
    return { status: 200, key: rp.key, resolved: found };
  }

  /** What a static host serves where nothing is: `about` is about.html, a route is index.html (spa), else 404.html with 404 (`notFoundPage`). */
  function fallback(site, fullPath, notFoundPage) {
    const raw = stripBase(site.index.base, fullPath);
    if (raw === undefined) return undefined;
    const file = (key, status) => {
      const p = resolve(site.root, key);
      return p && fs.statSync(p).isFile() && !internal(site, key, p) ? { status, key, resolved: p } : undefined;
    };
    const rp = parseRequestPath(raw);
    if (!rp.error) {
      const last = rp.key.slice(rp.key.lastIndexOf('/') + 1);
      const routed = rp.key !== '' && !last.includes('.');
      if (routed && !rp.trailingSlash) {
        const t = file(`${rp.key}.html`, 200);
        if (t) return t;
      }
      if (options.spa && (routed || rp.key === '')) {
        const t = file('index.html', 200);
        if (t) return t;
      }
    }
    return notFoundPage ? file('404.html', 404) : undefined;
  }

  /** Variants and deltas beside their asset, and the manifest: never served by their own names. */
  function internal(site, key, found) {
    const src = siblingSource(key);
    if (src !== undefined) {
      const p = resolve(site.root, src);
      if (p && fs.statSync(p).isFile()) return true;
    }
    return found === site.manifestReal;
  }

  function answer(site, req, res, head, t) {
    const h = (name) => headerOf(req, name);
    let planned;
    const entry = site.index.assets.get(t.key);
    if (entry) {
      const sel = select(entry, h('accept-encoding'), singleHeader(req, 'available-dictionary'), entry.lastModified);
      if (sel.notAcceptable) {
        text(res, 406, sel.headers);
        return;
      }
      const r = sel.representation;
      const why = r.coding && site.files.get(t.key) !== stampOf(path.join(site.root, t.key))
        ? `${t.key} changed after precompress ran (its variants would be stale)`
        : undefined;
      const opened = why ? { why } : openChecked(site, r.coding ? resolve(site.root, r.path) : t.resolved, r.path, r.size);
      if (opened.fd !== undefined) planned = { fd: opened.fd, headers: sel.headers, identity: !r.coding };
      else warn(`${r.path}: ${opened.why}; sending ${t.key} uncompressed`);
    }
    if (!planned) {
      planned = plain(site, t.key);
      if (!planned) {
        text(res, 404);
        return;
      }
    }
    send(req, res, head, planned, t.status);
  }

  function openChecked(site, p, rel, size) {
    if (!p) return { why: 'missing or outside the folder' };
    let fd;
    try {
      fd = fs.openSync(p, 'r');
      const st = fs.fstatSync(fd, { bigint: true });
      if (Number(st.size) !== size) throw new Error(`${st.size} bytes on disk, ${size} in the manifest (changed since precompress ran)`);
      if (fileStamp(st) !== site.files.get(rel)) throw new Error('rewritten since the manifest was loaded');
      return { fd };
    } catch (e) {
      if (fd !== undefined) fs.closeSync(fd);
      return { why: e.message };
    }
  }

  /** A file the manifest does not describe (or describes wrongly): uncompressed, weak ETag, revalidated. */
  function plain(site, key) {
    const p = resolve(site.root, key);
    if (!p) return undefined;
    let fd;
    try {
      fd = fs.openSync(p, 'r');
    } catch {
      return undefined;
    }
    const st = fs.fstatSync(fd, { bigint: true });
    const ms = Number(st.mtimeNs / 1000000n);
    const headers = [
      ['Content-Type', contentTypeOf(key)],
      ['Content-Length', String(st.size)],
      ['ETag', `W/"${st.size.toString(16)}-${st.mtimeNs.toString(16)}"`],
      ['Last-Modified', httpDate(ms)],
      ['Cache-Control', CACHE_REVALIDATE],
    ];
    return { fd, headers, identity: true };
  }

  return handler;
}

function send(req, res, head, { fd, headers, identity }, status) {
  const get = (n) => headers.find(([k]) => k === n)?.[1];
  const etag = get('ETag') ?? '';
  const lm = get('Last-Modified') === undefined ? undefined : Date.parse(get('Last-Modified'));
  const len = Number(get('Content-Length') ?? 0);
  const h = (name) => headerOf(req, name);
  const found = status === 200;
  if (found && preconditionFailed(h, etag, lm)) {
    fs.closeSync(fd);
    text(res, 412, [['ETag', etag]]);
    return;
  }
  if (found && notModified(h, etag, lm)) {
    fs.closeSync(fd);
    const keep = ['ETag', 'Last-Modified', 'Cache-Control', 'Vary'];
    setHeaders(res, headers.filter(([n]) => keep.includes(n)));
    res.statusCode = 304;
    res.end();
    return;
  }
  let start = 0;
  let count = len;
  let code = status;
  let contentRange;
  const range = h('range');
  if (found && identity && !head && range !== undefined && rangeApplies(h, etag, lm)) {
    const r = parseRange(range, len);
    if (r === 'unsatisfiable') {
      fs.closeSync(fd);
      text(res, 416, [['Content-Range', `bytes */${len}`]]);
      return;
    }
    if (r) {
      [start, count, code, contentRange] = [r[0], r[1] - r[0] + 1, 206, `bytes ${r[0]}-${r[1]}/${len}`];
    }
  }
  res.statusCode = code;
  setHeaders(res, headers);
  if (identity) res.setHeader('Accept-Ranges', 'bytes');
  if (contentRange) {
    res.setHeader('Content-Range', contentRange);
    res.setHeader('Content-Length', String(count));
  }
  if (head || count === 0) {
    fs.closeSync(fd);
    res.end();
    return;
  }
  const stream = fs.createReadStream('', { fd, start, end: start + count - 1 });
  stream.on('error', (e) => {
    // The file shrank or vanished mid-send: cut the response, never short and complete.
    res.destroy(e);
  });
  stream.pipe(res);
}

function setHeaders(res, headers) {
  for (const [n, v] of headers) {
    // Another middleware's Vary (CORS's `Origin`) is kept beside ours.
    const before = n === 'Vary' ? res.getHeader('Vary') : undefined;
    res.setHeader(n, before ? `${before}, ${v}` : v);
  }
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

const REASONS = { 301: 'Moved Permanently', 400: 'Bad Request', 404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable', 412: 'Precondition Failed', 416: 'Range Not Satisfiable' };

/** A short text answer, as `precompress serve` gives for errors and redirects. */
function text(res, status, headers = []) {
  const body = `${status} ${REASONS[status] ?? ''}\n`;
  res.statusCode = status;
  for (const [n, v] of headers) res.setHeader(n, v);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(body)));
  res.end(body);
}

/** A request header, repeated fields joined with `,`; undefined when absent. */
function headerOf(req, name) {
  const v = req.headers[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(',') : v;
}

/** A header's value when the request has exactly one such field (a repeated Available-Dictionary is no value). */
function singleHeader(req, name) {
  const raw = req.rawHeaders;
  if (Array.isArray(raw)) {
    const values = [];
    for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name) values.push(raw[i + 1]);
    return values.length === 1 ? values[0] : undefined;
  }
  return headerOf(req, name);
}
