// What every integration does once the deployable folder is final: run
// `precompress` on it (then `precompress check` if asked) with the options'
// flags, its output through the build tool's logger, failing with its message.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { findBinary } from './binary.js';
import { checkArgs, hasRegExps, isSite, OptionError, regexpArgs, runArgs } from './options.js';

/**
 * Where precompress keeps its cache and release store by default: in the
 * nearest folder above the output folder that holds a package.json (the
 * binary finds it, so the plugin, the CLI, `check` and the Action agree).
 */
export const DEFAULT_CACHE_DIR = 'node_modules/.cache/precompress';

/**
 * The URL path a build is served at, for precompress's `--base`: `base`
 * as given (`/app/`), the path of a full URL (`https://cdn.example.com/app/`
 * is `/app/`), and none for a relative base (`./`, ''; Vite's), whose URL is not
 * known at build time (dictionary patterns then assume the origin's root).
 */
export function basePath(base) {
  if (typeof base !== 'string' || base === '') return undefined;
  const p = /^https?:\/\//.test(base) ? new URL(base).pathname : base;
  // `/` is precompress's own default: nothing to pass.
  return p.startsWith('/') && p !== '/' ? p : undefined;
}

/**
 * What is checked before a build starts, so a mistake does not wait for
 * the whole build: the binary (returned) and every `dictionaryFrom` folder.
 * Throws naming `who`, the option and the path.
 */
export function prepare(o, root, who) {
  const bin = findBinary({ override: o.binary && path.resolve(root, o.binary) }).path;
  for (const d of (o.dictionaryFrom ?? []).filter((d) => !isSite(d))) {
    const abs = path.resolve(root, d);
    if (!existsSync(abs)) throw new OptionError(`option \`dictionaryFrom\` names ${d}, which does not exist (${abs})`, who);
  }
  return bin;
}

/** The files under `dir`, relative and `/`-separated. */
export function filesOf(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)).split(path.sep).join('/'));
}

/**
 * Precompresses `outDir` (the project at `root`) with the validated options
 * `o`, served at `base` (a path, or undefined for /). `who` names the
 * integration in errors; `logger` has info and warn.
 */
export async function precompressFolder({ bin, o, root, outDir, base, logger, who }) {
  const rel = path.relative(root, outDir);
  const dir = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : outDir;
  const where = { dir, root, outDir };
  // Builds empty their output folder: the cache keeps the encodings and the
  // last releases, whose assets the next build's deltas are made against.
  // With no cacheDir the binary uses PRECOMPRESS_CACHE_DIR, precompress.toml's
  // or DEFAULT_CACHE_DIR of the project: the folder `precompress dist` and
  // `precompress check dist` find too.
  const opts = { ...o, base };
  const matched = hasRegExps(o) ? regexpArgs(o, filesOf(outDir)) : [];
  await run(bin, [...runArgs(opts, where), ...matched], root, logger, who);
  if (o.check) await run(bin, checkArgs(o, where), root, logger, who);
}

/**
 * Runs the binary in `cwd`, its output through Vite's `logger` (so
 * `logLevel` governs it): the summary (stdout) and `--verbose`'s per-file
 * lines as info, the rest of stderr as warnings once the run succeeds. A
 * non-zero exit rejects with what it printed, once: Vite shows it as the
 * build's error.
 */
export function run(bin, args, cwd, logger, who) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const said = [];
    const lines = (stream, each) => {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        partial += chunk;
        const parts = partial.split('\n');
        partial = parts.pop();
        parts.filter((l) => l.trim() !== '').forEach(each);
      });
      stream.on('end', () => partial.trim() && each(partial));
    };
    lines(child.stdout, (l) => logger.info(l));
    // --verbose's lines are indented; the others are warnings or errors.
    lines(child.stderr, (l) => (l.startsWith('  ') ? logger.info(l) : said.push(l)));
    child.on('error', (e) => reject(new Error(`${who}: could not run ${bin}: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) {
        said.forEach((l) => logger.warn(l));
        return resolve();
      }
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const cmd = redactUserinfo(['precompress', ...args].map(quote).join(' '));
      reject(new Error([`${who}: \`${cmd}\` ${how}`, ...said.slice(-20).map((l) => `  ${l}`)].join('\n')));
    });
  });
}

/**
 * `text` with the userinfo of every `scheme://user:password@host` in it
 * replaced by `***`, as the binary prints URLs (probe::redact_userinfo):
 * also a password holding `/`, `?` or `#` as typed, where what follows the
 * authority's first `:` is no port.
 */
export function redactUserinfo(text) {
  let out = '';
  let rest = text;
  for (let i = rest.indexOf('://'); i >= 0; i = rest.indexOf('://')) {
    out += rest.slice(0, i + 3);
    const after = rest.slice(i + 3);
    const stop = (re) => {
      const m = re.exec(after);
      return m ? m.index : after.length;
    };
    const end = stop(/[/?#\s]/);
    const word = stop(/[\s"'<>`]/);
    let at = after.slice(0, end).lastIndexOf('@');
    if (at < 0) {
      const colon = after.slice(0, end).indexOf(':');
      const port = colon < 0 ? '' : after.slice(colon + 1, end);
      if (colon >= 0 && !after.startsWith('[') && !/^\d+$/.test(port)) at = after.slice(0, word).lastIndexOf('@');
    }
    if (at >= 0) {
      out += '***';
      rest = after.slice(at);
    } else {
      out += after.slice(0, end);
      rest = after.slice(end);
    }
  }
  return out + rest;
}

const quote = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
