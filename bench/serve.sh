#!/usr/bin/env bash
# `precompress serve` against nginx 1.22 (Debian, brotli_static; e2e/nginx.conf with
# worker_processes auto) on fixtures/site plus assets/big.js (300 KB of JS-like text,
# .br ~100 KB) and assets/small.js (1.2 KB, .br ~0.8 KB), both asked for with
# `Accept-Encoding: br`. Per server and file: wrk -t2 -c50 -d10s --latency (req/s, p50,
# p99) and 200 sequential GETs on one keep-alive connection (median, p99), with ratios
# precompress/nginx. Client and servers share the machine's cores. Not a test.
#
#   bash bench/serve.sh [OUT]     (default OUT: bench/results/serve-<UTC time>.md)
#
# Needs nginx, libnginx-mod-http-brotli-static, wrk, curl (Debian). Builds into
# SERVE_BENCH_TARGET_DIR (default target/); PRECOMPRESS_BIN=PATH runs that binary
# instead.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/serve-$(date -u +%Y%m%dT%H%M%SZ).md}
module=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
for c in nginx wrk curl python3; do command -v $c >/dev/null || { echo "serve.sh: needs $c" >&2; exit 1; }; done
[[ -f $module ]] || { echo "serve.sh: needs $module (apt-get install libnginx-mod-http-brotli-static)" >&2; exit 1; }
# what is built: the work tree, which someone may be editing
src_state="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ', src/ modified')"
if [[ -z ${PRECOMPRESS_BIN:-} ]]; then
  tdir=${SERVE_BENCH_TARGET_DIR:-target}
  cargo build --release --locked -q --target-dir "$tdir"
fi
bin=${PRECOMPRESS_BIN:-$tdir/release/precompress}

work=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

site=$work/site
cp -r fixtures/site "$site"
python3 bench/serve.py gen 307200 1 >"$site/assets/big.js"
python3 bench/serve.py gen 1200 2 >"$site/assets/small.js"
"$bin" --no-config -q "$site"
for f in big small; do [[ -f $site/assets/$f.js.br ]] || { echo "serve.sh: no assets/$f.js.br" >&2; exit 1; }; done

# nginx: the e2e config, as tests/serve_util start_nginx writes it, with one worker per core.
np=$(python3 bench/serve.py port)
mkdir -p "$work/nginx/tmp"
sed -e "s|@PORT@|$np|; s|@ROOT@|$site|; s|^worker_processes 1;|worker_processes auto;|; s|worker_connections 64;|worker_connections 1024;|" \
  e2e/nginx.conf >"$work/nginx/nginx.conf"
grep -q '^worker_processes auto;' "$work/nginx/nginx.conf"
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx/" & pids+=($!)
pp=$(python3 bench/serve.py port)
"$bin" serve "$site" --addr "127.0.0.1:$pp" >/dev/null & pids+=($!)   # its access log: one line per request

declare -A port=([nginx]=$np ["precompress serve"]=$pp)
for s in nginx "precompress serve"; do
  for ((i = 0; ; i++)); do
    curl -sf -o /dev/null "http://127.0.0.1:${port[$s]}/" && break
    ((i < 100)) || { echo "serve.sh: $s not answering on ${port[$s]}" >&2; exit 1; }
    sleep 0.1
  done
  for f in big small; do
    h=$(curl -sf -H 'Accept-Encoding: br' -o "$work/body" -D - "http://127.0.0.1:${port[$s]}/assets/$f.js")
    grep -qi '^content-encoding: br' <<<"$h" && cmp -s "$work/body" "$site/assets/$f.js.br" ||
      { echo "serve.sh: $s did not send assets/$f.js.br for Accept-Encoding: br:" >&2; echo "$h" >&2; exit 1; }
  done
done

sz() { stat -c %s "$1"; }
{
  echo "# precompress serve vs nginx: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); wrk, the sequential client and both servers share them; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $("$bin" --version) at $src_state; $(nginx -v 2>&1 | cut -d: -f2 | xargs) with brotli_static, worker_processes auto ($(nproc) workers), access_log off; precompress serve: its 2 tokio worker threads, access log to /dev/null"
  echo "- files (Accept-Encoding: br): big.js $(sz "$site/assets/big.js") B, .br $(sz "$site/assets/big.js.br") B; small.js $(sz "$site/assets/small.js") B, .br $(sz "$site/assets/small.js.br") B"
  echo "- wrk -t2 -c50 -d10s --latency -H 'Accept-Encoding: br' URL; keep-alive seq: 20 warm-up + 200 GETs on one connection (python3 http.client), nearest-rank median and p99"
} >"$work/notes"

: >"$work/rows"
for f in big small; do
  for s in nginx "precompress serve"; do
    url=http://127.0.0.1:${port[$s]}/assets/$f.js
    echo "serve.sh: $s $f.js" >&2
    wrk -t2 -c50 -d10s --latency -H 'Accept-Encoding: br' "$url" >"$work/wrk"
    w=$(python3 bench/serve.py wrk "$work/wrk"); read -r rps p50 p99 <<<"$w"
    q=$(python3 bench/serve.py seq "${port[$s]}" "/assets/$f.js" 200); read -r sm s99 <<<"$q"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$f.js" "$rps" "$p50" "$p99" "$sm" "$s99" >>"$work/rows"
  done
done
for p in "${pids[@]}"; do kill -0 "$p" || { echo "serve.sh: a server died during the run" >&2; exit 1; }; done
echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$work/notes"

mkdir -p "$(dirname "$out")"
python3 bench/serve.py table "$work/rows" "$work/notes" | tee "$out"
echo "wrote $out" >&2
