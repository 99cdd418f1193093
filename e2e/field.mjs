// Deltas in the field: one framework app's real releases (built by
// e2e/apps/build.sh: release-1, release-2, release-3, each a small edit on
// the last), precompressed as a user would, served by `precompress serve`
// from a symlink that a deploy swaps, and visited by headless Chromium
// (e2e/apps/visit.mjs). Prints one JSON object (tests/field_browser.rs
// asserts on it, bench/field.sh tabulates it).
//
//   node e2e/field.mjs APP WORK      (env PRECOMPRESS: the binary;
//                                     FIELD_MODES: cache,from,site by default;
//                                     FIELD_ARGS: more arguments for each
//                                     run, e.g. "--shared-dictionary on")
//
// For every release N it measures, in Chromium's encoded body bytes of the
// scripts and stylesheets (`request.sizes()`), and of the whole visit (every
// response: `noneWhole`, `whole`, `wholeExtra`, `wholeRatio`):
// - none: a first-time visitor of release N precompressed with no
//   dictionaries at all (`--no-use-as-dictionary`): the yardstick;
// - per way of finding the earlier releases (mode `cache`: one `--cache-dir`,
//   the integrations' default; mode `from`: `--dictionary-from` the earlier
//   releases' deployed folders):
//   - first: a first-time visitor of release N, with every dictionary the
//     visit fetched (at idle, by a page's `Link`) counted; `extra` is
//     first / none - 1;
//   - returning: one visitor who saw every release since release 1, as each
//     is deployed (release N, N >= 2), dictionaries counted; `ratio` is its
//     bytes / none.
//   Mode `site`: no cache and no earlier folder; the previous release is
//   taken from the live site (`--dictionary-from http://…/BASE/`), served on
//   loopback by `precompress serve` for release 2 and by python's
//   `http.server` (a plain static server) for release 3.
// WORK holds the release folders; field.mjs adds cache/, live (the
// symlink) and the copies it precompresses.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { point as pointAt, runner, serve, series, sha256 } from './deploy.mjs';

const [app, workArg] = process.argv.slice(2);
// Absolute: the deploy symlink points at folders under it.
const work = workArg && path.resolve(workArg);
const bin = process.env.PRECOMPRESS;
if (!app || !workArg || !bin) {
  console.error('usage: PRECOMPRESS=BIN node e2e/field.mjs APP WORK');
  process.exit(2);
}
const modes = (process.env.FIELD_MODES ?? 'cache,from,site').split(',').filter(Boolean);
const extra = (process.env.FIELD_ARGS ?? '').split(' ').filter(Boolean);

// Where each app is served and which pages a visitor opens.
const APPS = {
  'vite-react': { base: '/app/', pages: ['/app/'] },
  sveltekit: { base: '/', pages: ['/', '/about/'] },
  astro: { base: '/', pages: ['/', '/about/'] },
  nuxt: { base: '/', pages: ['/', '/about/'] },
};
const cfg = APPS[app];
if (!cfg) throw new Error(`field.mjs: unknown app ${app}`);

const releases = readdirSync(work)
  .map((n) => /^release-(\d+)$/.exec(n)?.[1])
  .filter(Boolean)
  .map(Number)
  .sort((a, b) => a - b);
if (releases.length < 2 || releases[0] !== 1 || releases.at(-1) !== releases.length) {
  throw new Error(`field.mjs: ${work} holds no release-1, release-2, ... (${releases})`);
}

const cache = path.join(work, 'cache');
const run = runner(bin, cache);
const baseArgs = cfg.base !== '/' ? ['--base', cfg.base] : [];

const isDictionary = (r) => /\/precompress-(dictionary|documents)-/.test(r.url);
const isCode = (r) => /javascript|text\/css/.test(r.contentType ?? '') && !isDictionary(r);
const bytes = (rs) => rs.reduce((s, r) => s + (r.encodedBytes ?? 0), 0);
const wire = (rs) => rs.filter((r) => r.status === 200 && r.fromCache === null);

/** Copies of every release in WORK/NAME-N, each precompressed by `argsOf(n, dir)`. */
function deploy(name, argsOf) {
  const out = [];
  for (const n of releases) {
    const dir = path.join(work, `${name}-${n}`);
    rmSync(dir, { recursive: true, force: true });
    cpSync(path.join(work, `release-${n}`), dir, { recursive: true });
    const r = run([...argsOf(n, dir), ...baseArgs]);
    run(['check', dir]);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'precompress-manifest.json'), 'utf8'));
    out.push({ dir, manifest, summary: r.stdout.split('\n')[0] ?? '' });
  }
  return out;
}

