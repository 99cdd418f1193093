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
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { findBinary } from './binary.js';
import { checkArgs, hasRegExps, OptionError, regexpArgs, runArgs, validateOptions } from './options.js';

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

/**
 * Why the build Vite is finishing is not what gets deployed, if it is not:
 * library mode (a package to publish; unless `library: true`), or a
 * framework's intermediate client build, which the framework still
 * prerenders into, copies or deletes from afterwards. Those frameworks
 * have their own integration, run when their output is final.
 */
export function notDeployed(config, o) {
  if (config.build.lib && !o.library) {
    return 'library mode (build.lib) builds a package to publish, not a site: its output is left alone (set `library: true` to compress it)';
  }
  const outDir = path.resolve(config.root, config.build.outDir);
  const parts = path.relative(config.root, outDir).split(path.sep);
  const names = (config.plugins ?? []).map((p) => (p && typeof p.name === 'string' ? p.name : ''));
  const framework = [
    ['Astro', names.some((n) => n.startsWith('astro:')), 'precompressor/astro'],
    ['SvelteKit', parts.includes('.svelte-kit') || names.some((n) => n.startsWith('vite-plugin-sveltekit')), 'precompressor/sveltekit'],
    ['Nuxt', parts.includes('.nuxt') || names.some((n) => n.startsWith('nuxt:')), 'precompressor/nuxt'],
  ].find(([, is]) => is);
  if (framework) {
    const [name, , integration] = framework;
    return `${name} is still writing ${path.relative(config.root, outDir) || '.'} after this build (it prerenders, copies or deletes files later): left alone; use ${integration}, which runs on the final output`;
  }
  return undefined;
}

/** The files under `dir`, relative and `/`-separated. */
function filesOf(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)).split(path.sep).join('/'));
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
      // Found before bundling, so a missing binary or earlier release does not
      // wait for the whole build. Thrown here, in Vite's own hook, the error
      // is Vite's plain one (from a bundler hook, Rolldown wraps it).
      if (config.build.ssr || config.build.write === false || notDeployed(config, o)) return;
      bin = binary(config.root);
      for (const d of o.dictionaryFrom ?? []) {
        if (!existsSync(path.resolve(config.root, d))) {
          throw new OptionError(`option \`dictionaryFrom\` names ${d}, which does not exist (${path.resolve(config.root, d)})`);
        }
      }
    },
    buildStart() {
      failed = false;
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
      const why = notDeployed(config, o);
      if (why) {
        config.logger.warn(`[${NAME}] ${why}`);
        return;
      }
      const root = config.root;
      const outDir = path.resolve(root, config.build.outDir);
      const rel = path.relative(root, outDir);
      const dir = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : outDir;
      bin ??= binary(root);
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
      const matched = hasRegExps(o) ? regexpArgs(o, filesOf(outDir)) : [];
      await run(bin, [...runArgs(opts, where), ...matched], root, config.logger);
      if (o.check) await run(bin, checkArgs(o, where), root, config.logger);
    },
  };
}

/**
 * Runs the binary in `cwd`, its output through Vite's `logger` (so
 * `logLevel` governs it): the summary (stdout) and `--verbose`'s per-file
 * lines as info, the rest of stderr as warnings once the run succeeds. A
 * non-zero exit rejects with what it printed, once: Vite shows it as the
 * build's error.
 */
function run(bin, args, cwd, logger) {
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
    child.on('error', (e) => reject(new Error(`precompressor/vite: could not run ${bin}: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) {
        said.forEach((l) => logger.warn(l));
        return resolve();
      }
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const cmd = ['precompress', ...args].map(quote).join(' ');
      reject(new Error([`precompressor/vite: \`${cmd}\` ${how}`, ...said.slice(-20).map((l) => `  ${l}`)].join('\n')));
    });
  });
}

const quote = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
