// Two page loads in one headless Chromium profile, for the dictionary test
// (tests/serve_browser.rs): load URL, print one JSON line, wait for a line on
// stdin (the test switches the server to the next release meanwhile), load URL
// again, print a second JSON line. Each line: the page's #marker text, errors,
// and per response its request's Accept-Encoding and Available-Dictionary and
// its Content-Encoding, Use-As-Dictionary and Vary, as the browser saw them.
// Usage: node releases.mjs URL   (env: CHROMIUM, default /usr/lib/chromium/chromium)
import { launch, recordResponses, urlArgument } from './launch.mjs';
import { createInterface } from 'node:readline';

const url = urlArgument('releases.mjs');
const browser = await launch();
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
let ok = true;
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  const responses = recordResponses(page);
  let errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  for (let load = 1; load <= 2; load++) {
    if (load === 2) {
      const next = await lines.next();
      if (next.done) break;
    }
    await responses.take();
    errors = [];
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null,
      { timeout: 30_000 });
    const result = {
      load,
      marker: await page.textContent('#marker'),
      errors,
      responses: await responses.take(),
    };
    ok &&= errors.length === 0;
    console.log(JSON.stringify(result));
  }
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