/** A free loopback port. */
const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

/**
 * `dir` served live on loopback at BASE: by `precompress serve` (`how` 0) or
 * by python's http.server (1), from a root that holds BASE. Its URL and `stop`.
 */
async function liveSite(how, dir) {
  if (how === 0) {
    const s = await serve(bin, dir);
    return { url: `${s.origin.replace('localhost', '127.0.0.1')}${cfg.base}`, stop: s.kill };
  }
  let root = dir;
  if (cfg.base !== '/') {
    root = path.join(work, 'http-root');
    rmSync(root, { recursive: true, force: true });
    const at = path.join(root, cfg.base);
    mkdirSync(path.dirname(at.replace(/\/$/, '')), { recursive: true });
    symlinkSync(dir, at.replace(/\/$/, ''));
  }
  const port = await freePort();
  const py = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: root, stdio: 'ignore' });
  for (let i = 0; ; i++) {
    const up = await new Promise((r) => net.connect(port, '127.0.0.1').on('connect', function () { this.end(); r(true); }).on('error', () => r(false)));
    if (up) break;
    if (i > 100) throw new Error('python http.server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `http://127.0.0.1:${port}${cfg.base}`, stop: () => py.kill() };
}

/** Copies of every release in WORK/site-N, each precompressed with no cache and no earlier folder, against the previous one served live. */
async function deployFromSite(name) {
  const bare = runner(bin, null);
  const out = [];
  for (const n of releases) {
    const dir = path.join(work, `${name}-${n}`);
    rmSync(dir, { recursive: true, force: true });
    cpSync(path.join(work, `release-${n}`), dir, { recursive: true });
    const site = n > 1 ? await liveSite((n - 2) % 2, out.at(-1).dir) : null;
    try {
      const from = site ? ['--dictionary-from', site.url] : [];
      // No cache at all: not even the project's default one (node_modules/.cache).
      const r = bare(['--no-config', '--no-cache', dir, ...extra, ...from, ...baseArgs]);
      bare(['check', dir, '--no-cache', ...from]);
      const manifest = JSON.parse(readFileSync(path.join(dir, 'precompress-manifest.json'), 'utf8'));
      out.push({ dir, manifest, summary: r.stdout.split('\n')[0] ?? '', taken: r.stderr.split('\n').find((l) => l.includes('the previous release at')) ?? null });
    } finally {
      site?.stop();
    }
  }
  return out;
}

const live = path.join(work, 'live');
const point = (to) => pointAt(live, to);

/** A returning visitor's series over `deployed`, and a first-time visitor of each. */
async function visitAll(deployed) {
  point(deployed[0].dir);
  const server = await serve(bin, live);
  const betweens = deployed.slice(1).map((d) => async () => point(d.dir));
  try {
    const returning = await series(server.origin, cfg.pages, betweens);
    point(deployed[0].dir);
    const fresh = await series(server.origin, cfg.pages, betweens, { VISIT_FRESH: '1' });
    return { returning, fresh };
  } finally {
    server.kill();
  }
}

const errors = [];
const failed = [];
const note = (v) => {
  errors.push(...v.errors);
  failed.push(...v.failed);
};

// The yardstick: no dictionaries at all.
const plain = deploy('plain', (n, dir) => ['--no-config', '-q', dir, '--no-use-as-dictionary']);
const plainVisits = await visitAll(plain);
plainVisits.fresh.forEach(note);
const none = plainVisits.fresh.map((v) => bytes(wire(v.responses).filter(isCode)));
// The whole visit: every response's body (pages, scripts, styles, images,
// dictionaries, the rest), as the issue of pages (#45) counts it.
const noneWhole = plainVisits.fresh.map((v) => bytes(wire(v.responses)));

const result = { app, base: cfg.base, args: extra, releases: releases.length, none, noneWhole, modes: {}, errors, failed };

for (const mode of modes) {
  rmSync(cache, { recursive: true, force: true });
  const deployed = mode === 'site' ? await deployFromSite(mode) : deploy(mode, (n, dir) => {
    const args = ['--no-config', dir, ...extra];
    if (mode === 'cache') return [...args, '--cache-dir', cache];
    const earlier = releases.filter((m) => m < n).map((m) => path.join(work, `${mode}-${m}`));
    return [...args, ...earlier.flatMap((e) => ['--dictionary-from', e])];
  });
  const { returning, fresh } = await visitAll(deployed);
  [...returning, ...fresh].forEach(note);
  const first = fresh.map((v, i) => {
    const code = bytes(wire(v.responses).filter(isCode));
    const dictionaries = bytes(wire(v.responses).filter(isDictionary));
    const whole = bytes(wire(v.responses));
    return { code, dictionaries, total: code + dictionaries, extra: (code + dictionaries) / none[i] - 1, whole, wholeExtra: whole / noneWhole[i] - 1 };
  });
  const seen = new Set();
  const back = returning.map((v, i) => {
    const d = deployed[i];
    const code = wire(v.responses).filter(isCode);
    const out = {
      code: bytes(code),
      dictionaries: bytes(wire(v.responses).filter(isDictionary)),
      requests: code.length,
      pages: v.pages,
    };
    out.total = out.code + out.dictionaries;
    out.ratio = out.total / none[i];
    out.whole = bytes(wire(v.responses));
    out.wholeRatio = out.whole / noneWhole[i];
    // Scripts and stylesheets this visitor had never received: the release's changes.
    const fileOf = (url) => {
      const p = decodeURIComponent(new URL(url).pathname);
      const key = p.startsWith(cfg.base) ? p.slice(cfg.base.length) : null;
      return key !== null && existsSync(path.join(d.dir, key)) ? key : null;
    };
    out.changed = code
      .filter((r) => !seen.has(r.bodySha256))
      .map((r) => {
        const key = fileOf(r.url);
        const body = key && readFileSync(path.join(d.dir, key));
        return {
          url: r.url,
          size: body ? body.length : null,
          contentEncoding: r.contentEncoding,
          availableDictionary: r.availableDictionary,
          encodedBytes: r.encodedBytes,
          decodesToTheFile: body ? sha256(body) === r.bodySha256 : false,
          // What the release offers for it: deltas against what, and its br size.
          deltas: key ? (d.manifest.files[key]?.deltas ?? []).length : 0,
          br: key ? (d.manifest.files[key]?.encodings ?? []).find((e) => e.coding === 'br')?.size ?? null : null,
          // The run made a delta against the dictionary offered and left it
          // out: no smaller than the file's best variant.
          deltaNotSmaller: Boolean(key && r.availableDictionary &&
            (d.manifest.files[key]?.skipped_deltas ?? []).some((x) => x.dictionary === r.availableDictionary)),
        };
      });
    // Each page navigated to: how it came, and whether it is the release's file.
    out.documents = wire(v.responses)
      .filter((r) => r.resourceType === 'document')
      .map((r) => {
        const p = decodeURIComponent(new URL(r.url).pathname);
        const key = p.startsWith(cfg.base) ? p.slice(cfg.base.length).replace(/(^|\/)$/, '$1index.html') : null;
        const body = key && existsSync(path.join(d.dir, key)) ? readFileSync(path.join(d.dir, key)) : null;
        return {
          url: r.url,
          contentEncoding: r.contentEncoding,
          cacheControl: r.cacheControl,
          encodedBytes: r.encodedBytes,
          decodesToTheFile: body ? sha256(body) === r.bodySha256 : false,
        };
      });
    for (const r of v.responses) seen.add(r.bodySha256);
    return out;
  });
  result.modes[mode] = {
    sharedDictionary: deployed.map((d) => d.manifest.shared_dictionary ?? null),
    summary: deployed.map((d) => d.summary),
    taken: deployed.map((d) => d.taken ?? null),
    first,
    returning: back,
  };
}
result.worst = {
  returning: Math.max(...Object.values(result.modes).flatMap((m) => m.returning.slice(1).map((r) => r.ratio))),
  extra: Math.max(...Object.values(result.modes).flatMap((m) => m.first.map((f) => f.extra))),
  wholeReturning: Math.max(...Object.values(result.modes).flatMap((m) => m.returning.slice(1).map((r) => r.wholeRatio))),
  wholeExtra: Math.max(...Object.values(result.modes).flatMap((m) => m.first.map((f) => f.wholeExtra))),
};
console.log(JSON.stringify(result, null, 2));
