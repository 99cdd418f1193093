// Each page the dictionary of its own next version, in a real browser, on
// real multi-page HTML, in one of two ways:
//
//   node e2e/pages.mjs SRC WORK
//       pages of Python's documentation (Debian's python3.11-doc, built by
//       Sphinx, in SRC) as three releases of a docs site whose generator
//       changes every page with every release (the version in each page's
//       title and header, a sentence added to one page);
//   node e2e/pages.mjs --releases R1 R2 R3 WORK
//       three releases a static-site generator built (e2e/apps/docs/build.sh:
//       VitePress on fastify's docs at three releases), copied as they are.
//       The pages are R1's .html files (404.html aside) that all three hold.
//
// Each release is served by `precompress serve` from a symlink a deploy
// swaps, and visited by headless Chromium (e2e/apps/visit.mjs): a visitor
// who lands on VISITED pages spread over the site directly (as from a
// search) in each release, in one profile, the deploys between the visits.
// Each release is precompressed as a team would in each MODE (the earlier
// releases found in a cache folder's release store, named with
// --dictionary-from folders, or taken from the live site that serves the
// previous release), and once with --no-page-dictionary. Prints one JSON
// object (tests/pages_browser.rs asserts on it).
//
// env PRECOMPRESS: the binary; PAGE_MODES: cache,from,site,off (the default);
// PAGE_JOBS: how many modes run at once (default 1).
//
// Bytes are every response's body bytes on the wire as Chromium counts them:
// pages, styles, scripts, fonts, images, dictionaries, prefetches.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { point as pointAt, serve, series, sha256 } from './deploy.mjs';

const usage = 'usage: PRECOMPRESS=BIN node e2e/pages.mjs SRC WORK | --releases R1 R2 R3 WORK';
const argv = process.argv.slice(2);
const RELEASES = 3;
const built = argv[0] === '--releases' ? argv.slice(1, 1 + RELEASES).map((d) => path.resolve(d)) : null;
const [src, workArg] = built ? [null, argv[1 + RELEASES]] : argv;
const bin = process.env.PRECOMPRESS;
if ((!built && !src) || (built && built.length < RELEASES) || !workArg || !bin) {
  console.error(usage);
  process.exit(2);
}
const work = path.resolve(workArg);
const VISITED = 6;
const modes = (process.env.PAGE_MODES ?? 'cache,from,site,off').split(',');

/** Every .html file under `dir`, as paths relative to it with '/', sorted. */
function htmlFiles(dir, rel = '') {
  return readdirSync(path.join(dir, rel), { withFileTypes: true })
    .flatMap((e) => {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) return htmlFiles(dir, r);
      return e.name.endsWith('.html') ? [r] : [];
    })
    .sort();
}

let pages; // paths relative to a release's root
let write; // write(dir, n): release n (0-based) of the site into dir
if (built) {
  pages = htmlFiles(built[0]).filter((p) => p !== '404.html' && built.every((d) => existsSync(path.join(d, p))));
  if (pages.length < 40) throw new Error(`pages.mjs: ${pages.length} pages in all of ${built.join(', ')}; 40 wanted`);
  write = (dir, n) => {
    rmSync(dir, { recursive: true, force: true });
    cpSync(built[n], dir, { recursive: true, dereference: true });
  };
} else {
  const PAGES = 42;
  pages = readdirSync(path.join(src, 'library'))
    .filter((n) => n.endsWith('.html'))
    .sort()
    .slice(0, PAGES)
    .map((n) => `library/${n}`);
  if (pages.length < PAGES) throw new Error(`pages.mjs: fewer than ${PAGES} pages in ${src}/library`);
  const VERSIONS = ['3.11.2', '3.11.3', '3.11.4'];
  write = (dir, n) => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(path.join(dir, 'library'), { recursive: true });
    for (const d of ['_static', '_images']) cpSync(path.join(src, d), path.join(dir, d), { recursive: true, dereference: true });
    for (const [i, p] of pages.entries()) {
      let html = readFileSync(path.join(src, p), 'utf8');
      html = html.replace(/3\.11\.2/g, VERSIONS[n]);
      for (let k = 1; k <= n; k++) {
        if (i === 3 * k) html = html.replace('</h1>', `</h1><p>New in release ${k + 1}: a sentence.</p>`);
      }
      writeFileSync(path.join(dir, p), html);
    }
  };
}
const PAGES = pages.length;

// Spread over the site, not neighbours only.
const visited = Array.from({ length: VISITED }, (_, i) => `/${pages[Math.floor((i * PAGES) / VISITED) + 1]}`);
/**
 * Runs `bin ARGS` with the release store in `cache` (none when null), as
 * deploy.mjs's runner does but without blocking: the other modes' visits go
 * on meanwhile. Resolves to {stdout}; rejects on failure.
 */
const runner = (cache) => (args) =>
  new Promise((resolve, reject) => {
    const env = { ...process.env, PRECOMPRESS_CACHE_DIR: cache };
    if (!cache) delete env.PRECOMPRESS_CACHE_DIR;
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve({ stdout }) : reject(new Error(`precompress ${args.join(' ')}: exit ${code}\n${stderr}`)),
    );
  });
