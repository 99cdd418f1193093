// What browser.mjs and releases.mjs share: the URL argument, Debian's
// Chromium launched headless through playwright-core (no downloaded browser),
// and the record of each response's negotiation headers.
import { chromium } from 'playwright-core';

// The URL given on the command line; exits 2 with a usage line without one.
export function urlArgument(script) {
  const url = process.argv[2];
  if (!url) {
    console.error(`usage: node ${script} URL`);
    process.exit(2);
  }
  return url;
}

// The real binary, not the /usr/bin/chromium wrapper script (it prints noise);
// CHROMIUM overrides it.
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60_000,
  });
}

// Records every response of `page`: its path, status, its request's
// Accept-Encoding and Available-Dictionary, and its Content-Encoding,
// Use-As-Dictionary and Vary. allHeaders() is async, so `take()` awaits
// them all, returns them, and starts a new record.
export function recordResponses(page) {
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
  return {
    async take() {
      const done = await Promise.all(pending);
      pending = [];
      return done;
    },
  };
}
