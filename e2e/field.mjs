// Deltas in the field: one framework app's two real releases (built by
// e2e/apps/build.sh), precompressed as a user would (a cache folder, no
// earlier release kept by hand), served by `precompress serve` from a
// symlink that a deploy swaps, and visited by headless Chromium
// (e2e/apps/visit.mjs): a returning visitor of release 1 and a first-time
// visitor of release 2. Prints one JSON object (tests/field_browser.rs
// asserts on it, bench/field.sh tabulates it).
//
//   node e2e/field.mjs APP WORK      (env PRECOMPRESS: the binary)
//
// WORK holds release-1 and release-2 (build.sh's output); field.mjs adds
// cache/, live (the symlink) and copies it precompresses. Bytes are
// encoded body bytes as Chromium counts them (request.sizes()), for the
// scripts and stylesheets and the dictionaries the visit fetched.
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { point as pointAt, runner, serve, sha256, visits as twoVisits } from './deploy.mjs';

const [app, workArg] = process.argv.slice(2);
// Absolute: the deploy symlink points at folders under it.
const work = workArg && path.resolve(workArg);
const bin = process.env.PRECOMPRESS;
if (!app || !workArg || !bin) {
  console.error('usage: PRECOMPRESS=BIN node e2e/field.mjs APP WORK');
  process.exit(2);
}

// Where each app is served and which pages a visitor opens.
const APPS = {
  'vite-react': { base: '/app/', pages: ['/app/'] },
  sveltekit: { base: '/', pages: ['/', '/about/'] },
  astro: { base: '/', pages: ['/', '/about/'] },
  nuxt: { base: '/', pages: ['/', '/about/'] },
};
const cfg = APPS[app];
if (!cfg) throw new Error(`field.mjs: unknown app ${app}`);

const run = runner(bin, path.join(work, 'cache'));

// Each release precompressed in a copy, with one cache: release 2's deltas
// come from the release store that release 1's run filled.
const cache = path.join(work, 'cache');
rmSync(cache, { recursive: true, force: true });
const deployed = [];
for (const n of [1, 2]) {
  const dir = path.join(work, `deploy-${n}`);
  rmSync(dir, { recursive: true, force: true });
  cpSync(path.join(work, `release-${n}`), dir, { recursive: true });
  const args = ['--no-config', '-q', dir, '--cache-dir', cache];
  if (cfg.base !== '/') args.push('--base', cfg.base);
  run(args);
  run(['check', dir]);
  deployed.push(dir);
}
const manifest2 = JSON.parse(readFileSync(path.join(deployed[1], 'precompress-manifest.json'), 'utf8'));

const live = path.join(work, 'live');
const point = (to) => pointAt(live, to);
point(deployed[0]);
const server = await serve(bin, live);
const visits = (between) => twoVisits(server.origin, cfg.pages, between);

const isDictionary = (r) => r.url.includes('/precompress-dictionary-');
const isCode = (r) => /javascript|text\/css/.test(r.contentType ?? '') && !isDictionary(r);
const bytes = (rs) => rs.reduce((s, r) => s + (r.encodedBytes ?? 0), 0);

// A returning visitor: release 1, then release 2 deployed by swapping the link.
const [seen, returning] = await visits(async () => point(deployed[1]));
// A first-time visitor of release 2: a fresh profile.
const [fresh] = await visits(async () => {});
server.kill();

// What release 2 has on disk, by URL path.
const fileOf = (url) => {
  const p = decodeURIComponent(new URL(url).pathname);
  const key = p.startsWith(cfg.base) ? p.slice(cfg.base.length) : null;
  return key !== null && existsSync(path.join(deployed[1], key)) ? key : null;
};
const seenBodies = new Set(seen.responses.map((r) => r.bodySha256));
const code2 = returning.responses.filter((r) => isCode(r) && r.status === 200 && r.fromCache === null);
const changed = code2
  .filter((r) => !seenBodies.has(r.bodySha256))
  .map((r) => {
    const key = fileOf(r.url);
    const body = key && readFileSync(path.join(deployed[1], key));
    const onDisk = body && sha256(body);
    return {
      url: r.url,
      size: body ? body.length : null,
      contentEncoding: r.contentEncoding,
      availableDictionary: r.availableDictionary,
      encodedBytes: r.encodedBytes,
      decodesToTheFile: onDisk === r.bodySha256,
    };
  });
const freshCode = fresh.responses.filter((r) => isCode(r) && r.status === 200);
const result = {
  app,
  base: cfg.base,
  errors: [...seen.errors, ...returning.errors, ...fresh.errors],
  failed: [...seen.failed, ...returning.failed, ...fresh.failed],
  sharedDictionary: manifest2.shared_dictionary ?? null,
  firstTime: { code: bytes(freshCode), dictionaries: bytes(fresh.responses.filter(isDictionary)) },
  returning: {
    code: bytes(code2),
    dictionaries: bytes(returning.responses.filter(isDictionary)),
    requests: code2.length,
  },
  changed,
  pagesSeen: seen.pages,
  pages: returning.pages,
};
result.returning.total = result.returning.code + result.returning.dictionaries;
result.ratio = result.firstTime.code ? result.returning.total / result.firstTime.code : null;
console.log(JSON.stringify(result, null, 2));
