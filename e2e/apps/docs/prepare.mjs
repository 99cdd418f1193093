// Writes the markdown a fastify release ships into a VitePress source folder.
//
//   node prepare.mjs TARBALL DOCS_DIR
//
// TARBALL is `npm pack fastify@VERSION`'s .tgz (from the registry); DOCS_DIR
// (emptied first) gets its package/docs/ as it is: index.md, Guides/*.md,
// Reference/*.md and resources/ (an SVG a page shows), and the site's own
// public/ (its favicon) from beside this script. Nothing is rewritten:
// VitePress 1.6 builds the markdown of fastify 5.12.0 to 5.12.2 unchanged
// (no `{{ }}` outside code, and its raw HTML, <h1 align> and <a id>
// anchors, is valid in a Vue template). A release whose docs need escaping
// would get it here.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [tarball, docsArg] = process.argv.slice(2);
if (!tarball || !docsArg) {
  console.error('usage: node prepare.mjs TARBALL DOCS_DIR');
  process.exit(2);
}
const docs = path.resolve(docsArg);
rmSync(docs, { recursive: true, force: true });
mkdirSync(docs, { recursive: true });
// package/docs/X -> DOCS_DIR/X
const r = spawnSync('tar', ['-xzf', tarball, '-C', docs, '--strip-components=2', 'package/docs'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(1);
cpSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'public'), path.join(docs, 'public'), { recursive: true });
const pages = (d) => readdirSync(path.join(docs, d)).filter((f) => f.endsWith('.md')).length;
const n = 1 + pages('Guides') + pages('Reference');
if (n < 40) {
  console.error(`prepare.mjs: only ${n} pages in ${tarball}`);
  process.exit(1);
}
console.error(`prepare.mjs: ${n} pages from ${path.basename(tarball)}`);
