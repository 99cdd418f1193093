#!/usr/bin/env bash
# The documents dictionary (src/run/dictionaries/documents.rs) on real multi-page HTML:
# Debian's python3.11-doc and postgresql-doc-15. Per site: what the run
# decided and its estimate (from --json), every page's smallest delta over
# its brotli bytes (from the manifest), and the run's wall time with it and
# with --no-shared-dictionary. Then e2e/documents.mjs: what Chromium
# downloads for five Python pages, first visit and after a release. Not a test.
#
#   bash bench/documents.sh [OUT]   (default OUT: bench/results/documents-<UTC time>.md)
#
# Needs apt python3.11-doc postgresql-doc-15, and what .ci/e2e.sh installs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/results/documents-$(date -u +%Y%m%dT%H%M%SZ).md}
bin=${PRECOMPRESS_BIN:-}
if [[ -z $bin ]]; then
  cargo build --release --locked -q
  bin=$PWD/target/release/precompress
fi
work=target/bench-documents
mkdir -p "$(dirname "$out")" "$work"
{
  echo "# The documents dictionary ($(date -u +%Y-%m-%d), $("$bin" --version), $(nproc) threads)"
  echo
  echo "| site | pages | made? | estimate: held-out delta / br | estimate: pays back after | first visit fetches | every page: delta / br | run time with it | without |"
  echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
} >"$out"
for site in /usr/share/doc/python3.11/html /usr/share/doc/postgresql-doc-15/html; do
  for mode in with without; do
    rm -rf "${work:?}/$mode"
    cp -rL "$site" "$work/$mode"
    flags=(--no-config --json)
    # `on`: the documents dictionary wherever it pays back (`auto` also holds
    # it to 2% of a first visit, which these sites' pages pass).
    [[ $mode == with ]] && flags+=(--shared-dictionary on)
    [[ $mode == without ]] && flags+=(--no-shared-dictionary)
    start=$(date +%s%N)
    "$bin" "${flags[@]}" "$work/$mode" >"$work/$mode.json"
    echo $((($(date +%s%N) - start) / 1000000)) >"$work/$mode.ms"
  done
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const fs = require("fs");
    const [site, work] = process.argv.slice(1);
    const r = JSON.parse(fs.readFileSync(`${work}/with.json`, "utf8"));
    const m = JSON.parse(fs.readFileSync(`${work}/with/precompress-manifest.json`, "utf8"));
    const d = r.run.documents_dictionary;
    let br = 0, delta = 0, pages = 0;
    for (const [k, a] of Object.entries(m.files)) {
      if (!/\.html?$/.test(k)) continue;
      pages++;
      const b = a.encodings.find((e) => e.coding === "br")?.size ?? a.size;
      br += b;
      delta += Math.min(b, ...(a.deltas ?? []).map((x) => x.size));
    }
    const secs = (f) => (Number(fs.readFileSync(`${work}/${f}.ms`, "utf8")) / 1000).toFixed(1) + " s";
    const n = (x) => x.toLocaleString("en-US");
    console.log(`| ${site} | ${pages} | ${d.path ? "yes" : "no"} | ${(d.delta_bytes / d.br_bytes).toFixed(2)} (${d.measured_pages} pages) | ${d.payback_pages === null ? "never" : d.payback_pages.toFixed(1) + " pages"} | ${n(d.dictionary_br_bytes)} B | ${d.path ? (delta / br).toFixed(2) : "-"} | ${secs("with")} | ${secs("without")} |`);
  ' "$site" "$work" >>"$out"
done
PRECOMPRESS=$bin node e2e/documents.mjs /usr/share/doc/python3.11/html "$work/browser" >"$work/browser.json"
# shellcheck disable=SC2016 # JavaScript, not shell
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const n = (x) => x.toLocaleString("en-US");
  const codings = (v) => v.documents.map((d) => d.contentEncoding).join(", ");
  console.log("\nChromium, five pages of 40 of Python'"'"'s library docs (e2e/documents.mjs):\n");
  console.log("| visit | pages as | page bytes | dictionary bytes | total | the same pages as br |");
  console.log("|---|---|---:|---:|---:|---:|");
  for (const [name, v] of [["first visit, release 1", r.first], ["returning, release 2", r.returning]])
    console.log(`| ${name} | ${codings(v)} | ${n(v.bytes)} B | ${n(v.dictionaries)} B | ${n(v.bytes + v.dictionaries)} B | ${n(v.brBytes)} B |`);
' "$work/browser.json" >>"$out"
cat "$out"
