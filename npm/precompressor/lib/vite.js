// The Vite plugin: `precompress(options)` in vite.config's plugins runs the
// precompress binary on build.outDir once the client build is written.
//
// Why closeBundle and not writeBundle: writeBundle runs once per output
// (build.rollupOptions.output may be an array writing into one outDir), so a
// run there would see a half-written folder and run again for each output;
// closeBundle runs once per build after every output is on disk, including
// files Vite copies from public/. It also runs after a failed build (Vite
// closes the bundle in a finally), so a failed build is remembered and skipped.

import path from 'node:path';
import { validateOptions } from './options.js';
import { basePath, DEFAULT_CACHE_DIR, precompressFolder, prepare } from './run.js';
import { createHandler } from './serve.js';

const NAME = 'precompressor';
const WHO = 'precompressor/vite';

export { basePath, DEFAULT_CACHE_DIR };


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
  let previewing = false;
  return {
    name: NAME,
    // The build, and `vite preview` of what it wrote (configurePreviewServer).
    apply: (_config, env) => env.command === 'build' || env.isPreview === true,
    enforce: 'post',
    config(_config, env) {
      previewing = env.isPreview === true;
    },
    configurePreviewServer(server) {
      previewThrough(server);
    },
    configResolved(config) {
      resolved = config;
      if (previewing) return;
      // Found before bundling, so a missing binary or earlier release does not
      // wait for the whole build. Thrown here, in Vite's own hook, the error
      // is Vite's plain one (from a bundler hook, Rolldown wraps it).
      if (config.build.ssr || config.build.write === false || notDeployed(config, o)) return;
      bin = prepare(o, config.root, WHO);
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
      bin ??= prepare(o, root, WHO);
      if (config.base && !/^(\/|https?:\/\/)/.test(config.base)) {
        config.logger.warn(
          `[${NAME}] base ${JSON.stringify(config.base)} is relative: dictionary patterns assume the site is served at /`,
        );
      }
      const outDir = path.resolve(root, config.build.outDir);
      await precompressFolder({ bin, o, root, outDir, base: basePath(config.base), logger: config.logger, who: WHO });
    },
  };
}

/**
 * `vite preview` through precompressor/serve, so a preview sends what
 * production will: the br/zstd variants, deltas, the manifest's ETags and
 * headers, where Vite alone gzips on the fly. Installed before Vite's own
 * middlewares (its compression, base and static files), which still answer
 * what the manifest does not list. No manifest (a build without the plugin,
 * or with it disabled): a warning, and Vite's preview as it is.
 */
function previewThrough(server) {
  const config = server.config;
  const outDir = path.resolve(config.root, config.build.outDir);
  let handler;
  try {
    handler = createHandler(outDir, {
      base: basePath(config.base),
      spa: config.appType === undefined || config.appType === 'spa',
      warn: (m) => config.logger.warn(`[${NAME}] ${m}`),
    });
  } catch (e) {
    config.logger.warn(`[${NAME}] vite preview sends no precompressed files: ${e.message}`);
    return;
  }
  server.middlewares.use(handler);
}
