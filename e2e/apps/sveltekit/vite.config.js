import { sveltekit } from '@sveltejs/kit/vite';
import adapter from '@sveltejs/adapter-static';
import { defineConfig } from 'vite';

// SvelteKit 3 takes its config here (there is no svelte.config.js). Every route is
// prerendered (src/routes/+layout.js); build/ is the deployable folder.
export default defineConfig({
  plugins: [
    sveltekit({
      adapter: adapter({ pages: 'build', assets: 'build', fallback: undefined, precompress: false, strict: true }),
    }),
  ],
});
