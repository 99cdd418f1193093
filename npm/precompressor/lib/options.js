// The Vite plugin's options: validated when the plugin is created (so a typo
// fails `vite build` before anything is bundled), then turned into the
// command-line flags of `precompress DIR` and `precompress check DIR`. Each
// run option is a row of option-defs.js, made from the binary's own table
// (src/cli/options.rs): its type, range and flag come from there, and the
// plugin's own options (check, binary, disable, library) are the rest.
// Nothing here re-implements what the binary decides.

import path from 'node:path';
import { OPTIONS, SIZE_UNITS } from './option-defs.js';

/** The prefix of every message, naming where the error comes from. */
const WHO = 'precompressor/vite';

/** An invalid plugin option; the message names the option and the bad value. */
export class OptionError extends Error {
  constructor(message, who = WHO) {
    super(`${who}: ${message}`);
    this.name = 'OptionError';
  }
}

// Sizes as the binary parses them (src/cli/budget.rs parse_size): a number, then
// an optional unit of SIZE_UNITS, powers of 1000 or 1024.
const SIZE = new RegExp(`^\\s*(\\d+\\.?\\d*|\\.\\d+)\\s*(${SIZE_UNITS.join('|')})?\\s*$`, 'i');

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

const quoted = (values) => values.map((f) => `'${f}'`).join(', ');

/** The validator of a row of option-defs.js, by its kind. */
function validator(d) {
  const name = d.plugin;
  switch (d.kind) {
    case 'switch':
    case 'negation':
      return (v) => boolean(name, v);
    case 'int':
      return (v) => integer(name, v, d.min, d.max ?? Number.MAX_SAFE_INTEGER);
    case 'ratio':
      return (v) => {
        if (v === undefined) return undefined;
        if (typeof v !== 'number' || !(v > 0 && v <= 1)) throw bad(name, 'a number in (0, 1], e.g. 0.8', v);
        return v;
      };
    case 'size':
      return (v) => size(name, v);
    case 'globs':
      return (v) => patterns(name, v);
    case 'releases':
      return (v) => strings(name, v);
    case 'list':
      return (v) => {
        if (v === undefined) return undefined;
        const list = typeof v === 'string' ? [v] : v;
        if (!Array.isArray(list) || list.length === 0 || list.some((f) => !d.values.includes(f))) {
          throw bad(name, `a non-empty array of ${quoted(d.values)}`, v);
        }
        return [...new Set(list)];
      };
    case 'choice':
      // With bools (sharedDictionary): true and false are modes too, as in precompress.toml.
      return (v) => {
        if (v === undefined) return undefined;
        if (d.bools && typeof v === 'boolean') return v ? d.bools[0] : d.bools[1];
        if (!d.values.includes(v)) {
          const b = d.bools ? `, true ('${d.bools[0]}') or false ('${d.bools[1]}')` : '';
          throw bad(name, `${quoted(d.values)}${b}`, v);
        }
        return v;
      };
    case 'path':
      return (v) => {
        if (d.from === 'outDir') {
          // Like Vite's build.manifest: true is the default place; there is always one.
          if (v === undefined || v === true) return undefined;
          if (v === false) {
            throw new OptionError(
              `option \`${name}\` cannot be false: precompress always writes a ${d.flag} (servers and \`precompress check\` read it); give a file name relative to build.outDir, or leave it out for the default`,
            );
          }
        }
        if (v === false && d.onFalse) return false;
        return nonEmptyString(name, v);
      };
    case 'budgets':
      return (v) => {
        if (v === undefined) return undefined;
        if (v === null || typeof v !== 'object' || Array.isArray(v)) {
          throw bad(name, 'an object of glob: size, e.g. { "assets/**/*.js": "150KB" }', v);
        }
        const out = [];
        for (const [glob, limit] of Object.entries(v)) {
          if (glob.trim() === '') throw new OptionError(`option \`${name}\` has an empty glob`);
          out.push([glob, size(`${name}[${JSON.stringify(glob)}]`, limit)]);
        }
        return out;
      };
    default:
      throw new Error(`option-defs.js: ${name}: unknown kind ${d.kind}`);
  }
}

/** The plugin's own options, which are no flag of the run. */
export const OWN = {
  check: (v) => boolean('check', v),
  binary: (v) => nonEmptyString('binary', v),
  disable: (v) => boolean('disable', v),
  // Vite's library mode builds a package to publish, not a site: left alone unless true.
  library: (v) => boolean('library', v),
};

const VALIDATORS = {
  ...Object.fromEntries(OPTIONS.map((d) => [d.plugin, validator(d)])),
  ...OWN,
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

/** The flags of one validated option `v` of row `d`. */
function flagsOf(d, v, { root, outDir }) {
  const flag = `--${d.flag}`;
  if (v === undefined) return [];
  switch (d.kind) {
    case 'switch':
      return v ? [flag] : [];
    case 'negation':
      return v === false ? [flag] : [];
    case 'int':
    case 'ratio':
    case 'size':
    case 'choice':
      return [flag, String(v)];
    case 'list':
      return [flag, v.join(',')];
    case 'globs':
      // RegExps become globs of the files they match (regexpArgs).
      return v.filter((g) => typeof g === 'string').map((g) => `${flag}=${g}`);
    case 'releases':
      return v.flatMap((r) => [flag, isSite(r) ? r : path.resolve(root, r)]);
    case 'path':
      if (v === false) return [d.onFalse];
      return [flag, path.resolve(d.from === 'outDir' ? outDir : root, v)];
    case 'budgets':
      return v.map(([glob, limit]) => `${flag}=${glob}=${limit}`);
    default:
      return [];
  }
}

/**
 * Arguments for `precompress DIR ...`. `dir` is passed as given; relative
 * cacheDir and dictionaryFrom paths are resolved against `root` (Vite's
 * root, like Vite's own paths) and the manifest against `outDir` (like
 * Vite's build.manifest), so the run does not depend on the cwd. `o.base`
 * is the bundler's base, which an integration sets.
 *
 * @param {ReturnType<typeof validateOptions>} o
 * @param {{ dir: string, root: string, outDir: string }} where
 */
export function runArgs(o, where) {
  const args = [where.dir, ...OPTIONS.flatMap((d) => flagsOf(d, o[d.plugin], where))];
  if (o.base) args.push('--base', o.base);
  return args;
}

/** The flags `check` shares with the run: where the manifest, the cache and the earlier releases are. */
const FOR_CHECK = ['manifest', 'cache-dir', 'dictionary-from'];

/** Arguments for `precompress check DIR ...`, reading what runArgs wrote. */
export function checkArgs(o, where) {
  const rows = OPTIONS.filter((d) => FOR_CHECK.includes(d.flag));
  return ['check', where.dir, ...rows.flatMap((d) => flagsOf(d, o[d.plugin], where))];
}

/** A `dictionaryFrom` entry that names the live site (its URL), not a folder. */
export const isSite = (d) => /^https?:\/\//.test(d);
