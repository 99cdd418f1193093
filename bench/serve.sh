#!/usr/bin/env bash
# Four servers on one precompressed folder, side by side in one run: nginx 1.22
# (Debian, brotli_static + gzip_static, default open_file_cache: off),
# `precompress serve`, an axum app on precompressor's `ServeManifest`, and the
# same axum app on tower-http's `ServeDir` (`precompressed_br`/`_gzip`), built
# from bench/axum-serve/. Each with THREADS workers (default 1: nginx
# `worker_processes 1`, `serve --threads 1`, the axum apps on a single-thread
# tokio runtime), and no access log (nginx `access_log off`, `serve --quiet`).
# With one worker on a machine of 2 or more cores, the servers run on core 1 and
# wrk on core 0 (taskset; PIN=0 lets the scheduler place them): each server has
# a core to itself, as its one worker would in production, and a round does not
# depend on where the scheduler happened to put the client. Two requests for
# assets/app.js (about 70 KB as br):
#   200  Accept-Encoding: br, the br variant sent
#   304  the same with If-None-Match: the ETag the server gave (ServeDir gives none:
#        If-Modified-Since: its Last-Modified)
# Each is `wrk -t1 -c10 -d5s --latency`, interleaved (nginx, serve, axum, ServeDir,
# then again) over ROUNDS rounds (default 3); reported: the median requests/s and
# p99 over the rounds, and each one's ratio to nginx's. Client and servers share the
# machine's cores. Not a test.
#
#   bash bench/serve.sh [OUT]     (default OUT: bench/results/serve-<UTC time>.md)
#
# Needs nginx, libnginx-mod-http-brotli-static, wrk, curl, python3 (Debian). Builds
# precompress into SERVE_BENCH_TARGET_DIR (default target/) and the axum app into
# its target/bench-axum/; PRECOMPRESS_BIN=PATH runs that binary instead. ROUNDS,
# DURATION (wrk -d, default 5s), THREADS and SITE (a built folder to serve instead of
# fixtures/site + the generated app.js: a copy is precompressed; ASSET names the
# file to ask for, relative to it) can be set in the environment.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/serve-$(date -u +%Y%m%dT%H%M%SZ).md}
rounds=${ROUNDS:-3}
duration=${DURATION:-5s}
threads=${THREADS:-1}
server_cpu=() client_cpu=()
if [[ $threads == 1 && $(nproc) -ge 2 && ${PIN:-1} != 0 ]] && command -v taskset >/dev/null; then
  server_cpu=(taskset -c 1) client_cpu=(taskset -c 0)
fi
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "serve.sh: THREADS is a number of workers, not $threads" >&2; exit 1; }
module=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
for c in nginx wrk curl python3 cargo; do command -v $c >/dev/null || { echo "serve.sh: needs $c" >&2; exit 1; }; done
[[ -f $module ]] || { echo "serve.sh: needs $module (apt-get install libnginx-mod-http-brotli-static)" >&2; exit 1; }
# what is built: the work tree, which someone may be editing
src_state="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ', src/ modified')"
tdir=${SERVE_BENCH_TARGET_DIR:-target}
if [[ -z ${PRECOMPRESS_BIN:-} ]]; then
  cargo build --release --locked -q --target-dir "$tdir"
fi
bin=${PRECOMPRESS_BIN:-$tdir/release/precompress}
cargo build --release --locked -q --manifest-path bench/axum-serve/Cargo.toml --target-dir "$tdir/bench-axum"
axum_bin=$tdir/bench-axum/release/axum-serve-bench

work=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

site=$work/site
if [[ -n ${SITE:-} ]]; then
  cp -r "$SITE" "$site"
  asset=${ASSET:?serve.sh: SITE needs ASSET, the file to ask for}
else
  cp -r fixtures/site "$site"
  python3 bench/serve.py gen 200000 1 >"$site/assets/app.js"
  asset=assets/app.js
fi
"$bin" --no-config -q "$site"
[[ -f $site/$asset.br ]] || { echo "serve.sh: no $asset.br" >&2; exit 1; }

# nginx: the e2e config, THREADS worker processes, room for the connections.
np=$(python3 bench/serve.py port)
mkdir -p "$work/nginx/tmp"
sed -e "s|@PORT@|$np|; s|@ROOT@|$site|; s|worker_connections 64;|worker_connections 1024;|" \
  -e "s|^worker_processes 1;|worker_processes $threads;|" \
  e2e/nginx.conf >"$work/nginx/nginx.conf"