const say = (line) => console.error(`pages.mjs: ${line}`);
const secs = (t0) => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
const bytes = (rs) => rs.reduce((s, r) => s + (r.encodedBytes ?? 0), 0);
// A dictionary the pages link, fetched at idle (code or documents).
const isLinkedDictionary = (r) => /\/precompress-(dictionary|documents)-[0-9a-f]+\.(js|txt)$/.test(new URL(r.url).pathname);

async function one(mode) {
  const dir = path.join(work, mode);
  rmSync(dir, { recursive: true, force: true });
  const cache = mode === 'cache' || mode === 'off' ? path.join(dir, 'cache') : null;
  const run = runner(cache);
  const deployed = [];
  const summaries = [];
  const live = path.join(dir, 'live');
  let server;
  // Release n is built while release n-1 is live, as a deploy does.
  const build = async (n) => {
    const t0 = Date.now();
    const out = path.join(dir, `deploy-${n + 1}`);
    write(out, n);
    const args = ['--no-config', '--json', out];
    if (mode === 'off') args.push('--no-page-dictionary');
    if (mode === 'cache' || mode === 'off') args.push('--cache-dir', cache);
    if (n > 0 && mode === 'from') args.push('--dictionary-from', deployed[n - 1]);
    if (n > 0 && mode === 'site') args.push('--dictionary-from', `${server.origin}/`);
    const report = JSON.parse((await run(args)).stdout);
    summaries.push({ deploy: report.deploy, pages: report.pages });
    await run(['check', out]);
    deployed.push(out);
    pointAt(live, out);
    say(`${mode}: release ${n + 1} precompressed and checked in ${secs(t0)}`);
  };
  await build(0);
  server = await serve(bin, live);
  const betweens = Array.from({ length: RELEASES - 1 }, (_, i) => () => build(i + 1));
  const t0 = Date.now();
  const visits = await series(server.origin, visited, betweens);
  // A first-time visitor of the last release, for the first visit's figure.
  const [fresh] = await series(server.origin, visited, []);
  server.kill();
  say(`${mode}: ${RELEASES} releases visited (releases 2 and 3 precompressed between them) and a first visit, ${secs(t0)}`);
  const manifests = deployed.map((d) => JSON.parse(readFileSync(path.join(d, 'precompress-manifest.json'), 'utf8')));
  const documents = (v, n) =>
    v.responses
      .filter((r) => r.resourceType === 'document' && r.status === 200)
      .map((r) => {
        const key = decodeURIComponent(new URL(r.url).pathname).slice(1);
        const body = readFileSync(path.join(deployed[n], key));
        const previous = n > 0 ? sha256(readFileSync(path.join(deployed[n - 1], key))) : null;
        const offered = r.availableDictionary
          ? Buffer.from(r.availableDictionary.replace(/:/g, ''), 'base64').toString('hex')
          : null;
        return {
          url: r.url,
          contentEncoding: r.contentEncoding,
          cacheControl: r.cacheControl,
          useAsDictionary: r.useAsDictionary,
          // The browser offered this page's own previous version.
          offeredItself: previous !== null && offered === previous,
          encodedBytes: r.encodedBytes,
          br: manifests[n].files[key]?.encodings.find((e) => e.coding === 'br')?.size ?? null,
          decodesToTheFile: sha256(body) === r.bodySha256,
        };
      });
  // What else came over the network (not from the HTTP cache): scripts,
  // styles, fonts, prefetches, dictionaries. `changed`: the file is not in
  // the release before (a new name, as a fingerprinted chunk gets when it
  // changes). `compressed`: the release holds a variant or a delta of it (a
  // file too small to compress has neither).
  const assets = (v, n) =>
    v.responses
      .filter((r) => r.resourceType !== 'document' && r.status === 200 && !r.fromCache)
      .map((r) => {
        const key = decodeURIComponent(new URL(r.url).pathname).slice(1);
        const entry = manifests[n].files[key];
        return {
          url: r.url,
          resourceType: r.resourceType,
          compressed: Boolean(entry?.encodings?.length || entry?.deltas?.length),
          contentEncoding: r.contentEncoding,
          encodedBytes: r.encodedBytes,
          changed: n > 0 && !existsSync(path.join(deployed[n - 1], key)),
          decodesToTheFile: sha256(readFileSync(path.join(deployed[n], key))) === r.bodySha256,
        };
      });
  return {
    summaries,
    visits: visits.map((v, n) => ({
      errors: v.errors,
      failed: v.failed,
      bytes: bytes(v.responses),
      documents: documents(v, n),
      assets: assets(v, n),
    })),
    firstVisit: {
      bytes: bytes(fresh.responses),
      dictionaries: bytes(fresh.responses.filter(isLinkedDictionary)),
      errors: fresh.errors,
      documents: documents(fresh, RELEASES - 1),
    },
  };
}

rmSync(work, { recursive: true, force: true });
const result = { source: built ?? src, pages: PAGES, visited, modes: {} };
// PAGE_JOBS modes at a time (each its own folders, server and browser): one
// mode's precompress runs while another's browser waits for the network.
const outcomes = new Array(modes.length);
let next = 0;
const worker = async () => {
  while (next < modes.length) {
    const i = next++;
    outcomes[i] = await one(modes[i]);
  }
};
await Promise.all(Array.from({ length: Math.max(1, Number(process.env.PAGE_JOBS ?? 1)) }, worker));
for (const [i, m] of modes.entries()) result.modes[m] = outcomes[i];
console.log(JSON.stringify(result, null, 2));
