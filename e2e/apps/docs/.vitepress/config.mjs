// The docs site: the markdown one fastify release ships (docs/, written by
// prepare.mjs from the registry tarball), as VitePress builds it. The release
// is DOCS_VERSION (build.sh sets it): in the title and the nav, as a real
// versioned docs site shows it. The sidebar lists every page of docs/Guides
// and docs/Reference under its first heading.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';

const version = process.env.DOCS_VERSION;
if (!version) throw new Error('config.mjs: DOCS_VERSION is not set (e2e/apps/docs/build.sh sets it)');
const docs = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs');

function section(dir) {
  return readdirSync(path.join(docs, dir))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => {
      const md = readFileSync(path.join(docs, dir, f), 'utf8');
      const heading = /^#{1,2} (.+)$/m.exec(md)?.[1]?.trim();
      return { text: heading && heading !== 'Fastify' ? heading : f.slice(0, -3).replace(/-/g, ' '), link: `/${dir}/${f.slice(0, -3)}` };
    });
}

export default defineConfig({
  srcDir: 'docs',
  outDir: 'dist',
  title: `Fastify v${version}`,
  description: `Fastify ${version} documentation`,
  // The docs link to GitHub paths and files outside docs/ (../../test/...).
  ignoreDeadLinks: true,
  // public/favicon.svg (prepare.mjs copies public/ into docs/).
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  themeConfig: {
    nav: [
      { text: 'Guides', link: '/Guides/Index' },
      { text: 'Reference', link: '/Reference/Index' },
      { text: `v${version}`, link: '/' },
    ],
    sidebar: [
      { text: 'Guides', items: section('Guides') },
      { text: 'Reference', items: section('Reference') },
    ],
  },
});
