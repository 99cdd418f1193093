// Turns a copy of one of the apps into "release 2" (or "release 3", applied
// after release 2) the way a developer would: it edits source files in place.
// Each release gets a small change: a component gets a changed string (the
// text of its `data-e2e-release` element) and one added line of logic, and a
// stylesheet rule changes; release 3 also touches a second component or page.
// Every edit of release N replaces the one line carrying a `@releaseN:NAME`
// marker (the new text keeps that line's indentation and drops the marker,
// so running one release twice fails; release 2's new headline carries
// release 3's marker). A marker that is missing or appears twice is an error.
//
// Usage: node release2.mjs APP_DIR [N]      (N: 2, the default, or 3)
// The app is recognized by the "name" in APP_DIR/package.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const EDITS2 = {
  'precompress-e2e-vite-react': [
    ['src/pages/a/Page.tsx', 'title', `const TITLE = 'Latest orders' // @release3:title`],
    ['src/pages/a/Page.tsx', 'filter', `const rows = sorted.filter((o) => matches(o, query))
  .filter((o) => o.status !== 'cancelled') // release 2: hide cancelled orders`],
    ['src/style.css', 'header',
      `.header { display: flex; justify-content: space-between; align-items: center; border-bottom: 3px solid var(--accent); }`],
  ],
  'precompress-e2e-sveltekit': [
    ['src/lib/ShippingEstimator.svelte', 'headline', `const HEADLINE = 'Your shipping quote'; // @release3:headline`],
    ['src/lib/ShippingEstimator.svelte', 'logic', `if (express) total *= 1.5;
if (zone !== 'domestic' && billable <= 0.5) total -= 1; // release 2: letter-size discount`],
    ['src/app.css', 'nav', `.site-nav a { color: var(--accent); text-decoration: none; font-weight: 700; }`],
  ],
  'precompress-e2e-astro': [
    ['src/components/ReadingList.jsx', 'headline', `const HEADLINE = 'Books to read'; // @release3:headline`],
    ['src/components/ReadingList.jsx', 'filter', `const shown = books.filter((b) => tag === 'all' || b.tag === tag);
shown.sort((a, b) => Number(done.has(a.id)) - Number(done.has(b.id))); // release 2: unread first`],
    ['src/styles/global.css', 'h1', `h1 { font-size: 1.75rem; color: #111827; }`],
  ],
  'precompress-e2e-nuxt': [
    ['app/components/HabitTracker.vue', 'headline', `const HEADLINE = 'Last 7 days' // @release3:headline`],
    ['app/components/HabitTracker.vue', 'add', `if (!name) return
if (habits.value.some((h) => h.name === name)) return // release 2: no duplicates`],
    ['app/assets/main.css', 'active',
      `.site-nav a.router-link-exact-active { text-decoration: underline; text-underline-offset: 4px; }`],
  ],
};

const EDITS3 = {
  'precompress-e2e-vite-react': [
    ['src/pages/a/Page.tsx', 'title', `const TITLE = 'Open orders'`],
    ['src/pages/b/Page.tsx', 'store', `storeName: 'Example Shop',`],
    ['src/pages/b/Page.tsx', 'validate', `if (s.lowStockThreshold < 0 || s.lowStockThreshold > 1000) errors.lowStockThreshold = 'Use a number from 0 to 1000.'
if (s.notifyOnRefund && !s.email.trim()) errors.email = 'Refund notices need an e-mail address.' // release 3`],
    ['src/style.css', 'footer',
      `.footer { color: var(--muted); font-size: 0.85rem; border-top: 1px dashed var(--line); padding-top: 1rem; }`],
  ],
  'precompress-e2e-sveltekit': [
    ['src/lib/ShippingEstimator.svelte', 'headline', `const HEADLINE = 'Shipping, estimated';`],
    ['src/routes/about/+page.svelte', 'zone', `{ name: 'EU', days: '2–4', base: 8.9 }, // release 3: faster, cheaper`],
    ['src/app.css', 'footer', `.site-footer { margin-top: 2.5rem; color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--line); }`],
  ],
  'precompress-e2e-astro': [
    ['src/components/ReadingList.jsx', 'headline', `const HEADLINE = 'Reading, this month';`],
    ['src/components/ReadingList.jsx', 'summary', `if (done === total) return 'All read. Add more books!'; // release 3`],
    ['src/components/ReadingList.css', 'progress', `.reading .progress span { display: block; height: 100%; background: var(--accent); transition: width 0.2s; }`],
  ],
  'precompress-e2e-nuxt': [
    ['app/components/HabitTracker.vue', 'headline', `const HEADLINE = 'Your week'`],
    ['app/pages/about.vue', 'rule', `'Missing one day resets the streak to zero, unless the day was marked as rest.',`],
    ['app/assets/main.css', 'footer', `.site-footer { margin-top: 2.5rem; color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--line); }`],
  ],
};

function fail(message) {
  console.error(`release2.mjs: ${message}`);
  process.exit(1);
}

const dir = process.argv[2];
if (!dir) fail('usage: node release2.mjs APP_DIR [N]');
const release = process.argv[3] ?? '2';
const EDITS = { 2: EDITS2, 3: EDITS3 }[release];
if (!EDITS) fail(`no release ${release} (2 or 3)`);

let name;
try {
  name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name;
} catch (e) {
  fail(`cannot read ${join(dir, 'package.json')}: ${e.message}`);
}
const edits = EDITS[name];
if (!edits) fail(`no release-${release} edits for package "${name}" (known: ${Object.keys(EDITS).join(', ')})`);

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
  const tag = `@release${release}:${marker}`;
  const hits = lines.flatMap((l, i) => (l.includes(tag) ? [i] : []));
  if (hits.length !== 1) {
    fail(`${path}: expected exactly one line with marker ${tag}, found ${hits.length}` +
      (hits.length === 0 ? ` (already release ${release}, or the source changed?)` : ''));
  }
  const i = hits[0];
  const indent = lines[i].match(/^\s*/)[0];
  lines.splice(i, 1, ...text.split('\n').map((l) => indent + l));
  console.log(`release${release}: ${file}: ${tag}`);
}
for (const [path, lines] of files) writeFileSync(path, lines.join('\n'));
