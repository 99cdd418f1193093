// The Cloudflare Worker: serves a precompressed folder deployed as Workers
// Static Assets, answering as `precompress serve` and the Node handler
// (serve.js) do; the shared table fixtures/serve-cases.json holds it to them
// in workerd. The decisions are negotiate.js's; this file owns the ASSETS
// binding. Why it is shaped this way:
//
// - It must run before the assets (wrangler `run_worker_first = true`), or
//   Cloudflare serves the manifest and the raw `.br` files by their names.
// - The binding returns raw bytes with its own ETag, answers If-None-Match
//   itself and ignores Range, so it is asked for bare paths only and the
//   Worker does validators, conditionals and ranges from the manifest.
// - Cloudflare replaces the Accept-Encoding a Worker sees with `br, gzip`;
//   the client's own is `request.cf.clientAcceptEncoding`.
// - Responses are `encodeBody: 'manual'`, so workerd sends the br, zstd,
//   gzip, dcb and dcz bytes as they are instead of compressing them again.
// - No I/O is allowed in global scope: the manifest is read on the first
//   request and kept for the life of the isolate (a deploy's assets never
//   change). A missing or invalid manifest is a 500 naming it, never a
//   silent plain-file fallback.
// - A Worker's assets carry no modification time. Last-Modified is the
//   deploy's (the version metadata binding's timestamp), or none.

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
  urlOf,
} from './negotiate.js';

// Not exported: workerd refuses a main module whose named exports are not handlers or functions.
const MANIFEST_PATH = '/precompress-manifest.json';

const REASONS = {
  301: 'Moved Permanently',
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  412: 'Precondition Failed',
  416: 'Range Not Satisfiable',
  500: 'Internal Server Error',
};

/**
 * A Worker (`{ fetch }`) serving the ASSETS binding from its manifest.
 * Throws, naming the option, when an option is invalid.
 *
 * options.binding       the assets binding (default 'ASSETS')
 * options.manifest      the manifest's path among the assets (default /precompress-manifest.json);
 *                       its keys are paths from the assets' root
 * options.base          the URL path the assets are served at (default: the manifest's, else /)
 * options.spa           a client-routed app: a path with no file and no `.` in
 *                       its last segment gets index.html
 * options.lastModified  the Last-Modified of every asset: a date, or `(env) => date`
 *                       (default: env.CF_VERSION_METADATA.timestamp, the deploy's, when bound)
 * options.log           where warnings and errors go (default console.error)
 */
