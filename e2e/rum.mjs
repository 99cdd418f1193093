// The RUM snippet in a real browser (tests/rum_browser.rs): a collector on
// 127.0.0.1:PORT receives what the page's snippet posts; headless Chromium
// loads URL, leaves it (about:blank, so the snippet reports), prints one JSON
// line, and for each line on stdin (the test deploys the next release, or
// not) does it again as the same returning visitor, until stdin closes. Each line: the page's #marker,
// its errors, the report the collector got, and Chromium's own record of each
// response of the page's origin: its Content-Encoding, its encoded body size
// (request.sizes()) and its decoded length.
// Usage: node rum.mjs URL PORT   (env: CHROMIUM, default /usr/lib/chromium/chromium)
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { launch, urlArgument } from './launch.mjs';

const url = urlArgument('rum.mjs');
const reports = [];
const collector = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    reports.push({ method: req.method, path: req.url, cookie: req.headers.cookie ?? null,
      contentType: req.headers['content-type'] ?? null, body });
    res.writeHead(204).end();
  });
});
await new Promise((ok) => collector.listen(Number(process.argv[3]), '127.0.0.1', ok));

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
} finally {
  await browser.close();
  collector.close();
}
process.exit(ok ? 0 : 1);
