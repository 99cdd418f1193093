# What e2e/apps/build.sh and e2e/apps/docs/build.sh share: timed steps, each
# run in $src with its output in $logs/NAME.log, its tail shown on failure,
# and the install that is skipped when node_modules is current.
# Sourced after the caller sets `tag` (its name in progress lines), `src`
# and `logs`.
# shellcheck shell=bash disable=SC2154 # tag, src and logs are the caller's

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "build.sh [$tag] $*" >&2; }

# Runs "$@" in $src with output to $logs/$1.log; on failure shows the log's tail.
step() {
  local name="$1"; shift
  local t0; t0="$(now)"
  if ! (cd "$src" && "$@") >"$logs/$name.log" 2>&1; then
    say "$name FAILED ($(since "$t0")s): $*  -- last lines of $logs/$name.log:"
    tail -n 40 "$logs/$name.log" >&2
    exit 1
  fi
  say "$name: $(since "$t0")s"
}

# `npm ci` in $src, unless node_modules came from this very lock file on this
# node major (a node_modules installed on another may lack or hold the wrong
# optional and engine-dependent packages).
install_once() {
  local lock_sum stamp
  lock_sum="$(sha256sum "$src/package-lock.json" | cut -d' ' -f1) node $(node -p 'process.versions.node.split(".")[0]')"
  stamp="$src/node_modules/.e2e-installed-lock"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" ]]; then
    say "install: reusing $src/node_modules"
  else
    step install npm ci --no-audit --no-fund --prefer-offline
    echo "$lock_sum" >"$stamp"
  fi
}
