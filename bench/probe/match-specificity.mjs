// Which stored dictionary Chromium offers when two match a URL: two
// dictionaries with different `match` patterns that both cover /d/x.js,
// fetched in either order; prints the request's Available-Dictionary for
// /d/x.js (and for /d/r.js, the URL of the one with the longer pattern).
//
//   node bench/probe/match-specificity.mjs
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(path.join(here, '../../e2e/package.json'))('playwright-core');

const DICTS = {
  '/d/short.txt': { match: '/d/*', body: 'short '.repeat(100) },
  '/d/long.js': { match: '/d/*.js', body: 'long '.repeat(100) },
};
const sha = (s) => `:${createHash('sha256').update(s).digest('base64')}:`;
const names = Object.fromEntries(Object.entries(DICTS).map(([u, d]) => [sha(d.body), u]));
const seen = [];
const server = createServer((req, res) => {
  seen.push({ url: req.url, ad: req.headers['available-dictionary'] ?? null });
  const d = DICTS[req.url.split('?')[0]];
  if (d) {
    res.writeHead(200, {
      'Content-Type': 'text/plain',
      'Cache-Control': 'public, max-age=3600',
      'Use-As-Dictionary': `match="${d.match}", match-dest=("script" "")`,
    });
    return res.end(d.body);
  }
  res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' });
  res.end('<!doctype html><p>probe');
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://localhost:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = {};
for (const order of [['/d/short.txt', '/d/long.js'], ['/d/long.js', '/d/short.txt']]) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  for (const u of order) {
    await page.evaluate((u) => fetch(u).then((r) => r.text()), u);
    await sleep(300);
  }
  seen.length = 0;
  await page.evaluate(() => fetch('/d/x.js?1').then((r) => r.text()));
  await page.evaluate(() => fetch('/d/long.js?2').then((r) => r.text()));
  await page.evaluate(() => fetch('/d/other.txt').then((r) => r.text()));
  out[`fetched ${order.join(' then ')}`] = Object.fromEntries(seen.map((s) => [s.url, names[s.ad] ?? s.ad]));
  await context.close();
}
await browser.close();
server.close();
console.log(JSON.stringify(out, null, 2));
