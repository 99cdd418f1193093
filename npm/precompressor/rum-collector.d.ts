import type { RumKind, RumSum } from './rum.js';

/** A report as the collector accepted it. */
export interface AcceptedReport {
  sample: number;
  kinds: Partial<Record<RumKind, Record<string, RumSum>>>;
}

/** What `GET` on the collector's path answers. */
export interface RumTotals {
  v: 1;
  /** Reports accepted: sampled page views. */
  views: number;
  /** Views weighted by 1 / sample: an estimate of every view. */
  estimatedViews: number;
  /** Bodies refused (400 or 413): not reports. */
  refused: number;
  /** Sums per kind and coding. */
  kinds: Partial<Record<RumKind, Record<string, RumSum>>>;
  /** Of the script and style bytes fetched (decoded; not from cache), the share that came as dcb or dcz. */
  codeFileBytesAsDeltas: number;
}

export interface CollectorOptions {
  /** The path it answers (default '/rum'); any other is a 404. */
  path?: string;
  /** Called with each accepted report: forward it to storage that outlives the process. */
  onReport?: (report: AcceptedReport) => void;
}

export interface Collector {
  /** Answers a Fetch API request (a Worker's `fetch`, Deno, Bun, Node 18+). */
  fetch(request: Request): Promise<Response>;
  /** Answers a node:http request. */
  node(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void;
  /** The sums so far. */
  totals(): RumTotals;
}

/** The report `text` holds, or undefined when it is not one. */
export function parseReport(text: string): AcceptedReport | undefined;

/** A collector for what precompressor/rum posts: sums only, nothing per request. */
export function createCollector(options?: CollectorOptions): Collector;
