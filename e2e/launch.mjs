// What browser.mjs and releases.mjs share: the URL argument and Debian's
// Chromium launched headless through playwright-core (no downloaded browser).
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
