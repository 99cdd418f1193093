// The Node handler: serves a precompressed folder from its manifest in
// node:http, Express/Connect, Fastify (through `reply.hijack()`), Hono's Node
// adapter and `vite preview`, answering exactly as `precompress serve` does
// (the shared table fixtures/serve-cases.json holds both to it). The
// decisions, routing included, are negotiate.js's (route, answer); this file
// owns the disk: the manifest loaded and reloaded, the lookup that resolves
// each file under the folder and checks it unchanged since the load, and the
// bytes written.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { contentTypeOf } from './content-types.js';
import { answer, indexManifest, normalizeBase, route, setBase, splitTarget } from './negotiate.js';

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
    // The source is held to the file it was hashed as: stamped before the hash and
    // again after, so an edit in between (of the same size) is never recorded as
    // checked (serve::http::site's hold_to_hash).
    if (!st?.isFile() || Number(st.size) !== entry.identity.size || sha256Of(p) !== json.files[key].sha256 || stampOf(p) !== fileStamp(st)) {
      index.assets.delete(key);
      continue;
    }
    entry.lastModified = Number(st.mtimeNs / 1000000n);
    files.set(entry.identity.path, fileStamp(st));
    for (const r of [...entry.variants, ...entry.deltas]) {
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

// The one table of Content-Types, written out from src/model/content.rs.
export { contentTypeOf };

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
    const passes = fallthrough && typeof next === 'function';
    const site = current();
    // `GET http://host/x` and `/x#frag` name /x, as they do to precompress serve.
    const { path: rawPath, query } = splitTarget(req.originalUrl ?? req.url);
    const request = {
      method: req.method,
      path: rawPath,
      query,
      header: (name) => headerOf(req, name),
      single: (name) => singleHeader(req, name),
    };
    // Falling through, the 404 page is the next handler's to give.
    const t = route(site.index, request, lookupOf(site), { spa: options.spa, notFoundPage: !passes });
    if (t.key === undefined) {
      // Nothing here goes on to the next handler; what is here but refused
      // (a variant by its own name, the manifest, a dot-file) never does.
      if (passes && (t.status === 405 || (t.status === 404 && !t.refused))) {
        next();
        return;
      }
      text(res, t.status, t.headers);
      return;
    }
    const reply = answer(site.index, request, t, lookupOf(site));
    for (const w of reply.warnings) warn(w);
    write(res, reply, req.method === 'HEAD');
  }

  /** The folder of one load as the router asks for it. */
  function lookupOf(site) {
    return {
      node(key) {
        const p = resolve(site.root, key);
        const st = p && fs.statSync(p, { throwIfNoEntry: false });
        return st?.isDirectory() ? 'folder' : st?.isFile() ? p : undefined;
      },
      isManifest: (key, p) => p !== undefined && p === site.manifestReal,
      open(key, r, found) {
        if (r.coding && site.files.get(key) !== stampOf(path.join(site.root, key))) {
          return { why: `${key} changed after precompress ran (its variants would be stale)` };
        }
        return openChecked(site, r.coding ? resolve(site.root, r.path) : found ?? resolve(site.root, key), r.path, r.size);
      },
      plain: (key) => plain(site, key),
      sourceUnchanged: (key, found) =>
        found !== undefined && site.files.has(key) && site.files.get(key) === stampOf(path.join(site.root, key)),
    };
  }

  function openChecked(site, p, rel, size) {
    if (!p) return { why: 'missing or outside the folder' };
    let fd;
    try {
      fd = fs.openSync(p, 'r');
      const st = fs.fstatSync(fd, { bigint: true });
      if (Number(st.size) !== size) throw new Error(`${st.size} bytes on disk, ${size} in the manifest (changed since precompress ran)`);
      if (fileStamp(st) !== site.files.get(rel)) throw new Error('rewritten since the manifest was loaded');
      return { file: fd };
    } catch (e) {
      if (fd !== undefined) fs.closeSync(fd);
      return { why: e.message };
    }
  }

  /** A file the manifest does not describe (or describes wrongly), as it is. */
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
    return {
      file: fd,
      contentType: contentTypeOf(key),
      size: Number(st.size),
      etag: `W/"${st.size.toString(16)}-${st.mtimeNs.toString(16)}"`,
      lastModified: Number(st.mtimeNs / 1000000n),
    };
  }

  return handler;
}

/** The reply on `res`: its file's bytes streamed (none for HEAD), nothing for a 304 or 204, else a short text. */
function write(res, { status, headers, file, span }, head) {
  if (!span) {
    if (file !== undefined) fs.closeSync(file);
    if (status === 304 || status === 204) {
      setHeaders(res, headers);
      res.statusCode = status;
      res.end();
    } else {
      text(res, status, headers);
    }
    return;
  }
  res.statusCode = status;
  setHeaders(res, headers);
  const [start, count] = span;
  if (head || count === 0) {
    fs.closeSync(file);
    res.end();
    return;
  }
  const stream = fs.createReadStream('', { fd: file, start, end: start + count - 1 });
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
