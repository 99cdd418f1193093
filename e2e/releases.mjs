// Two page loads in one headless Chromium profile, for the dictionary test
// (tests/serve_browser.rs): load URL, print one JSON line, wait for a line on
// stdin (the test switches the server to the next release meanwhile), load URL
// again, print a second JSON line. Each line: the page's #marker text, errors,
// and per response its request's Accept-Encoding and Available-Dictionary and
// its Content-Encoding, Use-As-Dictionary and Vary, as the browser saw them.
// Usage: node releases.mjs URL   (env: CHROMIUM, default /usr/lib/chromium/chromium)
import { launch, urlArgument } from './launch.mjs';
import { createInterface } from 'node:readline';

const url = urlArgument('releases.mjs');
const browser = await launch();
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
let ok = true;
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  let pending = [];
  page.on('response', (resp) => {
    pending.push((async () => {
      const [reqH, respH] = await Promise.all([resp.request().allHeaders(), resp.allHeaders()]);
      return {
        path: new URL(resp.url()).pathname,
        status: resp.status(),
        acceptEncoding: reqH['accept-encoding'] ?? null,
        availableDictionary: reqH['available-dictionary'] ?? null,
        contentEncoding: respH['content-encoding'] ?? null,
        useAsDictionary: respH['use-as-dictionary'] ?? null,
        vary: respH['vary'] ?? null,
      };
    })());
  });
  let errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  for (let load = 1; load <= 2; load++) {
    if (load === 2) {
      const next = await lines.next();
      if (next.done) break;
    }
    pending = [];
    errors = [];
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null,
      { timeout: 30_000 });
    const result = {
      load,
      marker: await page.textContent('#marker'),
      errors,
      responses: await Promise.all(pending),
    };
    ok &&= errors.length === 0;
    console.log(JSON.stringify(result));
  }
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
