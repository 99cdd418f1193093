import type { Plugin } from 'vite';

/** A size: bytes, or a string with a unit (`'1KiB'`, `'150KB'`, `'1.5MiB'`; KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024). */
export type Size = number | `${number}` | `${number}${'B' | 'KB' | 'MB' | 'GB' | 'KiB' | 'MiB' | 'GiB' | 'b' | 'kb' | 'mb' | 'gb' | 'kib' | 'mib' | 'gib'}`;

/**
 * Options of the precompress Vite plugin. Each maps to one `precompress` flag; an option left
 * out keeps the binary's default, or what precompress.toml (in outDir or a parent folder up to
 * the folder with `.git`) sets. Relative paths are resolved against Vite's `root`, except
 * `manifest` (against `build.outDir`, like Vite's own `build.manifest`).
 */
export interface PrecompressOptions {
  // options: made from src/cli/options.rs by `PRECOMPRESS_BLESS=1 cargo test --bin precompress options`
  /** Codings to write, comma-separated (`--formats`). Default: ['br', 'zstd', 'gzip']. */
  formats?: Array<'br' | 'zstd' | 'gzip'>;
  /** Brotli quality (0-11) (`--brotli-quality`). Default: 11. */
  brotliQuality?: number;
  /** Zstandard level; the window stays at most 8 MiB at every level (1-22) (`--zstd-level`). Default: 19. */
  zstdLevel?: number;
  /** gzip (libdeflate) level (1-12) (`--gzip-level`). Default: 12. */
  gzipLevel?: number;
  /** Keep a variant only if it is at most this fraction of its source, in (0, 1] (0.8: saves 20% or more) (`--min-ratio`). Default: 1. */
  minRatio?: number;
  /** Compress only files matching this glob (repeatable; replaces the default type list) (`--include`). A RegExp is tested against each path relative to outDir, `/`-separated. */
  include?: string | RegExp | Array<string | RegExp>;
  /** Never compress files matching this glob (repeatable; wins over --include) (`--exclude`). E.g. `['*.map']` or `/\.map$/`. */
  exclude?: string | RegExp | Array<string | RegExp>;
  /** Skip files smaller than this (bytes, or with a unit: 1KiB, 2KB) (`--min-size`). Default: '1KiB'. */
  minSize?: Size;
  /** Follow symlinks (never to write outside DIR) (`--follow-links`). Default: false. */
  followLinks?: boolean;
  /** Where to write the manifest [default: DIR/precompress-manifest.json] (`--manifest`). Relative to `build.outDir`, like Vite's own `build.manifest`; also read by `check`. `true` or left out: precompress-manifest.json in outDir. It cannot be turned off. */
  manifest?: true | string;
  /** Worker threads; no more start than there are jobs, and the scan uses at most the cores (1-65535) [default: the cores available, fewer if the memory available holds fewer workers at 256 MiB each] (`--threads`). */
  threads?: number;
  /** The cache: the last releases, which the next run makes RFC 9842 deltas against with no --dictionary-from, and the encoders' outputs, reused across runs and clean checkouts [default: node_modules/.cache/precompress of the nearest folder above DIR with a package.json] (`--cache-dir`). Vite empties outDir on every build, so without a cache every build recompresses everything; the cache also keeps the last releases, so each build gets deltas against them with no `dictionaryFrom`; passed to `check` too. `false`: no cache (`--no-cache`). */
  cacheDir?: string | false;
  /** Bound on the cache's size (bytes, or with a unit: 500MB, 2GiB); least recently used entries go first (`--cache-max-size`). Default: '1GiB'. */
  cacheMaxSize?: Size;
  /** An earlier release: its build folder, or the URL the live site serves DIR at (https://example.com/app/), whose dictionaries are fetched; changed fingerprinted assets get RFC 9842 deltas (.dcb, .dcz) against their versions there (repeatable) (`--dictionary-from`). */
  dictionaryFrom?: string | string[];
  /** Delta codings to write against earlier releases (--dictionary-from, and the cache's), comma-separated (`--delta-formats`). Default: ['dcb', 'dcz']. */
  deltaFormats?: Array<'dcb' | 'dcz'>;
  /** The most files the deploy may hold, the manifest included (Cloudflare Pages takes 20,000): deltas are dropped, the oldest release's first, to stay within it; a deploy its sources and variants alone pass fails (at least 1) (`--max-files`). */
  maxFiles?: number;
  /** Deltas against at most the newest N releases the cache keeps (a visitor of an older one gets the whole file); fewer files to deploy (1-4) [default: all it keeps] (`--delta-releases`). */
  deltaReleases?: number;
  /** Do not mark fingerprinted assets with Use-As-Dictionary in the manifest, so the next release gets no deltas against this one (`false`: `--no-use-as-dictionary`). Default: true. */
  useAsDictionary?: boolean;
  /** Send HTML pages no-cache and write no deltas of their own, instead of marking each page as the dictionary of its next version (`false`: `--no-page-dictionary`). Default: true. */
  pageDictionary?: boolean;
  /** The dictionaries every page links, fetched at idle by a first visit: auto, within 2% of a first visit (the summary says how much); on, always; off, none (true is auto, false off) (`--shared-dictionary`). Default: 'auto'. */
  sharedDictionary?: boolean | 'auto' | 'on' | 'off';
  /** Print a line per asset (its best variant, or why it has none) on stderr (`--verbose`). Default: false. */
  verbose?: boolean;
  /** Fail (exit 1) when an asset's best variant is larger than SIZE (repeatable; 150KB, 1.5MiB, bytes) (`--budget`). An object: `{ 'assets/**\/*.js': '150KB' }`. Added to precompress.toml's `[budget]`; a glob given here replaces the file's for that glob. */
  budgets?: Record<string, Size>;
  // end of options
  /** Run `precompress check` on outDir afterwards and fail the build if it finds a problem. Default: false. */
  check?: boolean;
  /** The precompress binary to run, instead of `PRECOMPRESS_BINARY` or this platform's package. */
  binary?: string;
  /** Turn the plugin off (it then does nothing). Default: false. */
  disable?: boolean;
  /** Compress a library-mode build (`build.lib`) too; by default its output, a package to publish, is left alone with a warning. Default: false. */
  library?: boolean;
}

/**
 * Precompresses the client build's output (`build.outDir`) with precompress once Vite has
 * written it (not an SSR build, not library mode, not a framework's intermediate client build
 * that Astro, SvelteKit or Nuxt still writes into: those are skipped with a warning): `.br`, `.zst`, `.gz` beside each asset and `precompress-manifest.json`. The build
 * fails when precompress fails (a file it could not compress, a budget exceeded, `check` finding
 * a problem). Options are validated when the plugin is created.
 *
 * @example
 * import precompress from 'precompressor/vite';
 * export default { plugins: [precompress({ exclude: ['*.map'], budgets: { '*.js': '150KB' } })] };
 */
export default function precompress(options?: PrecompressOptions): Plugin;
