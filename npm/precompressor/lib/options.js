// The Vite plugin's options: validated when the plugin is created (so a typo
// fails `vite build` before anything is bundled), then turned into the
// command-line flags of `precompress DIR` and `precompress check DIR`. Each
// option maps to one flag that `precompress --help` lists; nothing here
// re-implements what the binary decides. fixtures/options.json lists every
// option once with its flag, and test/options.test.js holds this file to it.

import path from 'node:path';

/** The prefix of every message, naming where the error comes from. */
const WHO = 'precompressor/vite';

/** An invalid plugin option; the message names the option and the bad value. */
export class OptionError extends Error {
  constructor(message, who = WHO) {
    super(`${who}: ${message}`);
    this.name = 'OptionError';
  }
}

const FORMATS = ['br', 'zstd', 'gzip'];

const DELTA_FORMATS = ['dcb', 'dcz'];
const SHARED_DICTIONARY = ['auto', 'on', 'off'];

// Sizes as the binary parses them (src/cli/budget.rs parse_size): a number, then
// an optional unit, powers of 1000 or 1024.
const SIZE = /^\s*(\d+\.?\d*|\.\d+)\s*(b|k|kb|m|mb|g|gb|kib|mib|gib)?\s*$/i;

// Options people reach for by another name: the error points to ours.
const DID_YOU_MEAN = {
  brotliLevel: 'brotliQuality',
  brotli: 'brotliQuality',
  zstdQuality: 'zstdLevel',
  gzipQuality: 'gzipLevel',
  budget: 'budgets',
  dictionary: 'dictionaryFrom',
  dictionariesFrom: 'dictionaryFrom',
  format: 'formats',
  algorithms: 'formats',
  threshold: 'minSize',
  cache: 'cacheDir',
  enabled: 'disable',
  verify: 'check',
};

const show = (v) => {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === undefined || typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  try {
    return JSON.stringify(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
};

const bad = (name, expected, value) => new OptionError(`option \`${name}\` must be ${expected}, got ${show(value)}`);

function integer(name, v, min, max) {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min || v > max) throw bad(name, `an integer from ${min} to ${max}`, v);
  return v;
}

function boolean(name, v) {
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw bad(name, 'true or false', v);
  return v;
}

function nonEmptyString(name, v) {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '') throw bad(name, 'a non-empty string', v);
  return v;
}

/**
 * Globs or regular expressions, as vite-plugin-compression2 and
 * compression-webpack-plugin take them: a string, a RegExp, or an array of
 * them (may be empty). Always an array. A RegExp is tested against the
 * path relative to the output folder, with `/` separators.
 */
function patterns(name, v) {
  if (v === undefined) return undefined;
  const list = typeof v === 'string' || v instanceof RegExp ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => !(s instanceof RegExp) && (typeof s !== 'string' || s.trim() === ''))) {
    throw bad(name, 'a glob string, a RegExp, or an array of them', v);
  }
  return list;
}

/** A string or an array of them (an array may be empty): always an array. */
function strings(name, v) {
  if (v === undefined) return undefined;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s.trim() === '')) {
    throw bad(name, 'a string or an array of non-empty strings', v);
  }
  return list;
}

function size(name, v) {
  if (v === undefined) return undefined;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw bad(name, 'a size: a whole number of bytes, or a string like "1KiB"', v);
    return String(v);
  }
  if (typeof v !== 'string' || !SIZE.test(v)) {
    throw bad(name, 'a size: a whole number of bytes, or a string like "1KiB", "150KB", "1.5MiB" (units B, KB, MB, GB, KiB, MiB, GiB)', v);
  }
  return v.trim();
}

