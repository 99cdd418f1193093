// Turns a copy of one of the apps into "release 2" the way a developer would:
// it edits source files in place. Each app gets a small change: one component
// gets a changed string and one added line of logic, and one stylesheet rule
// changes. Every edit replaces the one line carrying a `@release2:NAME` marker
// (the new text keeps that line's indentation and drops the marker, so running
// this twice fails). A marker that is missing or appears twice is an error.
//
// Usage: node release2.mjs APP_DIR
// The app is recognized by the "name" in APP_DIR/package.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const EDITS = {
  'precompress-e2e-vite-react': [
    ['src/pages/a/Page.tsx', 'title', `const TITLE = 'Latest orders'`],
    ['src/pages/a/Page.tsx', 'filter', `const rows = sorted.filter((o) => matches(o, query))
  .filter((o) => o.status !== 'cancelled') // release 2: hide cancelled orders`],
    ['src/style.css', 'header',
      `.header { display: flex; justify-content: space-between; align-items: center; border-bottom: 3px solid var(--accent); }`],
  ],
  'precompress-e2e-sveltekit': [
    ['src/lib/ShippingEstimator.svelte', 'headline', `const HEADLINE = 'Your shipping quote';`],
    ['src/lib/ShippingEstimator.svelte', 'logic', `if (express) total *= 1.5;
if (zone !== 'domestic' && billable <= 0.5) total -= 1; // release 2: letter-size discount`],
    ['src/app.css', 'nav', `.site-nav a { color: var(--accent); text-decoration: none; font-weight: 700; }`],
  ],
  'precompress-e2e-astro': [
    ['src/components/ReadingList.jsx', 'headline', `const HEADLINE = 'Books to read';`],
    ['src/components/ReadingList.jsx', 'filter', `const shown = books.filter((b) => tag === 'all' || b.tag === tag);
shown.sort((a, b) => Number(done.has(a.id)) - Number(done.has(b.id))); // release 2: unread first`],
    ['src/styles/global.css', 'h1', `h1 { font-size: 1.75rem; color: #111827; }`],
  ],
  'precompress-e2e-nuxt': [
    ['app/components/HabitTracker.vue', 'headline', `const HEADLINE = 'Last 7 days'`],
    ['app/components/HabitTracker.vue', 'add', `if (!name) return
if (habits.value.some((h) => h.name === name)) return // release 2: no duplicates`],
    ['app/assets/main.css', 'active',
      `.site-nav a.router-link-exact-active { text-decoration: underline; text-underline-offset: 4px; }`],
  ],
};

function fail(message) {
  console.error(`release2.mjs: ${message}`);
  process.exit(1);
}

const dir = process.argv[2];
if (!dir) fail('usage: node release2.mjs APP_DIR');

let name;
try {
  name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name;
} catch (e) {
  fail(`cannot read ${join(dir, 'package.json')}: ${e.message}`);
}
const edits = EDITS[name];
if (!edits) fail(`no release-2 edits for package "${name}" (known: ${Object.keys(EDITS).join(', ')})`);

// Check every marker before writing anything, so a failure leaves the copy untouched.
const files = new Map();
for (const [file, marker, text] of edits) {
  const path = join(dir, file);
  if (!files.has(path)) {
    try {
      files.set(path, readFileSync(path, 'utf8').split('\n'));
    } catch (e) {
      fail(`cannot read ${path}: ${e.message}`);
    }
  }
  const lines = files.get(path);
  const tag = `@release2:${marker}`;
  const hits = lines.flatMap((l, i) => (l.includes(tag) ? [i] : []));
  if (hits.length !== 1) {
    fail(`${path}: expected exactly one line with marker ${tag}, found ${hits.length}` +
      (hits.length === 0 ? ' (already release 2, or the source changed?)' : ''));
  }
  const i = hits[0];
  const indent = lines[i].match(/^\s*/)[0];
  lines.splice(i, 1, ...text.split('\n').map((l) => indent + l));
  console.log(`release2: ${file}: ${tag}`);
}
for (const [path, lines] of files) writeFileSync(path, lines.join('\n'));
