// The Astro integration: `precompress(options)` in astro.config's
// integrations runs the precompress binary on the build's output once Astro
// has finished it (`astro:build:done`: every page prerendered, the prerender
// chunks deleted). For static sites that is outDir; for the static part of
// a site with an adapter, the client folder Astro hands the hook
// (`dist/client/`), never the server's.

import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateOptions } from './options.js';
import { basePath, precompressFolder, prepare } from './run.js';

const WHO = 'precompressor/astro';

/** The integration; options are validated here, before Astro builds anything. */
export default function precompress(options) {
  const o = validateOptions(options, WHO);
  let root;
  let base;
  let bin;
  return {
    name: 'precompressor',
    hooks: {
      // Before the build: a missing binary or earlier release fails it at once.
      'astro:config:done': ({ config }) => {
        root = fileURLToPath(config.root);
        base = basePath(config.base);
        if (o.disable) return;
        bin = prepare(o, root, WHO);
      },
      'astro:build:done': async ({ dir, logger }) => {
        if (o.disable) return;
        const outDir = fileURLToPath(dir);
        if (!existsSync(outDir) || !statSync(outDir).isDirectory()) {
          throw new Error(`${WHO}: Astro's output folder ${outDir} does not exist: nothing to precompress`);
        }
        await precompressFolder({ bin, o, root, outDir, base, logger, who: WHO });
      },
    },
  };
}
