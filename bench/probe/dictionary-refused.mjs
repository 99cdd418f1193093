// What Chromium does when the dictionary a page links is refused because it
// came before the chunk it would be a delta against was stored (the
// first-visit race of issue #46): the server answers the Link's fetch with
// no `Available-Dictionary` by STATUS (`Cache-Control: no-store`, no body
// worth a byte), and with one by the dictionary; the profile's first fetch
// is refused whatever it offers (the race, lost for certain). Serves a page that links
// `/d/dict.js` and loads `/d/app.js` (marked `match="/d/*"`), visits it
// three times in one profile, and prints per visit: the dictionary's
// requests (with or without Available-Dictionary, and the answer), whether
// it was stored (a later fetch of `/d/x.js` offering it), and what the
// page's console and the request-failed events said.
//
//   node bench/probe/dictionary-refused.mjs [STATUS...]   (default 404 503 425; playwright-core from e2e/node_modules)
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(path.join(here, '../../e2e/package.json'))('playwright-core');

const dict = Buffer.from('export const shared = () => "the code dictionary";\n'.repeat(40));
const dictHash = `:${createHash('sha256').update(dict).digest('base64')}:`;
const app = Buffer.from('globalThis.app = (globalThis.app ?? 0) + 1;\n'.repeat(30));
const log = [];
let status = 404;
let refused = 0;
const server = createServer((req, res) => {
  const ad = req.headers['available-dictionary'] ?? null;
  const entry = { url: req.url, ad, dest: req.headers['sec-fetch-dest'], mode: req.headers['sec-fetch-mode'] };
  log.push(entry);
  if (req.url === '/' || req.url.startsWith('/?')) {
    res.writeHead(200, {
      'Content-Type': 'text/html',
      'Cache-Control': 'no-cache',
      Link: '</d/dict.js>; rel="compression-dictionary"',
    });
    return res.end('<!doctype html><title>p</title><script src="/d/app.js"></script><p>page');
  }
  if (req.url === '/d/app.js') {
    res.writeHead(200, {
      'Content-Type': 'text/javascript',
      'Cache-Control': 'public, max-age=31536000, immutable',
      'Use-As-Dictionary': 'match="/d/*", match-dest=("script" "")',
    });
    return res.end(app);
  }
  if (req.url === '/d/dict.js') {
    // The race, lost for certain: the profile's first fetch is answered as
    // if it had come before the chunk was stored.
    if (!ad || refused++ === 0) {
      entry.answer = status;
      res.writeHead(status, { 'Cache-Control': 'no-store', 'Content-Length': '0', ...(status === 503 ? { 'Retry-After': '5' } : {}) });
      return res.end();
    }
    entry.answer = 200;
    res.writeHead(200, {
      'Content-Type': 'text/javascript',
      'Cache-Control': 'public, max-age=31536000, immutable',
      'Use-As-Dictionary': 'match="/d/*.js", match-dest=("script" "")',
      Vary: 'Accept-Encoding, Available-Dictionary',
    });
    return res.end(dict);
  }
  res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'no-store' });
  res.end('//');
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://localhost:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const statuses = process.argv.slice(2).map(Number);
const results = {};
for (const s of statuses.length ? statuses : [404, 503, 425]) {
  status = s;
  refused = 0;
  const context = await browser.newContext();
  const visits = [];
  for (let v = 1; v <= 3; v++) {
    log.length = 0;
    const page = await context.newPage();
    const console = [];
    const failed = [];
    page.on('console', (m) => m.type() !== 'log' && console.push(`${m.type()}: ${m.text()}`));
    page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
    await page.goto(`${origin}/?v=${v}`);
    await sleep(2500); // idle: the Link's dictionary is fetched now
    // Whether a dictionary for /d/*.js is stored: what this fetch offers.
    await page.evaluate(() => fetch('/d/x.js').then((r) => r.text()));
    await page.close();
    visits.push({
      visit: v,
      dictionary: log.filter((l) => l.url === '/d/dict.js').map((l) => ({ ad: l.ad, answer: l.answer, dest: l.dest, mode: l.mode })),
      offeredForX: log.find((l) => l.url === '/d/x.js')?.ad ?? null,
      offeredIsDictionary: (log.find((l) => l.url === '/d/x.js')?.ad ?? null) === dictHash,
      console,
      failed,
    });
  }
  results[s] = visits;
  await context.close();
}
await browser.close();
server.close();
process.stdout.write(JSON.stringify(results, null, 2) + '\n');
