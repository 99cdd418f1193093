// What e2e/field.mjs and e2e/documents.mjs share: precompress runs with one
// release store, an atomic symlink deploy, `precompress serve` on a free
// port, and visits of apps/visit.mjs with a deploy between them.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { renameSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export const sha256 = (b) => createHash('sha256').update(b).digest('hex');

/** Runs `bin ARGS` with the release store in `cache` (check decodes with it; none when null); throws on failure. */
export const runner = (bin, cache) => (args) => {
  const env = { ...process.env, PRECOMPRESS_CACHE_DIR: cache };
  if (!cache) delete env.PRECOMPRESS_CACHE_DIR;
  const r = spawnSync(bin, args, { encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`precompress ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return r;
};

/** Points the symlink `live` at `to`, atomically (a new link renamed over it), as `ln -sfn` deploys. */
export function point(live, to) {
  const tmp = `${live}.new`;
  rmSync(tmp, { force: true });
  symlinkSync(to, tmp);
  renameSync(tmp, live);
}

/**
 * `precompress serve DIR` on a free port: its origin on http://localhost
 * (Chromium keeps dictionaries only in a secure context, which localhost
 * is) and `kill`.
 */
export async function serve(bin, dir) {
  const server = spawn(bin, ['serve', dir, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  server.stderr.on('data', (d) => (err += d));
  const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]();
  const first = (await lines.next()).value ?? '';
  const port = /127\.0\.0\.1:(\d+)/.exec(first)?.[1];
  if (!port) throw new Error(`precompress serve: no address in ${first}: ${err}`);
  (async () => {
    for await (const _ of lines); // drain the access log
  })();
  return { origin: `http://localhost:${port}`, kill: () => server.kill() };
}

/**
 * Two visits of `pages` on `origin` in one browser profile (apps/visit.mjs,
 * its stdin ours): `between` runs after the first. `env` adds to visit.mjs's.
 */
export async function visits(origin, pages, between, env = {}) {
  return series(origin, pages, [between], env);
}

/**
 * Visits of `pages` on `origin`, one more than `betweens`, each of which runs
 * before the next visit (a deploy): in one browser profile, a returning
 * visitor's; with `{ VISIT_FRESH: '1' }` in `env`, each in a new profile.
 */
export async function series(origin, pages, betweens, env = {}) {
  const child = spawn('node', [path.join(here, 'apps', 'visit.mjs'), origin, ...pages], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, VISITS: String(betweens.length + 1), ...env },
  });
  const out = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const results = [JSON.parse((await out.next()).value)];
  for (const between of betweens) {
    await between();
    child.stdin.write('\n');
    results.push(JSON.parse((await out.next()).value));
  }
  child.stdin.end();
  await new Promise((r) => child.on('close', r));
  return results;
}
