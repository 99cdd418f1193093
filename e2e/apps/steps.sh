# What e2e/apps/build.sh and e2e/apps/docs/build.sh share: timed steps, each
# run in $src with its output in $logs/NAME.log, its tail shown on failure.
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
