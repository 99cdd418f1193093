import type { AstroIntegration } from 'astro';
import type { PrecompressOptions } from './vite.js';

export type { PrecompressOptions };

/**
 * Precompresses Astro's build output once it is final (`astro:build:done`): `.br`, `.zst`,
 * `.gz` beside each asset and page, and `precompress-manifest.json`. For a static site that is
 * `outDir`; with an adapter, the static part Astro serves from its client folder. The build
 * fails when precompress fails. Options are those of `precompressor/vite` (less `library`),
 * validated when the integration is created.
 *
 * @example
 * // astro.config.mjs
 * import precompress from 'precompressor/astro';
 * export default { integrations: [precompress()] };
 */
export default function precompress(options?: Omit<PrecompressOptions, 'library'>): AstroIntegration;
