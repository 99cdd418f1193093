// The Nuxt module: `modules: [['precompressor/nuxt', options]]` (or the
// `precompress` key of nuxt.config) precompresses Nitro's public folder
// (.output/public) when Nitro closes, after `nuxt generate` has prerendered
// every page and `nuxt build` has copied the public assets: the folder that
// is deployed (or served by the Nitro server). Never .nuxt/, never the
// server bundle.

import { existsSync, statSync } from 'node:fs';
import { validateOptions } from './options.js';
import { basePath, precompressFolder, prepare } from './run.js';

const WHO = 'precompressor/nuxt';

/** The module: a function Nuxt calls with its options and the Nuxt instance. */
export default function precompressModule(inlineOptions, nuxt) {
  const o = validateOptions({ ...(nuxt.options.precompress ?? {}), ...(inlineOptions ?? {}) }, WHO);
  if (o.disable || nuxt.options.dev) return;
  const root = nuxt.options.rootDir;
  // Before the build: a missing binary or earlier release fails it at once.
  const bin = prepare(o, root, WHO);
  nuxt.hook('nitro:init', (nitro) => {
    nitro.hooks.hook('close', async () => {
      const outDir = nitro.options.output.publicDir;
      if (!existsSync(outDir) || !statSync(outDir).isDirectory()) {
        throw new Error(`${WHO}: Nitro wrote no public folder ${outDir}: nothing to precompress`);
      }
      const logger = { info: (m) => console.log(m), warn: (m) => console.warn(m) };
      await precompressFolder({ bin, o, root, outDir, base: basePath(nuxt.options.app?.baseURL), logger, who: WHO });
    });
  });
}

precompressModule.getMeta = () => Promise.resolve({ name: 'precompressor', configKey: 'precompress' });
