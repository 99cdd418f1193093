// Cloudflare Pages: the Worker (worker.js) as a Pages Function. Pages sends
// the files it holds as they are named and compresses at its edge on its own;
// a function that runs for every path reads the manifest and the variants
// through `env.ASSETS`, the Pages deployment's files, as the Worker does
// over Workers Static Assets. The project's `functions/[[path]].js`:
//
//   export { onRequest } from 'precompressor/pages';
//
// (or `createPagesFunction(options)` for the Worker's options). In advanced
// mode (`_worker.js` in the output folder) the Worker itself is the recipe:
// `export { default } from 'precompressor/worker'`.

import { createWorker } from './worker.js';

/**
 * Pages' own rule for a single-page app: a deployment with no top-level
 * 404.html is one, and every path with no file gets `/`
 * (developers.cloudflare.com/pages/configuration/serving-pages/).
 */
export const pagesSpa = (files) => !files.has('404.html');

/**
 * A Pages Function `(context) => Response` serving the deployment from its
 * manifest; options as createWorker's, `spa` by default as Pages decides it
 * ({@link pagesSpa}). Throws, naming the option, when one is invalid.
 */
export function createPagesFunction(options = {}) {
  const worker = createWorker({ ...options, spa: options.spa ?? pagesSpa });
  return (context) => worker.fetch(context.request, context.env, context);
}

/** The Pages Function with the default options. */
export const onRequest = createPagesFunction();
