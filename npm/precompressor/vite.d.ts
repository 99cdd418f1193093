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
  /** Codings to write (`--formats`). Default: `['br', 'zstd', 'gzip']`. */
  formats?: Array<'br' | 'zstd' | 'gzip'>;
  /** Brotli quality, 0-11 (`--brotli-quality`). Default: 11. */
  brotliQuality?: number;
  /** Zstandard level, 1-22; the window stays at most 8 MiB (`--zstd-level`). Default: 19. */
  zstdLevel?: number;
  /** gzip (libdeflate) level, 1-12 (`--gzip-level`). Default: 12. */
  gzipLevel?: number;
  /** Keep a variant only if it is at most this fraction of its source, in (0, 1] (`--min-ratio`). Default: 1. */
  minRatio?: number;
  /** Compress only files matching these globs or RegExps, relative to outDir (`--include`, repeated; a RegExp is tested against each path, `/`-separated); replaces the default type list. */
  include?: string | RegExp | Array<string | RegExp>;
  /** Never compress files matching these globs or RegExps (`--exclude`, repeated); wins over `include`. E.g. `['*.map']` or `/\.map$/`. */
  exclude?: string | RegExp | Array<string | RegExp>;
  /** Skip files smaller than this (`--min-size`). Default: `'1KiB'` (1024 bytes). */
  minSize?: Size;
  /** Follow symlinks inside outDir, never writing outside it (`--follow-links`). Default: false. */
  followLinks?: boolean;
  /** Worker threads, 1-65535 (`--threads`). Default: the cores available, fewer if memory holds fewer. */
  threads?: number;
  /**
   * Where to write the manifest, relative to `build.outDir` (`--manifest`); also read by `check`.
   * `true` or left out: `precompress-manifest.json` in outDir. It cannot be turned off.
   */
  manifest?: true | string;
  /**
   * Cache encoder outputs here across builds (`--cache-dir`). Vite empties outDir on every
   * build, so without a cache every build recompresses everything. The cache
   * also keeps the last releases' assets, so each build gets deltas against
   * them with no `dictionaryFrom`; passed to `check` too. `false`: no cache
   * (`--no-cache`). Default: the binary's, `PRECOMPRESS_CACHE_DIR`, else
   * precompress.toml's `cache-dir`, else `node_modules/.cache/precompress` in
   * the nearest folder above outDir with a package.json (the folder
   * `precompress dist` and `precompress check dist` use too).
   */
  cacheDir?: string | false;
  /** The cache's size bound (`--cache-max-size`); the least recently used entries go first. Default: `'1GiB'`. */
  cacheMaxSize?: Size;
  /** Earlier releases: build folders, or the URL the live site serves the build at (`https://example.com/app/`, its dictionaries fetched): changed fingerprinted assets get RFC 9842 deltas against them (`--dictionary-from`, repeated; passed to `check` too). */
  dictionaryFrom?: string | string[];
  /** Delta codings to write against earlier releases (`--delta-formats`). Default: `['dcb', 'dcz']`. */
  deltaFormats?: Array<'dcb' | 'dcz'>;
  /** `false`: mark no asset with `Use-As-Dictionary`, so the next release gets no deltas against this one (`--no-use-as-dictionary`). Default: true. */
  useAsDictionary?: boolean;
  /** `false`: send HTML pages `no-cache` and write no deltas of their own, instead of marking each page as the dictionary of its next version (`--no-page-dictionary`). Default: true. */
  pageDictionary?: boolean;
  /** The most files the deploy may hold, the manifest included (Cloudflare Pages takes 20,000): deltas are dropped, the oldest release's first, to stay within it; a deploy its sources and variants alone pass fails the build (`--max-files`). Default: no bound. */
  maxFiles?: number;
  /**
   * The dictionary that pages link (`--shared-dictionary`): `'auto'` (or
   * `true`) makes the code dictionary only where it adds little to a first
   * visit (the run's summary says how much); `'on'` always; `'off'` (or
   * `false`) never, so a first visit fetches no dictionary at idle, and
   * hash-only and same-named chunks still get deltas against the one chunk
   * marked for them. Default: the binary's, `'auto'`.
   */
  sharedDictionary?: boolean | 'auto' | 'on' | 'off';
  /**
   * Fail the build when an asset's best variant (what a browser downloads) is larger than the
   * size: `{ 'assets/**\/*.js': '150KB' }` (`--budget GLOB=SIZE`, repeated). Added to
   * precompress.toml's `[budget]`; a glob given here replaces the file's for that glob.
   */
  budgets?: Record<string, Size>;
  /** Run `precompress check` on outDir afterwards and fail the build if it finds a problem. Default: false. */
  check?: boolean;
  /** Print a line per asset: its best variant, or why it has none (`--verbose`). Default: false. */
  verbose?: boolean;
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