const VALIDATORS = {
  formats(v) {
    if (v === undefined) return undefined;
    const list = typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list) || list.length === 0 || list.some((f) => !FORMATS.includes(f))) {
      throw bad('formats', `a non-empty array of ${FORMATS.map((f) => `'${f}'`).join(', ')}`, v);
    }
    return [...new Set(list)];
  },
  brotliQuality: (v) => integer('brotliQuality', v, 0, 11),
  zstdLevel: (v) => integer('zstdLevel', v, 1, 22),
  gzipLevel: (v) => integer('gzipLevel', v, 1, 12),
  minRatio(v) {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !(v > 0 && v <= 1)) throw bad('minRatio', 'a number in (0, 1], e.g. 0.8', v);
    return v;
  },
  include: (v) => patterns('include', v),
  exclude: (v) => patterns('exclude', v),
  minSize: (v) => size('minSize', v),
  followLinks: (v) => boolean('followLinks', v),
  threads: (v) => integer('threads', v, 1, 65535),
  manifest(v) {
    if (v === undefined || v === true) return undefined;
    if (v === false) {
      throw new OptionError(
        'option `manifest` cannot be false: precompress always writes a manifest (servers and `precompress check` read it); give a file name relative to build.outDir, or leave it out for precompress-manifest.json',
      );
    }
    return nonEmptyString('manifest', v);
  },
  // false: no cache (--no-cache); none: the binary's default, node_modules/.cache/precompress.
  cacheDir: (v) => (v === false ? false : nonEmptyString('cacheDir', v)),
  cacheMaxSize: (v) => size('cacheMaxSize', v),
  dictionaryFrom: (v) => strings('dictionaryFrom', v),
  deltaFormats(v) {
    if (v === undefined) return undefined;
    const list = typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list) || list.length === 0 || list.some((f) => !DELTA_FORMATS.includes(f))) {
      throw bad('deltaFormats', `a non-empty array of ${DELTA_FORMATS.map((f) => `'${f}'`).join(', ')}`, v);
    }
    return [...new Set(list)];
  },
  useAsDictionary: (v) => boolean('useAsDictionary', v),
  pageDictionary: (v) => boolean('pageDictionary', v),
  maxFiles: (v) => integer('maxFiles', v, 1, Number.MAX_SAFE_INTEGER),
  // As precompress.toml's shared-dictionary: a mode, or true for 'auto' and false for 'off'.
  sharedDictionary(v) {
    if (v === undefined) return undefined;
    if (v === true) return 'auto';
    if (v === false) return 'off';
    if (!SHARED_DICTIONARY.includes(v)) throw bad('sharedDictionary', "'auto', 'on', 'off', true ('auto') or false ('off')", v);
    return v;
  },
  budgets(v) {
    if (v === undefined) return undefined;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw bad('budgets', 'an object of glob: size, e.g. { "assets/**/*.js": "150KB" }', v);
    }
    const out = [];
    for (const [glob, limit] of Object.entries(v)) {
      if (glob.trim() === '') throw new OptionError('option `budgets` has an empty glob');
      out.push([glob, size(`budgets[${JSON.stringify(glob)}]`, limit)]);
    }
    return out;
  },
  check: (v) => boolean('check', v),
  verbose: (v) => boolean('verbose', v),
  binary: (v) => nonEmptyString('binary', v),
  disable: (v) => boolean('disable', v),
  // Vite's library mode builds a package to publish, not a site: left alone unless true.
  library: (v) => boolean('library', v),
};

/** The option names, for the types test and the error on an unknown one. */
export const OPTION_NAMES = Object.keys(VALIDATORS);

/**
 * The validated options (defaults left undefined: the binary's defaults and
 * precompress.toml apply). Throws OptionError naming the option and the value,
 * after `who` (the integration: `precompressor/astro`).
 */
export function validateOptions(options, who = WHO) {
  try {
    return validate(options);
  } catch (e) {
    // The same rules for every integration; the message names the one used.
    if (e instanceof OptionError) e.message = `${who}${e.message.slice(WHO.length)}`;
    throw e;
  }
}

