import type { WorkerOptions } from './worker.js';

/** createWorker's options but `binding`: the files are the deploy's, asked for through context.next. */
export type EdgeFunctionOptions = Omit<WorkerOptions, 'binding' | 'lastModified'> & {
  /** Every asset's Last-Modified (default none: a Netlify deploy shows a function no modification time). */
  lastModified?: Date | number | string | null;
};

/** The part of Netlify's edge function context the function uses. */
export interface EdgeContext {
  next(request?: Request): Promise<Response>;
}

/** A Netlify Edge Function serving the deploy from its manifest as `precompress serve` does; throws, naming the option, when one is invalid. */
export function createEdgeFunction(options?: EdgeFunctionOptions): (request: Request, context: EdgeContext) => Promise<Response>;

/** Netlify's in-source configuration: every path. */
export declare const config: { path: string };

/** The edge function with the default options: `export { default, config } from 'precompressor/netlify'`. */
declare const edgeFunction: (request: Request, context: EdgeContext) => Promise<Response>;
export default edgeFunction;
