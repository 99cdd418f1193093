// Loads a page in Debian's headless Chromium (no downloaded browser) through
// playwright-core, waits for the fixture page's script to finish, and prints JSON:
// the page's markers and, per response, the Content-Encoding it carried.
// Usage: node browser.mjs URL   (env: CHROMIUM, default /usr/lib/chromium/chromium;
//        FORCE_ACCEPT_ENCODING to replace what Chromium advertises)
// Exit 0 when the page loaded and ran, 1 otherwise; the test reads the JSON.
import { launch, recordResponses, urlArgument } from './launch.mjs';

const url = urlArgument('browser.mjs');
const browser = await launch();
let ok = false;
try {
  const extraHTTPHeaders = process.env.FORCE_ACCEPT_ENCODING
    ? { 'Accept-Encoding': process.env.FORCE_ACCEPT_ENCODING } : undefined;
  const context = await browser.newContext({ extraHTTPHeaders });
  const page = await context.newPage();
  const responses = recordResponses(page);
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null,
    { timeout: 30_000 });
  const result = {
    browser: browser.version(),
    url,
    marker: await page.textContent('#marker'),
    dataCount: await page.textContent('#data-count'),
    ready: await page.evaluate(() => document.documentElement.dataset.ready),
    // style.css paints the header #0969da; unstyled it would be transparent.
    cssApplied: await page.evaluate(() =>
      getComputedStyle(document.querySelector('.site-header')).backgroundColor === 'rgb(9, 105, 218)'),
    consoleErrors,
    responses: await responses.take(),
  };
  console.log(JSON.stringify(result, null, 2));
  ok = result.ready === 'true';
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
