import type { PrecompressOptions } from './vite.js';

export type { PrecompressOptions };

/**
 * The Nuxt module: precompresses Nitro's public folder (`.output/public`) when Nitro closes,
 * after `nuxt generate` prerendered every page or `nuxt build` copied the public assets, with
 * `app.baseURL` as the base. Options (those of `precompressor/vite`, less `library`) as the
 * module's inline options or nuxt.config's `precompress` key.
 *
 * @example
 * // nuxt.config.ts
 * export default defineNuxtConfig({ modules: ['precompressor/nuxt'], precompress: { check: true } });
 */
declare function precompressModule(
  inlineOptions: Omit<PrecompressOptions, 'library'> | undefined,
  nuxt: unknown,
): void;
export default precompressModule;
