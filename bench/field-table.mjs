// Tabulates e2e/field.mjs results (bench/field.sh): one row per app, way of
// finding earlier releases, and release: JS and CSS, then the whole visit
// (every response, pages included). Markdown on stdout.
//
//   node bench/field-table.mjs RESULT.json...
import { readFileSync } from 'node:fs';

const n = (x) => x.toLocaleString('en-US');
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const MODES = { cache: '--cache-dir', from: '--dictionary-from PREV', site: '--dictionary-from URL (serve, then http.server)' };

console.log('| app | earlier releases via | release | first visit, no dictionaries | first visit with them (dictionaries at idle) | first-visit extra | returning visitor (dictionaries) | returning / first | changed files as deltas | whole visit: first, no dictionaries | whole: returning | whole: returning / first | pages as deltas |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|');
for (const file of process.argv.slice(2)) {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const app = `${r.app}${r.base !== '/' ? ` (base ${r.base})` : ''}`;
  for (const [mode, m] of Object.entries(r.modes)) {
    m.first.forEach((f, i) => {
      const back = i > 0 ? m.returning[i] : null;
      const deltas = back ? back.changed.filter((c) => ['dcb', 'dcz'].includes(c.contentEncoding)).length : 0;
      console.log([
        '', app, MODES[mode] ?? mode, i + 1, `${n(r.none[i])} B`,
        `${n(f.total)} B (${n(f.dictionaries)} B)`, pct(f.extra),
        back ? `${n(back.total)} B (${n(back.dictionaries)} B)` : '–',
        back ? `${(100 * back.ratio).toFixed(2)}%` : '–',
        back ? `${deltas} of ${back.changed.length}` : '–',
        // The whole visit: every response (pages, scripts, styles, images, dictionaries).
        r.noneWhole ? `${n(r.noneWhole[i])} B` : '–',
        back?.whole !== undefined ? `${n(back.whole)} B` : '–',
        back?.wholeRatio !== undefined ? `${(100 * back.wholeRatio).toFixed(2)}%` : '–',
        back?.documents ? `${back.documents.filter((d) => ['dcb', 'dcz'].includes(d.contentEncoding)).length} of ${back.documents.length}` : '–', '',
      ].join(' | ').trim());
    });
  }
  if (r.errors.length || r.failed.length) console.log(`\n${r.app}: ${r.errors.length} errors, ${r.failed.length} failed requests\n`);
}
