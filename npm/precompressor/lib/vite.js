// The Vite plugin: `precompress(options)` in vite.config's plugins runs the
// precompress binary on build.outDir once the client build is written.
//
// Why closeBundle and not writeBundle: writeBundle runs once per output
// (build.rollupOptions.output may be an array writing into one outDir), so a
// run there would see a half-written folder and run again for each output;
// closeBundle runs once per build after every output is on disk, including
// files Vite copies from public/. It also runs after a failed build (Vite
// closes the bundle in a finally), so a failed build is remembered and skipped.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { findBinary } from './binary.js';
import { checkArgs, runArgs, validateOptions } from './options.js';

const NAME = 'precompressor';

/** Where the plugin keeps precompress's cache and release store by default. */
export const DEFAULT_CACHE_DIR = 'node_modules/.cache/precompress';

/**
 * The URL path Vite serves the build at, for precompress's `--base`: `base`
 * as given (`/app/`), the path of a full URL (`https://cdn.example.com/app/`
 * is `/app/`), and none for a relative base (`./`, ''), whose URL is not
 * known at build time (dictionary patterns then assume the origin's root).
 */
export function basePath(base) {
  if (typeof base !== 'string' || base === '') return undefined;
  const p = /^https?:\/\//.test(base) ? new URL(base).pathname : base;
  // `/` is precompress's own default: nothing to pass.
  return p.startsWith('/') && p !== '/' ? p : undefined;
}

/** The plugin; options are validated here, before Vite bundles anything. */
export default function precompress(options) {
  const o = validateOptions(options);
  if (o.disable) return { name: NAME, apply: 'build' };

  let resolved;
  let failed = false;
  let bin;
  // Vite 6+ builds one environment at a time; only the client's output is
  // served to browsers (Vite 5: the ssr flag says the same). Nothing to do
  // either when the build writes nothing (build.write false).
  const configOf = (ctx) => ctx.environment?.config ?? resolved;
  const active = (ctx) =>
    (ctx.environment ? ctx.environment.config.consumer === 'client' : !resolved.build.ssr) &&
    configOf(ctx).build.write !== false;
  const binary = (root) => findBinary({ override: o.binary && path.resolve(root, o.binary) }).path;
  return {
    name: NAME,
    apply: 'build',
    enforce: 'post',
    configResolved(config) {
      resolved = config;
    },
    buildStart() {
      failed = false;
      // Found before bundling, so a missing binary does not wait for the whole build.
      if (active(this)) bin = binary(configOf(this).root);
    },
    buildEnd(error) {
      if (error) failed = true;
    },
    renderError() {
      failed = true;
    },
    async closeBundle(error) {
      if (error || failed || !active(this)) return;
      const config = configOf(this);
      const root = config.root;
      const outDir = path.resolve(root, config.build.outDir);
      const rel = path.relative(root, outDir);
      const dir = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : outDir;
      bin ??= binary(root);
      const quiet = config.logLevel === 'silent' || config.logLevel === 'error' ? ['--quiet'] : [];
      const where = { dir, root, outDir };
      // Vite empties outDir on every build: the cache keeps the encodings and
      // the last releases, whose assets the next build's deltas are made against.
      const opts = {
        ...o,
        cacheDir: o.cacheDir ?? (process.env.PRECOMPRESS_CACHE_DIR ? undefined : DEFAULT_CACHE_DIR),
        base: basePath(config.base),
      };
      if (config.base && !/^(\/|https?:\/\/)/.test(config.base)) {
        config.logger.warn(
          `[${NAME}] base ${JSON.stringify(config.base)} is relative: dictionary patterns assume the site is served at /`,
        );
      }
      await run(bin, [...runArgs(opts, where), ...quiet], root);
      if (o.check) await run(bin, checkArgs(o, where), root);
    },
  };
}

/**
 * Runs the binary in `cwd`: its summary (stdout) goes straight to ours, its
 * stderr is passed on and kept, and a non-zero exit rejects with the errors
 * it printed, so Vite's "error during build" shows why.
 */
function run(bin, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, stdio: ['ignore', 'inherit', 'pipe'], windowsHide: true });
    // Passed on a whole line at a time: the binary writes a line in pieces,
    // and its summary on stdout must not land in the middle of one.
    let stderr = '';
    let partial = '';
    const pass = (text) => {
      process.stderr.write(text);
      stderr = (stderr + text).slice(-64 * 1024);
    };
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      partial += chunk;
      const end = partial.lastIndexOf('\n') + 1;
      if (end > 0) {
        pass(partial.slice(0, end));
        partial = partial.slice(end);
      }
    });
    child.stderr.on('end', () => partial && pass(`${partial}\n`));
    child.on('error', (e) => reject(new Error(`precompressor/vite: could not run ${bin}: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) return resolve();
      const lines = stderr.split('\n').filter((l) => l.trim() !== '').slice(-10);
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const cmd = ['precompress', ...args].map(quote).join(' ');
      reject(new Error([`precompressor/vite: \`${cmd}\` ${how}`, ...lines.map((l) => `  ${l}`)].join('\n')));
    });
  });
}

const quote = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
