// A returning visitor in headless Chromium, for the framework-build delta tests.
//
//   node e2e/apps/visit.mjs URL [PAGE...]      e.g. http://localhost:8080 / /about/
//
// PAGE paths are resolved against URL (no PAGE: URL itself). One browser
// context, two visits:
//   visit 1: for each PAGE in order, open it, wait until the network is idle,
//            click every element with a data-e2e-click attribute (in document
//            order, waiting for idle after each: this loads lazy chunks), then
//            after the last PAGE wait VISIT_SETTLE_MS (default 1500) more and
//            for idle again, so Chromium can fetch <link rel=compression-dictionary>
//            resources it loads at idle (VISIT_SETTLE_EACH=1: after every
//            PAGE, so a page's Link dictionary serves the next page).
//            Prints one JSON line.
//   then waits for a line on stdin (meanwhile the test deploys release 2 on the
//   same origin; on end of input it goes on at once),
//   visit 2: the same in a new tab of the same context, so the HTTP cache and
//            the stored dictionaries of visit 1 are still there. Prints a second
//            JSON line.
//   VISITS=N: N visits in all, a line on stdin awaited before each after the
//   first (a series of releases). VISIT_FRESH=1: each visit in a new browser
//   context, so every one is a first-time visitor's.
//   VISIT_NETWORK=slow, VISIT_CPU_THROTTLE=N: a slow phone's network, its CPU.
// Each line: {visit, pages, errors, failed, responses}
//   pages:     [{url, finalUrl, status, release}] (release: the text of the first
//              [data-e2e-release] element seen on that page, or null)
//   errors:    console errors and uncaught page errors (strings)
//   failed:    requests that failed: [{url, error}]
//   responses: every response of the visit (including ones fetched at idle),
//              in the order they arrived: {url, status, resourceType, fromCache
//              ("memory" | "disk" | "prefetch" | null), acceptEncoding,
//              availableDictionary (request headers), contentEncoding,
//              useAsDictionary, cacheControl, vary, contentType, encodedBytes (body bytes on
//              the wire, request.sizes().responseBodySize; 0 for cache hits), bodyBytes and
//              bodySha256 (hex, of the decoded body; null if unavailable)}
// Exits 1 if a visit had errors, 2 on bad usage.
// Chromium stores dictionaries only in secure contexts: use http://localhost:PORT.
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { launch } from '../launch.mjs';

const [base, ...pageArgs] = process.argv.slice(2);
if (!base) {
  console.error('usage: node visit.mjs URL [PAGE...]');
  process.exit(2);
}
const pageUrls = (pageArgs.length ? pageArgs : [base]).map((p) => new URL(p, base).href);
const settleMs = Number(process.env.VISIT_SETTLE_MS ?? 1500);
const settleEach = process.env.VISIT_SETTLE_EACH === '1';
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