grep -q "^worker_processes $threads;" "$work/nginx/nginx.conf"
${server_cpu[@]+"${server_cpu[@]}"} nginx -c "$work/nginx/nginx.conf" -p "$work/nginx/" & pids+=($!)
sp=$(python3 bench/serve.py port)
${server_cpu[@]+"${server_cpu[@]}"} "$bin" serve "$site" --addr "127.0.0.1:$sp" --threads "$threads" --quiet >/dev/null & pids+=($!)
mp=$(python3 bench/serve.py port)
${server_cpu[@]+"${server_cpu[@]}"} "$axum_bin" manifest "$site" "127.0.0.1:$mp" "$threads" >/dev/null & pids+=($!)
dp=$(python3 bench/serve.py port)
${server_cpu[@]+"${server_cpu[@]}"} "$axum_bin" servedir "$site" "127.0.0.1:$dp" "$threads" >/dev/null & pids+=($!)

servers=(nginx serve axum-ServeManifest axum-ServeDir)
declare -A port=([nginx]=$np [serve]=$sp [axum-ServeManifest]=$mp [axum-ServeDir]=$dp)
declare -A pid=([nginx]=${pids[0]} [serve]=${pids[1]} [axum-ServeManifest]=${pids[2]} [axum-ServeDir]=${pids[3]})
declare -A cond
for s in "${servers[@]}"; do
  url=http://127.0.0.1:${port[$s]}/$asset
  for ((i = 0; ; i++)); do
    curl -sf -o /dev/null "$url" && break
    ((i < 100)) || { echo "serve.sh: $s not answering on ${port[$s]}" >&2; exit 1; }
    sleep 0.1
  done
  h=$(curl -sf -H 'Accept-Encoding: br' -o "$work/body" -D - "$url" | tr -d '\r')
  grep -qi '^content-encoding: br' <<<"$h" && cmp -s "$work/body" "$site/$asset.br" ||
    { echo "serve.sh: $s did not send $asset.br for Accept-Encoding: br:" >&2; echo "$h" >&2; exit 1; }
  etag=$(sed -n 's/^etag: *//Ip' <<<"$h")
  if [[ -n $etag ]]; then cond[$s]="If-None-Match: $etag"
  else cond[$s]="If-Modified-Since: $(sed -n 's/^last-modified: *//Ip' <<<"$h")"; fi
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: br' -H "${cond[$s]}" "$url")
  [[ $code == 304 ]] || { echo "serve.sh: $s answered $code, not 304, to ${cond[$s]}" >&2; exit 1; }
done

sz() { stat -c %s "$1"; }
{
  echo "# Serving one precompressed file: nginx, precompress serve, ServeManifest, ServeDir ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); wrk and the four servers share them; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $("$bin" --version) at $src_state (release profile); $(nginx -v 2>&1 | cut -d: -f2 | xargs), worker_processes $threads, brotli_static + gzip_static on, open_file_cache off (the default), sendfile off (the default), access_log off; serve --threads $threads --quiet and both axum apps on $threads tokio worker thread(s) (1: a single-thread runtime), none with an access log; $(if ((${#server_cpu[@]})); then echo 'servers on core 1, wrk on core 0 (taskset)'; else echo 'not pinned to cores'; fi)"
  echo "- file: $asset, $(sz "$site/$asset") B, .br $(sz "$site/$asset.br") B, asked for with Accept-Encoding: br"
  echo "- 304: each server's own validator: $(for s in "${servers[@]}"; do printf '%s `%s`; ' "$s" "${cond[$s]}"; done)"
  echo "- wrk -t1 -c10 -d$duration --latency, $rounds rounds, each round nginx, serve, axum-ServeManifest, axum-ServeDir for the 200, then the same for the 304; median of the rounds"
} >"$work/notes"

: >"$work/rows"
for ((r = 1; r <= rounds; r++)); do
  for case in 200 304; do
    for s in "${servers[@]}"; do
      echo "serve.sh: round $r, $case, $s" >&2
      hdr=(-H 'Accept-Encoding: br')
      [[ $case == 304 ]] && hdr+=(-H "${cond[$s]}")
      ${client_cpu[@]+"${client_cpu[@]}"} wrk -t1 -c10 -d"$duration" --latency "${hdr[@]}" "http://127.0.0.1:${port[$s]}/$asset" >"$work/wrk"
      w=$(python3 bench/serve.py wrk "$work/wrk"); read -r rps p50 p99 <<<"$w"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$case" "$s" "$rps" "$p50" "$p99" >>"$work/rows"
    done
  done
done
for s in "${servers[@]}"; do kill -0 "${pid[$s]}" || { echo "serve.sh: $s died during the run" >&2; exit 1; }; done
{
  echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf -- '- memory at end (VmRSS / VmHWM peak, nginx: master + worker):'
  for s in "${servers[@]}"; do printf ' %s %s;' "$s" "$(python3 bench/serve.py mem "${pid[$s]}")"; done
  echo
} >>"$work/notes"

mkdir -p "$(dirname "$out")"
python3 bench/serve.py rounds "$work/rows" "$work/notes" | tee "$out"
echo "wrote $out" >&2
