import type { Adapter } from '@sveltejs/kit';
import type { PrecompressOptions } from './vite.js';

export type { PrecompressOptions };

/** The options of `precompressor/vite` (less `library`), and the adapter's output folder. */
export interface PrecompressSvelteKitOptions extends Omit<PrecompressOptions, 'library'> {
  /** The folder the adapter deploys, relative to the project: `build` (adapter-static's default), `build/client` for adapter-node. */
  dir?: string;
}

/**
 * Wraps a SvelteKit adapter: once it has written and prerendered everything, precompresses
 * its output folder (`.br`, `.zst`, `.gz` and `precompress-manifest.json`) with
 * `paths.base` as the base. The build fails when precompress fails.
 *
 * @example
 * // vite.config.js (SvelteKit 3; on SvelteKit 2, `kit.adapter` in svelte.config.js)
 * import adapter from '@sveltejs/adapter-static';
 * import { sveltekit } from '@sveltejs/kit/vite';
 * import precompress from 'precompressor/sveltekit';
 * export default { plugins: [sveltekit({ adapter: precompress(adapter()) })] };
 */
export default function precompress(adapter: Adapter, options?: PrecompressSvelteKitOptions): Adapter;
