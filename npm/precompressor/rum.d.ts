/** Bytes of the responses of one kind that came in one coding. */
export interface RumSum {
  /** Responses. */
  n: number;
  /** Bytes over the network (transferSize; 0 from cache). */
  transfer: number;
  /** Encoded body bytes (encodedBodySize). */
  body: number;
  /** Decoded file bytes (decodedBodySize). */
  file: number;
}

/** Asset kinds: the page, scripts, stylesheets, the rest. */
export type RumKind = 'document' | 'script' | 'style' | 'other';

/** What one sampled page view posts: sums per kind and coding (`dcb`, `dcz`, `br`, `zstd`, `gzip`, `identity`, `cache`, `unknown`). */
export interface RumReport {
  v: 1;
  sample: number;
  kinds: Partial<Record<RumKind, Record<string, RumSum>>>;
}

/**
 * With probability `sample` (default 0.1), POSTs a {@link RumReport} to `endpoint` once, when the page is hidden or left
 * (fetch keepalive, credentials 'omit', no-cors). Returns the function that sends it now, or undefined when not sampled.
 */
export function rum(endpoint: string, sample?: number, w?: typeof globalThis): (() => void) | undefined;
