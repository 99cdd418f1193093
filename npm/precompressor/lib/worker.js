// The Cloudflare Worker: serves a precompressed folder deployed as Workers
// Static Assets, answering as `precompress serve` and the Node handler
// (serve.js) do; the shared table fixtures/serve-cases.json holds it to them
// in workerd. The decisions, routing included, are negotiate.js's (route,
// answer, over a lookup of the manifest's files); this file owns the ASSETS
// binding: the manifest read from it, each body fetched, a file the manifest
// does not list asked for last. Why it is shaped this way:
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

import { contentTypeOf } from './content-types.js';
import { answer, indexManifest, normalizeBase, route, setBase, splitTarget, urlOf } from './negotiate.js';

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
 *                       its last segment gets index.html; or `(files) => boolean`,
 *                       asked once with the manifest's keys (a Set)
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
    const spa = typeof options.spa === 'function' ? Boolean(options.spa(new Set(index.assets.keys()))) : options.spa;
    site = { index, dirs, spa };
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
    const req = {
      method: request.method,
      path: fullPath,
      query,
      // Cloudflare replaces the Accept-Encoding a Worker sees; the client's own is here.
      header: (name) => (name === 'accept-encoding' ? request.cf?.clientAcceptEncoding : undefined) ?? request.headers.get(name) ?? undefined,
      single: (name) => request.headers.get(name) ?? undefined,
    };
    let t = route(s.index, req, lookupOf(job), { spa: s.spa, partial: true });
    if (t.probe) {
      // Perhaps a file added after precompress ran: asked of the binding last.
      const res = await get(job, t.key, 'manual');
      if (res.status === 200) {
        t = { ...t, file: { plain: res, bytes: await res.arrayBuffer() } };
      } else {
        await res.body?.cancel();
        t = t.otherwise;
      }
    }
    if (t.key === undefined) return text(t.status, head, t.headers);
    return deliver(job, req, t);
  }

  function lastModifiedOf(env) {
    const o = options.lastModified;
    const given = o === undefined ? env?.CF_VERSION_METADATA?.timestamp : typeof o === 'function' ? o(env) : o;
    if (given === undefined || given === null) return undefined;
    const ms = given instanceof Date ? given.getTime() : typeof given === 'number' ? given : Date.parse(given);
    return Number.isFinite(ms) ? ms : undefined;
  }

  /**
   * The manifest's files as the router asks for them: a listed key is a
   * file, a folder of listed keys is a folder. Bodies are fetched after the
   * decisions, so a representation opens as its path.
   */
  function lookupOf(job) {
    const { index, dirs } = job.site;
    return {
      node: (key) => (key !== '' && index.assets.has(key) ? key : dirs.has(key) ? 'folder' : undefined),
      isManifest: (key) => key === manifestKey,
      open: (key, r) => ({ file: r }),
      plain(key, found) {
        if (!found?.plain) return undefined;
        const etag = found.plain.headers.get('etag');
        // The one table every server of ours reads, not the binding's guess;
        // but a name the table cannot type (a route with no extension, which
        // the host answered from its own fallback: an app's shell) keeps the
        // host's, or a browser would download the page.
        const typed = contentTypeOf(key);
        const own = found.plain.headers.get('content-type');
        return {
          file: found,
          contentType: typed === 'application/octet-stream' && own ? own : typed,
          size: found.bytes.byteLength,
          etag: etag ? (etag.startsWith('W/') ? etag : `W/${etag}`) : undefined,
          lastModified: job.lastModified,
        };
      },
      lastModified: () => job.lastModified,
    };
  }

  /** The binding's answer for `key`, asked with no client header (it would answer conditionals itself). */
  function get(job, key, redirect = 'follow') {
    return job.assets.fetch(new Request(new URL(urlOf('/', key), job.request.url), { method: 'GET', redirect }));
  }

  /** The reply for `t`, its body fetched from the binding: identity when a listed variant is missing there. */
  async function deliver(job, req, t) {
    const reply = answer(job.site.index, req, t, lookupOf(job));
    if (!reply.span) return reply.status === 304 || reply.status === 204 ? respond(reply.status, reply.headers, null) : text(reply.status, job.head, reply.headers);
    let bytes = reply.file.bytes;
    let res;
    if (bytes === undefined) {
      const r = reply.file;
      res = await get(job, r.path);
      if (res.status !== 200) {
        await res.body?.cancel();
        if (r.coding) {
          log(`${r.path}: the ${binding} binding answered ${res.status}; sending ${t.key} uncompressed`);
          // As a client that accepts identity only.
          return deliver(job, { ...req, header: (n) => (n === 'accept-encoding' ? undefined : req.header(n)), single: () => undefined }, t);
        }
        log(`${t.key}: listed in ${manifest} but the ${binding} binding answered ${res.status}`);
        return text(404, job.head);
      }
    }
    const [start, count] = reply.span;
    let data = res ? res.body : bytes;
    if (reply.status === 206) {
      // The binding ignores Range: the bytes are sliced here.
      const whole = res ? await res.arrayBuffer() : bytes;
      data = whole.slice(start, start + count);
    }
    if (job.head || count === 0) {
      await res?.body?.cancel();
      data = null;
    } else if (data === res?.body && typeof FixedLengthStream === 'function') {
      // A stream of no known length goes out chunked, its Content-Length
      // dropped (Pages' env.ASSETS gives such streams); workerd's
      // FixedLengthStream keeps the length the manifest gives.
      data = data.pipeThrough(new FixedLengthStream(count));
    }
    return respond(reply.status, reply.headers, data);
  }

  return { fetch: handle };
}

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
