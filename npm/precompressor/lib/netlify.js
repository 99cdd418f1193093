// The Netlify Edge Function: serves a precompressed folder deployed to
// Netlify, answering as `precompress serve` and the Worker (worker.js) do.
// Netlify sends the files it holds as they are named and ignores the `.br`,
// `.zst` and delta files beside them; an edge function runs before the files
// and can choose. It is the Worker over a different binding: an edge function
// cannot read the deploy's files, so the manifest, each variant and each
// delta are asked of the deploy by URL through `context.next(request)`, which
// sends a request of the same site to the files without running edge
// functions again. Why it is shaped this way:
//
// - It must run for every path (`config.path = '/*'`), or Netlify serves the
//   manifest and the raw `.br` files by their names.
// - The files are asked for with `Accept-Encoding: identity` and no client
//   header, so the bytes that come back are the file's, whatever Netlify
//   would compress or answer conditionally itself; the function does
//   validators, conditionals and ranges from the manifest (worker.js).
// - The client's own Accept-Encoding is the request's header (Netlify, unlike
//   Cloudflare, does not replace it before a function).
// - Netlify's deploy carries no modification time a function can read:
//   Last-Modified is `options.lastModified`, or none.

import { createWorker } from './worker.js';

/** The binding name the Worker is given; never seen by a user. */
const BINDING = 'DEPLOY';

/**
 * An edge function `(request, context) => Response` serving the deploy from
 * its manifest. Options as createWorker's (manifest, base, spa,
 * lastModified, log), but `binding`. Throws, naming the option, when one is
 * invalid.
 */
export function createEdgeFunction(options = {}) {
  if (options.binding !== undefined) throw new Error('precompressor/netlify: option `binding` has no meaning on Netlify: the files are the deploy\'s');
  const log = options.log ?? ((m) => console.error(`precompressor/netlify: ${m}`));
  const worker = createWorker({ ...options, binding: BINDING, log, lastModified: options.lastModified ?? null });
  return (request, context) => {
    if (typeof context?.next !== 'function') {
      const message = 'no context.next: run this as a Netlify Edge Function (netlify/edge-functions/, config.path "/*")';
      log(message);
      return new Response(`500 Internal Server Error\n${message}\n`, { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
    }
    return worker.fetch(request, { [BINDING]: deployOf(context) });
  };
}

/**
 * The deploy's files as the Worker's assets binding: a GET of the same site
 * through `context.next`, with nothing of the client's request but its URL.
 */
function deployOf(context) {
  return {
    fetch: (r) => context.next(new Request(r.url, { method: 'GET', redirect: r.redirect, headers: { 'accept-encoding': 'identity' } })),
  };
}

/** Every path: the function decides what each one gets, the manifest and the variants included. */
export const config = { path: '/*' };

/** The edge function with the default options: `export { default, config } from 'precompressor/netlify'`. */
export default createEdgeFunction();
