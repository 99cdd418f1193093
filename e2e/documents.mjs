// The documents dictionary in a real browser, on real multi-page HTML:
// pages of Python's documentation (Debian's python3.11-doc) as two releases,
// precompressed with one cache folder, served by `precompress serve` from a
// symlink a deploy swaps, and visited by headless Chromium
// (e2e/apps/visit.mjs, settling after every page so the dictionary a page's
// Link names is fetched before the next one). Prints one JSON object
// (tests/field_browser.rs asserts on it, bench/field.sh tabulates it).
//
//   node e2e/documents.mjs SRC WORK      (env PRECOMPRESS: the binary)
//
// SRC: the docs' html folder. Release 1: PAGES pages of SRC/library with
// _static and _images. Release 2: a docs release: the version in every
// page's title and header bumped, and a sentence added to one page.
// Bytes are body bytes on the wire as Chromium counts them.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { point as pointAt, runner, serve, sha256, visits as twoVisits } from './deploy.mjs';

const [src, workArg] = process.argv.slice(2);
const bin = process.env.PRECOMPRESS;
if (!src || !workArg || !bin) {
  console.error('usage: PRECOMPRESS=BIN node e2e/documents.mjs SRC WORK');
  process.exit(2);
}
const work = path.resolve(workArg);
const PAGES = 40;
// The pages a visitor opens, in order (all in the release).
const VISITED = 5;

const run = runner(bin, path.join(work, 'cache'));

const pages = readdirSync(path.join(src, 'library'))
  .filter((n) => n.endsWith('.html'))
  .sort()
  .slice(0, PAGES);
if (pages.length < PAGES) throw new Error(`documents.mjs: fewer than ${PAGES} pages in ${src}/library`);
rmSync(work, { recursive: true, force: true });
const deployed = [];
for (const n of [1, 2]) {
  const dir = path.join(work, `deploy-${n}`);
  mkdirSync(path.join(dir, 'library'), { recursive: true });
  for (const d of ['_static', '_images']) cpSync(path.join(src, d), path.join(dir, d), { recursive: true, dereference: true });
  for (const [i, p] of pages.entries()) {
    let html = readFileSync(path.join(src, 'library', p), 'utf8');
    if (n === 2) {
      html = html.replace(/3\.11\.2/g, '3.11.3');
      if (i === 1) html = html.replace('</h1>', '</h1><p>New in this release: a sentence.</p>');
    }
    writeFileSync(path.join(dir, 'library', p), html);
  }
  run(['--no-config', '-q', '--shared-dictionary', 'on', dir, '--cache-dir', path.join(work, 'cache')]);
  run(['check', dir]);
  deployed.push(dir);
}
const manifests = deployed.map((d) => JSON.parse(readFileSync(path.join(d, 'precompress-manifest.json'), 'utf8')));

const live = path.join(work, 'live');
const point = (to) => pointAt(live, to);
point(deployed[0]);
const server = await serve(bin, live);
// Spread over the release, not neighbours only.
const visited = Array.from({ length: VISITED }, (_, i) => `/library/${pages[Math.floor((i * PAGES) / VISITED) + 1]}`);
const visits = (between) => twoVisits(server.origin, visited, between, { VISIT_SETTLE_EACH: '1' });
// A first-time visitor of release 1 who opens several pages, then, after the
// deploy, the same visitor back.
const [first, returning] = await visits(async () => point(deployed[1]));
server.kill();

const isDictionary = (r) => r.url.includes('/precompress-documents-');
// Each navigation, with what release `n`'s manifest says its brotli variant weighs.
const documents = (v, n) =>
  v.responses
    .filter((r) => r.resourceType === 'document' && r.status === 200)
    .map((r) => {
      const key = decodeURIComponent(new URL(r.url).pathname).slice(1);
      const body = readFileSync(path.join(deployed[n], key));
      const br = manifests[n].files[key]?.encodings.find((e) => e.coding === 'br')?.size ?? null;
      return {
        url: r.url,
        contentEncoding: r.contentEncoding,
        availableDictionary: r.availableDictionary,
        encodedBytes: r.encodedBytes,
        br,
        decodesToTheFile: sha256(body) === r.bodySha256,
      };
    });
const bytes = (rs) => rs.reduce((s, r) => s + (r.encodedBytes ?? 0), 0);
const result = {
  documentsDictionary: manifests.map((m) => m.documents_dictionary ?? null),
  errors: [...first.errors, ...returning.errors],
  failed: [...first.failed, ...returning.failed],
  first: {
    documents: documents(first, 0),
    dictionaries: bytes(first.responses.filter(isDictionary)),
  },
  returning: {
    documents: documents(returning, 1),
    dictionaries: bytes(returning.responses.filter(isDictionary)),
  },
  // How each dictionary came: its request's Available-Dictionary and the coding.
  dictionaryFetches: [first, returning].map((v) =>
    v.responses.filter(isDictionary).map(({ url, availableDictionary, contentEncoding, encodedBytes, resourceType }) =>
      ({ url, availableDictionary, contentEncoding, encodedBytes, resourceType }))),
};
for (const v of [result.first, result.returning]) {
  v.bytes = bytes(v.documents);
  v.brBytes = v.documents.reduce((s, r) => s + (r.br ?? 0), 0);
}
console.log(JSON.stringify(result, null, 2));
