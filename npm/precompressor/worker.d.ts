/** The part of a Workers Static Assets binding (`env.ASSETS`) the Worker uses. */
export interface AssetsBinding {
  fetch(request: Request): Promise<Response>;
}

/** A date: a `Date`, milliseconds since the epoch, or a string `Date.parse` reads. */
export type DateLike = Date | number | string;

export interface WorkerOptions {
  /** The assets binding's name in `env` (default 'ASSETS'). */
  binding?: string;
  /** The manifest's path among the assets (default '/precompress-manifest.json'); its keys are paths from the assets' root. */
  manifest?: string;
  /** The URL path the assets are served at (default: the manifest's `base`, else `/`). */
  base?: string;
  /** A client-routed app: a path with no file and no `.` in its last segment gets index.html; or decided once from the manifest's keys. */
  spa?: boolean | ((files: Set<string>) => boolean);
  /** Every asset's Last-Modified (default: `env.CF_VERSION_METADATA.timestamp`, the deploy's, when that binding is set; else none). */
  lastModified?: DateLike | null | ((env: Record<string, unknown>) => DateLike | null | undefined);
  /** Where warnings and errors go (default console.error). */
  log?: (message: string) => void;
}

export interface Worker {
  fetch(request: Request, env: Record<string, unknown>, ctx?: unknown): Promise<Response>;
}

/** A Worker serving the assets binding from its manifest as `precompress serve` does; throws, naming the option, when one is invalid. */
export function createWorker(options?: WorkerOptions): Worker;

/** The Worker with the default options, for `main = "node_modules/precompressor/lib/worker.js"`. */
declare const worker: Worker;
export default worker;
