import type { WorkerOptions } from './worker.js';

/** The part of a Pages Function's context the function uses. */
export interface PagesContext {
  request: Request;
  env: Record<string, unknown>;
}

/** A Pages Function serving the deployment (`env.ASSETS`) from its manifest as `precompress serve` does; throws, naming the option, when one is invalid. */
export function createPagesFunction(options?: WorkerOptions): (context: PagesContext) => Promise<Response>;

/** The Pages Function with the default options: `export { onRequest } from 'precompressor/pages'` in `functions/[[path]].js`. */
export declare const onRequest: (context: PagesContext) => Promise<Response>;
