// `vite preview` with precompressor/vite, visited by headless Chromium: a
// real Vite app (a copy of e2e/apps/vite-react with the plugin in its config
// and the packed package installed, made by npm/test.sh) is built, previewed,
// visited, rebuilt as release 2 while the preview keeps running, and visited
// again in the same profile. The preview must send br or zstd, the manifest's
// ETags, and to the returning visitor a delta that decodes to release 2's
// file; never release 1's bytes after the rebuild. Prints one JSON object;
// exits 1 when any of that fails.
//
//   node e2e/preview.mjs APP_DIR
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { visits } from './deploy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const [app] = process.argv.slice(2);
if (!app) {
  console.error('usage: node e2e/preview.mjs APP_DIR');
  process.exit(2);
}
const base = '/app/';
const vite = (args) => {
  const r = spawnSync('npx', ['--no', '--', 'vite', ...args], { cwd: app, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vite ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

vite(['build']);
const port = await freePort();
// Vite's own CLI, in a process group of its own: killed whole at the end.
const preview = spawn(path.join(app, 'node_modules', '.bin', 'vite'), ['preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
  cwd: app,
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
const stop = () => {
  try {
    process.kill(-preview.pid, 'SIGTERM');
  } catch {}
};
process.on('exit', stop);
let log = '';
preview.stdout.on('data', (d) => (log += d));
preview.stderr.on('data', (d) => (log += d));
await new Promise((resolve, reject) => {
  const t = setTimeout(() => reject(new Error(`vite preview did not start:\n${log}`)), 60_000);
  preview.on('exit', (code) => reject(new Error(`vite preview exited (${code}):\n${log}`)));
  const poll = setInterval(() => {
    if (log.includes(`${port}`)) {
      clearInterval(poll);
      clearTimeout(t);
      resolve();
    }
  }, 100);
});

const manifest = () => JSON.parse(readFileSync(path.join(app, 'dist', 'precompress-manifest.json'), 'utf8'));
const m1 = manifest();
let m2;
let result;
try {
  const [v1, v2] = await visits(`http://localhost:${port}`, [base], async () => {
    const r = spawnSync('node', [path.join(here, 'apps', 'release2.mjs'), app], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`release2.mjs: ${r.stderr}`);
    vite(['build']);
    m2 = manifest();
  });
  const code = (v) => v.responses.filter((r) => /javascript|text\/css/.test(r.contentType ?? '') && r.status === 200 && r.fromCache === null);
  // Each response against the manifest of its release: the key, and what it must be.
  const listed = (m, r) => m.files[decodeURIComponent(new URL(r.url).pathname).slice(base.length)];
  const problems = [];
  const first = code(v1);
  if (!first.length) problems.push('visit 1 fetched no scripts or stylesheets');
  if (!first.some((r) => ['br', 'zstd'].includes(r.contentEncoding))) problems.push('visit 1: nothing came as br or zstd');
  for (const r of first) {
    const a = listed(m1, r);
    // Files under --min-size have no variants; the rest must come encoded
    // (br, zstd, or a delta against the release's shared dictionary).
    if (a?.encodings.length && !r.contentEncoding) problems.push(`visit 1: ${r.url} came as identity`);
    if (!a || r.bodySha256 !== Buffer.from(a.sha256, 'base64').toString('hex')) problems.push(`visit 1: ${r.url} is not release 1's file`);
  }
  const second = code(v2);
  const deltas = second.filter((r) => ['dcb', 'dcz'].includes(r.contentEncoding));
  if (!deltas.length) problems.push(`visit 2: no delta (${second.map((r) => `${path.basename(r.url)} ${r.contentEncoding}`).join(', ')})`);
  for (const r of second) {
    const a = listed(m2, r);
    if (!a || r.bodySha256 !== Buffer.from(a.sha256, 'base64').toString('hex')) problems.push(`visit 2: ${r.url} is not release 2's file`);
  }
  // The page's release text (the lazy chunk's title, set by release2.mjs) changed.
  const shown = (v) => JSON.stringify(v.pages.map((p) => p.release));
  if (shown(v1) === shown(v2)) problems.push(`visit 2 showed ${shown(v2)}, as visit 1 did: not release 2`);
  const bytes = (rs) => rs.reduce((s, r) => s + (r.encodedBytes ?? 0), 0);
  result = {
    visit1: { codings: [...new Set(first.map((r) => r.contentEncoding))], bytes: bytes(first) },
    visit2: { codings: [...new Set(second.map((r) => r.contentEncoding))], deltas: deltas.length, bytes: bytes(second) },
    problems,
  };
} finally {
  stop();
}
console.log(JSON.stringify(result));
if (result.problems.length) process.exit(1);
