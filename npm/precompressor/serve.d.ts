import type { IncomingMessage, ServerResponse } from 'node:http';

export interface ServeOptions {
  /** The manifest (default DIR/precompress-manifest.json). */
  manifest?: string;
  /** The URL path DIR is served at (default: the manifest's `base`, else `/`). */
  base?: string;
  /** A client-routed app: a path with no file and no `.` in its last segment gets index.html. */
  spa?: boolean;
  /** Call `next()` when nothing is found, or for methods other than GET and HEAD (default: when a `next` is passed). */
  fallthrough?: boolean;
  /** Where warnings go (default console.warn). */
  warn?: (message: string) => void;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/** A handler that serves DIR from its manifest as `precompress serve` does; throws, naming the path, when DIR or its manifest cannot be used. */
export function createHandler(dir: string, options?: ServeOptions): Handler;
export const MANIFEST_NAME: 'precompress-manifest.json';
export function contentTypeOf(key: string): string;
