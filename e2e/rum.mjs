// The RUM snippet in a real browser (tests/rum_browser.rs): the collector
// (precompressor/rum-collector, from this checkout) on 127.0.0.1:PORT
// receives what the page's snippet posts; headless Chromium
// loads URL, leaves it (about:blank, so the snippet reports), prints one JSON
// line, and for each line on stdin (the test deploys the next release, or
// not) does it again as the same returning visitor, until stdin closes. Each line: the page's #marker,
// its errors, the report the collector got, and Chromium's own record of each
// response of the page's origin: its Content-Encoding, its encoded body size
// (request.sizes()) and its decoded length. When stdin closes, one last line:
// {totals}, what the collector answers a GET with.
// Usage: node rum.mjs URL PORT   (env: CHROMIUM, default /usr/lib/chromium/chromium)
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { createCollector } from '../npm/precompressor/lib/rum-collector.js';
import { launch, urlArgument } from './launch.mjs';

const url = urlArgument('rum.mjs');
const port = Number(process.argv[3]);
const reports = [];
const rum = createCollector();
// What each POST carried, for the test; then the collector's own answer.
const collector = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks).toString('utf8');
  const request = new Request(`http://127.0.0.1:${port}${req.url}`, { method: req.method, body: req.method === 'POST' ? body : undefined });
  const answer = await rum.fetch(request);
  if (req.method === 'POST') {
    reports.push({ method: req.method, path: req.url, cookie: req.headers.cookie ?? null,
      contentType: req.headers['content-type'] ?? null, body, status: answer.status });
  }
  res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()));
});
await new Promise((ok) => collector.listen(port, '127.0.0.1', ok));

const browser = await launch();
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const origin = new URL(url).origin;
let ok = true;
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  let pending = [];
  page.on('response', (resp) => {
    if (new URL(resp.url()).origin !== origin) return;
    pending.push((async () => {
      const [sizes, body] = await Promise.all([resp.request().sizes(), resp.body()]);
      return {
        path: new URL(resp.url()).pathname,
        status: resp.status(),
        contentEncoding: (await resp.allHeaders())['content-encoding'] ?? null,
        body: sizes.responseBodySize,
        file: body.length,
      };
    })());
  });
  let errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  for (let load = 1; ; load++) {
    if (load > 1 && (await lines.next()).done) break;
    errors = [];
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null,
      { timeout: 30_000 });
    const marker = await page.textContent('#marker');
    // For the test's messages: what the page's timing entries name.
    const entries = await page.evaluate(() => performance.getEntriesByType('navigation')
      .concat(performance.getEntriesByType('resource'))
      .map((e) => `${e.initiatorType} ${e.name} ${e.responseStatus} ${e.transferSize} ${e.encodedBodySize}`));
    const network = await Promise.all(pending);
    pending = [];
    // Leaving the page fires pagehide: the snippet posts its report.
    await page.goto('about:blank');
    for (let i = 0; i < 100 && reports.length < load; i++) await new Promise((r) => setTimeout(r, 100));
    const result = { load, marker, errors, report: reports[load - 1] ?? null, network, entries };
    ok &&= errors.length === 0 && result.report !== null;
    console.log(JSON.stringify(result));
  }
  console.log(JSON.stringify({ totals: await (await fetch(`http://127.0.0.1:${port}/rum`)).json() }));
} finally {
  await browser.close();
  collector.close();
}
process.exit(ok ? 0 : 1);