function validate(options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new OptionError(`the options must be an object, got ${show(options)}`);
  }
  const out = {};
  for (const [name, value] of Object.entries(options)) {
    const validate = Object.hasOwn(VALIDATORS, name) ? VALIDATORS[name] : undefined;
    if (!validate) {
      const near = DID_YOU_MEAN[name] ?? nearest(name, OPTION_NAMES);
      const hint = near ? ` (did you mean \`${near}\`?)` : '';
      throw new OptionError(`unknown option \`${name}\`${hint}; the options are ${OPTION_NAMES.join(', ')}`);
    }
    const v = validate(value);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`, case-blind. */
export function distance(a, b) {
  a = a.toLowerCase();
  b = b.toLowerCase();
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The name in `names` nearest to `name`, if it is near enough to be a typo of it. */
export function nearest(name, names) {
  let best;
  let bestD = Infinity;
  for (const n of names) {
    const dist = distance(name, n);
    if (dist < bestD) [best, bestD] = [n, dist];
  }
  return bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** A path relative to the output folder as a glob matching only itself. */
const exactGlob = (rel) => `./${rel.replace(/[*?[\]{}\\!]/g, (c) => `\\${c}`)}`;

/**
 * The `--include`/`--exclude` flags of the options' RegExps, given the files
 * of the output folder (relative, `/`-separated): each file one matches, as
 * a glob of its own path. Globs pass through runArgs.
 */
export function regexpArgs(o, files) {
  const args = [];
  for (const flag of ['include', 'exclude']) {
    const res = (o[flag] ?? []).filter((p) => p instanceof RegExp);
    if (res.length === 0) continue;
    for (const f of files) {
      if (res.some((re) => ((re.lastIndex = 0), re.test(f)))) args.push(`--${flag}=${exactGlob(f)}`);
    }
    // An include of RegExps only, matching nothing, must still include nothing.
    if (flag === 'include' && !args.some((a) => a.startsWith('--include=')) && !(o.include ?? []).some((p) => typeof p === 'string')) {
      args.push('--include=./[.]precompress-matches-nothing');
    }
  }
  return args;
}

/** Whether any include or exclude is a RegExp (the output folder must then be listed). */
export const hasRegExps = (o) => [...(o.include ?? []), ...(o.exclude ?? [])].some((p) => p instanceof RegExp);

/**
 * Arguments for `precompress DIR ...`. `dir` is passed as given; relative
 * cacheDir, dictionaryFrom and binary paths are resolved against `root`
 * (Vite's root, like Vite's own paths) and the manifest against `outDir`
 * (like Vite's build.manifest), so the run does not depend on the cwd.
 *
 * @param {ReturnType<typeof validateOptions>} o
 * @param {{ dir: string, root: string, outDir: string }} where
 */
export function runArgs(o, { dir, root, outDir }) {
  const args = [dir];
  if (o.formats) args.push('--formats', o.formats.join(','));
  if (o.brotliQuality !== undefined) args.push('--brotli-quality', String(o.brotliQuality));
  if (o.zstdLevel !== undefined) args.push('--zstd-level', String(o.zstdLevel));
  if (o.gzipLevel !== undefined) args.push('--gzip-level', String(o.gzipLevel));
  if (o.minRatio !== undefined) args.push('--min-ratio', String(o.minRatio));
  for (const g of o.include ?? []) if (typeof g === 'string') args.push(`--include=${g}`);
  for (const g of o.exclude ?? []) if (typeof g === 'string') args.push(`--exclude=${g}`);
  if (o.minSize !== undefined) args.push('--min-size', o.minSize);
  if (o.followLinks) args.push('--follow-links');
  args.push(...manifestArgs(o, outDir));
  if (o.threads !== undefined) args.push('--threads', String(o.threads));
  args.push(...cacheArgs(o, root));
  if (o.cacheMaxSize !== undefined) args.push('--cache-max-size', o.cacheMaxSize);
  if (o.base) args.push('--base', o.base);
  args.push(...dictionaryArgs(o, root));
  if (o.deltaFormats) args.push('--delta-formats', o.deltaFormats.join(','));
  if (o.useAsDictionary === false) args.push('--no-use-as-dictionary');
  if (o.pageDictionary === false) args.push('--no-page-dictionary');
  if (o.maxFiles !== undefined) args.push('--max-files', String(o.maxFiles));
  if (o.sharedDictionary !== undefined) args.push('--shared-dictionary', o.sharedDictionary);
  for (const [glob, limit] of o.budgets ?? []) args.push(`--budget=${glob}=${limit}`);
  if (o.verbose) args.push('--verbose');
  return args;
}

/** Arguments for `precompress check DIR ...`, reading what runArgs wrote. */
export function checkArgs(o, { dir, root, outDir }) {
  return ['check', dir, ...manifestArgs(o, outDir), ...cacheArgs(o, root), ...dictionaryArgs(o, root)];
}

/** `--cache-dir DIR`, `--no-cache` for false, nothing for the binary's default. */
function cacheArgs(o, root) {
  if (o.cacheDir === false) return ['--no-cache'];
  return o.cacheDir ? ['--cache-dir', path.resolve(root, o.cacheDir)] : [];
}

function manifestArgs(o, outDir) {
  return o.manifest ? ['--manifest', path.resolve(outDir, o.manifest)] : [];
}

/** A `dictionaryFrom` entry that names the live site (its URL), not a folder. */
export const isSite = (d) => /^https?:\/\//.test(d);

function dictionaryArgs(o, root) {
  return (o.dictionaryFrom ?? []).flatMap((d) => ['--dictionary-from', isSite(d) ? d : path.resolve(root, d)]);
}
