import { defineConfig } from 'astro/config';
import preact from '@astrojs/preact';

// Static output (the default) into dist/, pages as about/index.html.
// inlineStylesheets: 'never' writes every stylesheet as _astro/*.css.
export default defineConfig({
  integrations: [preact()],
  build: { inlineStylesheets: 'never' },
  telemetry: false,
});
