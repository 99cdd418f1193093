import type { WorkerOptions } from './worker.js';

/** The part of a Pages Function's context the function uses. */
export interface PagesContext {
  request: Request;
  env: Record<string, unknown>;
}

/** Pages' own rule: a deployment with no top-level 404.html is a single-page app. */
export function pagesSpa(files: Set<string>): boolean;

/** A Pages Function serving the deployment (`env.ASSETS`) from its manifest as `precompress serve` does (`spa` by default as Pages decides it: {@link pagesSpa}); throws, naming the option, when one is invalid. */
export function createPagesFunction(options?: WorkerOptions): (context: PagesContext) => Promise<Response>;

/** The Pages Function with the default options: `export { onRequest } from 'precompressor/pages'` in `functions/[[path]].js`. */
export declare const onRequest: (context: PagesContext) => Promise<Response>;