export function createWorker(options = {}) {
  const binding = options.binding ?? 'ASSETS';
  const manifest = options.manifest ?? MANIFEST_PATH;
  if (typeof manifest !== 'string' || !manifest.startsWith('/')) {
    throw new Error(`precompressor/worker: manifest ${JSON.stringify(manifest)} is not a path among the assets like ${MANIFEST_PATH}`);
  }
  const manifestKey = manifest.replace(/^\/+/, '');
  let base;
  if (options.base !== undefined) {
    base = normalizeBase(options.base);
    if (base === undefined) throw new Error(`precompressor/worker: base ${JSON.stringify(options.base)} is not a path like /app/`);
  }
  const log = options.log ?? ((m) => console.error(`precompressor/worker: ${m}`));
  /** The indexed manifest; never a promise: workerd does not let one request wait on I/O another started. */
  let site;

  async function load(assets, origin) {
    if (site) return site;
    let res;
    try {
      res = await assets.fetch(new Request(new URL(manifest, origin)));
    } catch (e) {
      throw new Error(`${manifest}: cannot read the manifest (${e.message})`);
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`${manifest}: cannot read the manifest (the ${binding} binding answered ${res.status}); run precompress on the assets folder before deploying`);
    }
    let json;
    try {
      json = JSON.parse(await res.text());
    } catch (e) {
      throw new Error(`${manifest}: invalid manifest: ${e.message}`);
    }
    const index = indexManifest(manifest, json);
    if (base !== undefined) setBase(index, base);
    const dirs = new Set(['']);
    for (const key of index.assets.keys()) {
      for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) dirs.add(key.slice(0, i));
    }
    site = { index, dirs };
    return site;
  }

  async function handle(request, env) {
    const head = request.method === 'HEAD';
    if (request.method !== 'GET' && !head) return text(405, head, [['Allow', 'GET, HEAD']]);
    const assets = env?.[binding];
    if (!assets || typeof assets.fetch !== 'function') {
      const message = `no ${binding} binding: deploy the folder as assets ([assets] directory = "dist", binding = "${binding}", run_worker_first = true)`;
      log(message);
      return text(500, head, [], message);
    }
    // The raw path: `new URL()` would resolve `%2e%2e` segments before they could be refused.
    const { path: fullPath, query } = splitTarget(request.url);
    let s;
    try {
      s = await load(assets, request.url);
    } catch (e) {
      log(e.message);
      return text(500, head, [], e.message);
    }
    const job = { request, head, assets, site: s, lastModified: lastModifiedOf(env) };
    let t = target(s, fullPath, query);
    if (t.status === 404) t = (await fallback(job, fullPath, t.unlisted)) ?? t;
    if (t.key === undefined) return text(t.status, head, t.headers);
    return answer(job, t, false);
  }

  function lastModifiedOf(env) {
    const o = options.lastModified;
    const given = o === undefined ? env?.CF_VERSION_METADATA?.timestamp : typeof o === 'function' ? o(env) : o;
    if (given === undefined || given === null) return undefined;
    const ms = given instanceof Date ? given.getTime() : typeof given === 'number' ? given : Date.parse(given);
    return Number.isFinite(ms) ? ms : undefined;
  }

  const listed = (s, key) => s.index.assets.has(key);

  /** Variants and deltas beside their asset, and the manifest: never served by their own names. */
  function internal(s, key) {
    const src = siblingSource(key);
    return (src !== undefined && listed(s, src)) || key === manifestKey;
  }

  /** What the path names, from the manifest (which lists every file precompress saw). */
  function target(s, fullPath, query) {
    const raw = stripBase(s.index.base, fullPath);
    if (raw === undefined) return { status: 404 };
    if (raw === '/' && !fullPath.endsWith('/')) return { status: 301, headers: [['Location', `${fullPath}/${query}`]] };
    const rp = parseRequestPath(raw);
    if (rp.error === 'hidden') return { status: 404 };
    if (rp.error) return { status: 400 };
    if (rp.key !== '' && listed(s, rp.key)) {
      if (rp.trailingSlash || internal(s, rp.key)) return { status: 404 };
      return { status: 200, key: rp.key };
    }
    if (s.dirs.has(rp.key)) {
      if (!rp.trailingSlash && rp.key !== '') {
        // One leading slash: `//docs/` would be another host.
        const location = `${s.index.base.slice(0, -1)}/${raw.replace(/^\/+/, '')}/${query}`;
        return { status: 301, headers: [['Location', location]] };
      }
      const key = rp.key === '' ? 'index.html' : `${rp.key}/index.html`;
      return listed(s, key) ? { status: 200, key } : { status: 404 };
    }
    // Perhaps a file added after precompress ran: asked of the binding last.
    const unlisted = !rp.trailingSlash && rp.key !== '' && !internal(s, rp.key) ? rp.key : undefined;
    return { status: 404, unlisted };
  }

  /** What a static host serves where nothing is: `about` is about.html, a route is index.html (spa), else 404.html with 404. */
  async function fallback(job, fullPath, unlisted) {
    const s = job.site;
    const raw = stripBase(s.index.base, fullPath);
    if (raw === undefined) return undefined;
    const file = (key, status) => (listed(s, key) && !internal(s, key) ? { status, key } : undefined);
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
    if (unlisted !== undefined) {
      const res = await get(job, unlisted, 'manual');
      if (res.status === 200) return { status: 200, key: unlisted, plain: res };
      await res.body?.cancel();
    }
    return file('404.html', 404);
  }

  /** The binding's answer for `key`, asked with no client header (it would answer conditionals itself). */
  function get(job, key, redirect = 'follow') {
    return job.assets.fetch(new Request(new URL(urlOf('/', key), job.request.url), { method: 'GET', redirect }));
  }

  async function answer(job, t, identityOnly) {
    const { request, head } = job;
    if (t.plain) return plain(job, t);
    const entry = job.site.index.assets.get(t.key);
    const ae = request.cf?.clientAcceptEncoding ?? request.headers.get('accept-encoding') ?? undefined;
    const sel = identityOnly
      ? select(entry, undefined, undefined, job.lastModified)
      : select(entry, ae, request.headers.get('available-dictionary') ?? undefined, job.lastModified);
    if (sel.notAcceptable) return text(406, head, sel.headers);
    const r = sel.representation;
    const early = conditional(job, sel.headers, t.status);
    if (early) return early;
    const res = await get(job, r.path);
    if (res.status !== 200) {
      await res.body?.cancel();
      if (r.coding) {
        log(`${r.path}: the ${binding} binding answered ${res.status}; sending ${t.key} uncompressed`);
        return answer(job, t, true);
      }
      log(`${t.key}: listed in ${manifest} but the ${binding} binding answered ${res.status}`);
      return text(404, head);
    }
    return send(job, sel.headers, !r.coding, t.status, res);
  }

  /** A file the manifest does not describe: uncompressed, weak ETag, revalidated. */
  async function plain(job, t) {
    const bytes = await t.plain.arrayBuffer();
    const etag = t.plain.headers.get('etag');
    const headers = [
      ['Content-Type', t.plain.headers.get('content-type') ?? 'application/octet-stream'],
      ['Content-Length', String(bytes.byteLength)],
    ];
    if (etag) headers.push(['ETag', etag.startsWith('W/') ? etag : `W/${etag}`]);
    if (job.lastModified !== undefined) headers.push(['Last-Modified', httpDate(job.lastModified)]);
    headers.push(['Cache-Control', CACHE_REVALIDATE]);
    return conditional(job, headers, t.status) ?? send(job, headers, true, t.status, bytes);
  }

  return { fetch: handle };
}

