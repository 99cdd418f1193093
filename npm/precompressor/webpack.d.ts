import type { PrecompressOptions } from './vite.js';

export type { PrecompressOptions };

/** The options of `precompressor/vite` (less `library`), and compression-webpack-plugin's names for two of them. */
export interface PrecompressWebpackOptions extends Omit<PrecompressOptions, 'library'> {
  /** compression-webpack-plugin's `test`: as `include`. */
  test?: PrecompressOptions['include'];
  /** compression-webpack-plugin's `threshold`: as `minSize`. */
  threshold?: PrecompressOptions['minSize'];
}

/**
 * For webpack 5 and Rspack: precompresses `output.path` once the assets are emitted (`.br`,
 * `.zst`, `.gz` and `precompress-manifest.json`), with `output.publicPath` (when a path) as
 * the base; a compilation with errors is left alone. The build fails when precompress fails.
 *
 * @example
 * // webpack.config.js (or rspack.config.js)
 * import PrecompressPlugin from 'precompressor/webpack';
 * export default { plugins: [new PrecompressPlugin({ exclude: /\.map$/ })] };
 */
export default class PrecompressPlugin {
  constructor(options?: PrecompressWebpackOptions);
  apply(compiler: unknown): void;
}
export { PrecompressPlugin };
