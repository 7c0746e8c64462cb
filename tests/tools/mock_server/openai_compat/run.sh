#!/usr/bin/env bash
# ctest wrapper: starts `aiperf-node mock-server -p 0`, runs compat.mjs with the
# official openai npm client against it, stops the server.
# Usage: run.sh path/to/aiperf-node
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:?usage: run.sh path/to/aiperf-node}"
cd "$here"
if [[ ! -d node_modules/openai ]]; then
  npm ci --silent
fi
out="$(mktemp)"
"$bin" mock-server -p 0 --fast --log-level warning >"$out" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$out"' EXIT
url=""
for _ in $(seq 1 200); do
  url="$(grep -o 'http://[^ ]*' "$out" || true)"
  [[ -n "$url" ]] && break
  kill -0 "$pid" 2>/dev/null || { echo "mock-server exited early" >&2; exit 1; }
  sleep 0.05
done
[[ -n "$url" ]] || { echo "mock-server printed no address" >&2; exit 1; }
node compat.mjs "$url"
