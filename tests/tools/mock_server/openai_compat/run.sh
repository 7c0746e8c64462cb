#!/usr/bin/env bash
# ctest wrapper: installs the official openai npm client with `npm ci` from
# the committed package.json and package-lock.json into WORK_DIR (in the
# build tree; the source tree gets no node_modules), starts
# `aiperf-node mock-server -p 0`, runs compat.mjs against the address it
# prints, stops the server.
# Usage: run.sh path/to/aiperf-node WORK_DIR
# Exits 77 (ctest: skipped) when node or npm is missing; with CI=true that
# is a failure instead, as for the gtest skips (tests/support/skip.hpp).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:?usage: run.sh path/to/aiperf-node WORK_DIR}"
work="${2:?usage: run.sh path/to/aiperf-node WORK_DIR}"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    why="the $tool command is missing; run tools/bootstrap, which installs"
    why+=" Debian's nodejs and npm when node or npm is missing"
    why+=" (apt-get install nodejs npm)"
    if [[ "${CI:-}" == true ]]; then
      echo "CI=true, so this test fails instead of skipping: $why" >&2
      exit 1
    fi
    echo "skipped: $why" >&2
    exit 77
  fi
done

mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/compat.mjs" "$work/"
# compat.mjs imports "openai" from the node_modules beside it. Installed
# again only when the lock file differs from the one last installed.
stamp="$work/node_modules/.aiperf-installed-lock.json"
if ! cmp -s "$work/package-lock.json" "$stamp"; then
  (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --silent)
  cp "$work/package-lock.json" "$stamp"
fi

# The first stdout line names the bound port: "mock-server listening on URL".
coproc server { exec "$bin" mock-server -p 0 --fast --log-level warning; }
pid=$server_PID
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
line=""
read -r -t 20 -u "${server[0]}" line || true
url="$(grep -o 'http://[^ ]*' <<<"$line" || true)"
[[ -n "$url" ]] || { echo "mock-server printed no address: '$line'" >&2; exit 1; }
node "$work/compat.mjs" "$url"