const lookup = (headers, n) => headers.find(([k]) => k === n)?.[1];
const reqHeader = (request) => (name) => request.headers.get(name) ?? undefined;

/** 412 or 304 (for a found file only: the 404 page is never a 304), else undefined. */
function conditional({ request, head }, headers, status) {
  if (status !== 200) return undefined;
  const h = reqHeader(request);
  const etag = lookup(headers, 'ETag') ?? '';
  const lm = lookup(headers, 'Last-Modified') === undefined ? undefined : Date.parse(lookup(headers, 'Last-Modified'));
  if (preconditionFailed(h, etag, lm)) return text(412, head, [['ETag', etag]]);
  if (notModified(h, etag, lm)) {
    const keep = ['ETag', 'Last-Modified', 'Cache-Control', 'Vary'];
    return respond(304, withNosniff(headers.filter(([n]) => keep.includes(n))), null);
  }
  return undefined;
}

/** The body (the binding's response, or bytes) with its headers; a range of identity when one applies. */
async function send({ request, head }, headers, identity, status, body) {
  const h = reqHeader(request);
  const etag = lookup(headers, 'ETag') ?? '';
  const lm = lookup(headers, 'Last-Modified') === undefined ? undefined : Date.parse(lookup(headers, 'Last-Modified'));
  const len = Number(lookup(headers, 'Content-Length') ?? 0);
  const out = [...headers];
  let code = status;
  let data = body instanceof Response ? body.body : body;
  const range = h('range');
  if (status === 200 && identity && !head && range !== undefined && rangeApplies(h, etag, lm)) {
    const r = parseRange(range, len);
    if (r === 'unsatisfiable') {
      await cancel(body);
      return text(416, head, [['Content-Range', `bytes */${len}`]]);
    }
    if (r) {
      // The binding ignores Range: the bytes are sliced here.
      const bytes = body instanceof Response ? await body.arrayBuffer() : body;
      data = bytes.slice(r[0], r[1] + 1);
      code = 206;
      out.push(['Content-Range', `bytes ${r[0]}-${r[1]}/${len}`]);
      out.splice(out.findIndex(([n]) => n === 'Content-Length'), 1, ['Content-Length', String(r[1] - r[0] + 1)]);
    }
  }
  if (identity) out.push(['Accept-Ranges', 'bytes']);
  if (head || len === 0) {
    await cancel(body);
    data = null;
  }
  return respond(code, withNosniff(out), data);
}

async function cancel(body) {
  if (body instanceof Response) await body.body?.cancel();
}

const withNosniff = (headers) => [...headers, ['X-Content-Type-Options', 'nosniff']];

/** `manual`: workerd sends the body's bytes as they are, whatever Content-Encoding says. */
function respond(status, headers, body) {
  return new Response(body, { status, headers, encodeBody: 'manual' });
}

/** A short text answer, as `precompress serve` gives for errors and redirects (`detail` after the reason). */
function text(status, head, headers = [], detail) {
  const body = `${status} ${REASONS[status] ?? ''}\n${detail === undefined ? '' : `${detail}\n`}`;
  const bytes = new TextEncoder().encode(body);
  const all = [...headers, ['Content-Type', 'text/plain; charset=utf-8'], ['Content-Length', String(bytes.byteLength)]];
  return respond(status, all, head ? null : bytes);
}

/** The Worker with the default options: `main = "node_modules/precompressor/lib/worker.js"`. */
export default createWorker();
