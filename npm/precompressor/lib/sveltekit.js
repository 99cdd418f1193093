// SvelteKit: `precompress(adapter(...), options)` as the adapter (SvelteKit
// 3: `sveltekit({ adapter })` in vite.config.js; 2: svelte.config.js's
// `kit.adapter`) wraps it, so precompress runs when the adapter has written and
// prerendered everything, on the folder it deploys. A Vite plugin cannot:
// SvelteKit bundles into .svelte-kit/output/ first, and the adapter copies
// (and prerenders into) its own folder after every Vite hook.

import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { validateOptions } from './options.js';
import { basePath, precompressFolder, prepare } from './run.js';

const WHO = 'precompressor/sveltekit';

/**
 * The adapter `adapter`, precompressing its output folder (`dir`, relative
 * to the project: `build` by default, as adapter-static writes it; for
 * adapter-node, `build/client`) once it has adapted. Other options are
 * those of `precompressor/vite`.
 */
export default function precompress(adapter, options = {}) {
  if (!adapter || typeof adapter.adapt !== 'function') {
    throw new Error(`${WHO}: the first argument must be an adapter, as adapter() from @sveltejs/adapter-static returns`);
  }
  const { dir = 'build', ...rest } = options ?? {};
  if (typeof dir !== 'string' || dir.trim() === '') {
    throw new Error(`${WHO}: option \`dir\` must be the adapter's output folder, got ${JSON.stringify(dir)}`);
  }
  const o = validateOptions(rest, WHO);
  return {
    ...adapter,
    name: `${adapter.name} + precompressor`,
    async adapt(builder) {
      await adapter.adapt(builder);
      if (o.disable) return;
      const root = process.cwd();
      const outDir = path.resolve(root, dir);
      if (!existsSync(outDir) || !statSync(outDir).isDirectory()) {
        throw new Error(
          `${WHO}: ${adapter.name} wrote no ${dir}/ (${outDir}); set the option \`dir\` to the folder it deploys`,
        );
      }
      const bin = prepare(o, root, WHO);
      const base = basePath(configuredBase(builder.config));
      const log = builder.log;
      // log.info and log.minor print only with --verbose; the summary is worth a line.
      const logger = { info: (m) => log(m), warn: (m) => (log.warn ?? log)(m) };
      await precompressFolder({ bin, o, root, outDir, base, logger, who: WHO });
    },
  };
}

/**
 * The configured `paths.base` ('' or '/app', no trailing slash): SvelteKit 3
 * hands the adapter its options flat (`config.paths`), SvelteKit 2 under
 * `config.kit`.
 */
export function configuredBase(config) {
  return config?.kit?.paths?.base ?? config?.paths?.base;
}
