// The webpack 5 and Rspack plugin: `new PrecompressPlugin(options)` in the
// config's plugins runs the precompress binary on output.path once the
// compilation's assets are emitted (the `done` hook, after every emit; not
// for a compilation with errors). The same options as precompressor/vite,
// plus the names compression-webpack-plugin users have in their configs:
// `test` (as `include`) and `threshold` (as `minSize`); `minRatio` is ours
// too. Its other options have no counterpart here and are refused, saying why.

import path from 'node:path';
import { OptionError, validateOptions } from './options.js';
import { precompressFolder, prepare } from './run.js';

const NAME = 'precompressor';
const WHO = 'precompressor/webpack';

/** compression-webpack-plugin's options with no counterpart, and why. */
const NOT_HERE = {
  algorithm: 'precompress writes br, zstd and gzip (choose with `formats`)',
  filename: 'variants are named ASSET.br, .zst, .gz beside the asset, as servers look for them',
  deleteOriginalAssets: 'the sources stay: a server needs them for clients that accept no encoding',
  compressionOptions: 'use `brotliQuality`, `zstdLevel` and `gzipLevel`',
};

/** compression-webpack-plugin's names as ours: test -> include, threshold -> minSize. */
export function fromCompressionPlugin(options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) return options;
  const { test, threshold, ...rest } = options;
  for (const k of Object.keys(rest)) {
    if (NOT_HERE[k]) throw new OptionError(`option \`${k}\` of compression-webpack-plugin has no counterpart: ${NOT_HERE[k]}`, WHO);
  }
  if (test !== undefined && rest.include !== undefined) {
    throw new OptionError('options `test` and `include` both say which files to compress: give one (`include` takes globs and RegExps)', WHO);
  }
  return {
    ...rest,
    ...(test !== undefined && { include: test }),
    ...(threshold !== undefined && { minSize: threshold }),
  };
}

/** The plugin; options are validated when it is created, before webpack compiles. */
export default class PrecompressPlugin {
  constructor(options) {
    this.options = validateOptions(fromCompressionPlugin(options), WHO);
  }

  apply(compiler) {
    const o = this.options;
    if (o.disable) return;
    const root = compiler.context;
    const logger = compiler.getInfrastructureLogger(NAME);
    let bin;
    // Before compiling: a missing binary or earlier release fails at once.
    const ready = () => (bin ??= prepare(o, root, WHO));
    compiler.hooks.beforeRun.tap(NAME, ready);
    compiler.hooks.watchRun.tap(NAME, ready);
    compiler.hooks.done.tapPromise(NAME, async (stats) => {
      if (stats.hasErrors()) return;
      const outDir = path.resolve(root, compiler.options.output.path ?? compiler.outputPath);
      const pub = compiler.options.output.publicPath;
      const base = typeof pub === 'string' && pub.startsWith('/') && pub !== '/' ? pub : undefined;
      await precompressFolder({ bin: ready(), o, root, outDir, base, logger, who: WHO });
    });
  }
}

export { PrecompressPlugin };
