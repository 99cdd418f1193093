// What Chromium does with `Link: <...>; rel="compression-dictionary"` on a
// page's revalidation: a 304 to If-None-Match, and a 200 to an
// If-None-Match that no longer matches (the page changed). Serves one page,
// one dictionary and one script on http://localhost, and visits the page
// three times in one profile; prints, per visit, whether the page request
// was conditional, its status, whether the dictionary was fetched, and the
// script request's Available-Dictionary.
//
//   node bench/probe/link-on-revalidation.mjs    (playwright-core from e2e/node_modules)
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(path.join(here, '../../e2e/package.json'))('playwright-core');

const log = [];
let pageVersion = 1;
let policy = 'none';
const server = createServer((req, res) => {
  const inm = req.headers['if-none-match'] ?? null;
  log.push({ url: req.url, inm, ad: req.headers['available-dictionary'] ?? null, dest: req.headers['sec-fetch-dest'] });
  if (req.url === '/' || req.url === '/index.html') {
    const etag = `"page-${pageVersion}"`;
    const link = '</d/dict.txt>; rel="compression-dictionary"';
    const headers = { 'Content-Type': 'text/html', ETag: etag, 'Cache-Control': 'no-cache' };
    // The link only on a conditional request: a browser that holds the page.
    if (inm && (policy === 'conditional')) headers.Link = link;
    if (inm === etag) {
      res.writeHead(304, headers);
      return res.end();
    }
    res.writeHead(200, headers);
    return res.end(`<!doctype html><title>p${pageVersion}</title><script src="/d/app-${pageVersion}.js"></script><p>v${pageVersion}`);
  }
  if (req.url === '/d/dict.txt') {
    res.writeHead(200, {
      'Content-Type': 'text/plain',
      'Cache-Control': 'public, max-age=3600',
      'Use-As-Dictionary': 'match="/d/*", match-dest=("script" "")',
    });
    return res.end('console.log("dictionary bytes");\n'.repeat(50));
  }
  if (req.url.startsWith('/d/app-')) {
    res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'public, max-age=31536000, immutable' });
    return res.end('console.log("app");');
  }
  res.writeHead(404);
  res.end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://localhost:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const results = {};
for (const scenario of ['304', '200-after-INM']) {
  const context = await browser.newContext();
  pageVersion = 1;
  policy = 'conditional';
  const visits = [];
  for (let v = 1; v <= 3; v++) {
    if (scenario === '200-after-INM' && v === 2) pageVersion = 2; // a release: the page changed
    if (scenario === '200-after-INM' && v === 3) pageVersion = 3;
    log.length = 0;
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    await sleep(2500); // idle: a Link's dictionary is fetched now
    await page.close();
    const doc = log.find((l) => l.url === '/');
    visits.push({
      visit: v,
      pageConditional: Boolean(doc?.inm),
      dictionaryFetched: log.some((l) => l.url === '/d/dict.txt'),
      scriptAvailableDictionary: log.find((l) => l.url.startsWith('/d/app-'))?.ad ?? null,
      requests: log.map((l) => l.url),
    });
  }
  results[scenario] = visits;
  await context.close();
}
await browser.close();
server.close();
console.log(JSON.stringify(results, null, 2));