// One visit in a new tab of `context`.
async function visit(context, n) {
  const page = await context.newPage();
  const errors = [];
  const failed = [];
  const pending = [];
  let inflight = 0;
  let lastActivity = Date.now();

  // Whether CDP saw each response come from a cache; Playwright does not say.
  // Queued per URL in arrival order, matched to Playwright's responses in order.
  const cdp = await context.newCDPSession(page);
  const fromMemory = new Set();
  const cacheInfo = new Map();
  const queueCache = (url, r) => {
    const kind = r.fromMemory ? 'memory' : r.fromPrefetchCache ? 'prefetch' : r.fromDiskCache ? 'disk' : null;
    if (!cacheInfo.has(url)) cacheInfo.set(url, []);
    cacheInfo.get(url).push(kind);
  };
  cdp.on('Network.requestServedFromCache', (e) => fromMemory.add(e.requestId));
  cdp.on('Network.requestWillBeSent', (e) => {
    if (e.redirectResponse) queueCache(e.redirectResponse.url, e.redirectResponse);
  });
  cdp.on('Network.responseReceived', (e) => {
    if (fromMemory.has(e.requestId)) queueCache(e.response.url, { fromMemory: true });
    else queueCache(e.response.url, e.response);
  });
  await cdp.send('Network.enable');
  // A slow phone: its network (VISIT_NETWORK=slow: 400 ms round trips,
  // 50 KB/s each way) and its CPU (VISIT_CPU_THROTTLE=N: N times slower).
  if (process.env.VISIT_NETWORK === 'slow') {
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 400, downloadThroughput: 50_000, uploadThroughput: 50_000 });
  }
  if (process.env.VISIT_CPU_THROTTLE) {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: Number(process.env.VISIT_CPU_THROTTLE) });
  }
  const takeCache = (url) => cacheInfo.get(url)?.shift() ?? null;

  page.on('console', (msg) => {
    if (msg.type() === 'error') {
      const loc = msg.location()?.url;
      errors.push(`console: ${msg.text()}${loc ? ` (${loc})` : ''}`);
    }
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e}`));
  page.on('request', () => {
    inflight++;
    lastActivity = Date.now();
  });
  const done = () => {
    inflight--;
    lastActivity = Date.now();
  };
  page.on('requestfinished', done);
  page.on('requestfailed', (req) => {
    done();
    failed.push({ url: req.url(), error: req.failure()?.errorText ?? 'failed' });
  });
  page.on('response', (resp) => {
    pending.push((async () => {
      const req = resp.request();
      const [reqH, respH] = await Promise.all([req.allHeaders(), resp.allHeaders()]);
      let body = null;
      try {
        body = await resp.body();
      } catch {
        // redirects, or a body the browser no longer holds
      }
      let sizes = null;
      try {
        sizes = await req.sizes();
      } catch {
        // request failed or was cancelled
      }
      return {
        url: resp.url(),
        status: resp.status(),
        resourceType: req.resourceType(),
        acceptEncoding: reqH['accept-encoding'] ?? null,
        availableDictionary: reqH['available-dictionary'] ?? null,
        contentEncoding: respH['content-encoding'] ?? null,
        useAsDictionary: respH['use-as-dictionary'] ?? null,
        cacheControl: respH['cache-control'] ?? null,
        vary: respH['vary'] ?? null,
        contentType: respH['content-type'] ?? null,
        encodedBytes: sizes ? sizes.responseBodySize : null,
        bodyBytes: body ? body.length : null,
        bodySha256: body ? sha256(body) : null,
      };
    })());
  });

  // Idle: no request in flight and none started or ended for `quietMs`.
  async function idle(quietMs = 500, timeoutMs = 30_000) {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      if (inflight <= 0 && Date.now() - lastActivity >= quietMs) return;
      await sleep(50);
    }
    errors.push(`visit.mjs: network not idle after ${timeoutMs} ms (${inflight} in flight) on ${page.url()}`);
  }

  const releaseText = () => page.evaluate(() =>
    document.querySelector('[data-e2e-release]')?.textContent?.trim() ?? null).catch(() => null);

  const pages = [];
  for (const url of pageUrls) {
    const resp = await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    await idle();
    let release = await releaseText();
    for (const el of await page.$$('[data-e2e-click]')) {
      if (!(await el.evaluate((e) => e.isConnected).catch(() => false))) continue;
      const name = await el.getAttribute('data-e2e-click').catch(() => '?');
      try {
        await el.click({ timeout: 5_000 });
      } catch (e) {
        errors.push(`visit.mjs: clicking [data-e2e-click=${name}] on ${page.url()} failed: ${e.message.split('\n')[0]}`);
      }
      await idle();
      release ??= await releaseText();
    }
    // location.href, not page.url(): that can lag behind history.pushState.
    const finalUrl = await page.evaluate(() => location.href).catch(() => page.url());
    pages.push({ url, finalUrl, status: resp ? resp.status() : null, release });
    if (settleEach) {
      await sleep(settleMs);
      await idle();
    }
  }
  await sleep(settleMs);
  await idle();

  const responses = (await Promise.all(pending)).map(({ url, status, resourceType, ...rest }) => {
    const fromCache = takeCache(url);
    // Nothing crossed the wire for a cache hit (Playwright's size goes negative).
    if (fromCache || rest.encodedBytes < 0) rest.encodedBytes = 0;
    return { url, status, resourceType, fromCache, ...rest };
  });
  await page.close();
  return { visit: n, pages, errors, failed, responses };
}

const count = Number(process.env.VISITS ?? 2);
const fresh = process.env.VISIT_FRESH === '1';
const browser = await launch();
let ok = true;
try {
  let context = await browser.newContext();
  for (let n = 1; n <= count; n++) {
    if (n > 1) {
      await lines.next();
      if (fresh) {
        await context.close();
        context = await browser.newContext();
      }
    }
    const result = await visit(context, n);
    ok &&= result.errors.length === 0;
    console.log(JSON.stringify(result));
  }
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
