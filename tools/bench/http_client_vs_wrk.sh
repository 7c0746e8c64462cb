#!/usr/bin/env bash
# Requests/s of runtime/http (tools/bench/http_client_bench: 1 I/O thread,
# 64 connections, closed loop) vs `wrk -t1 -c64`, both POSTing to nginx (1
# worker) that answers with a static ~11 KB chat-completions SSE body (64
# content events + usage + [DONE]; POST is served via `error_page 405 =200`).
# Runs both alternately RUNS times and prints the medians and the ratio.
#
# Usage: tools/bench/http_client_vs_wrk.sh [path/to/http_client_bench]
#   env: RUNS (3), DURATION (5), CONNECTIONS (64)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib/common.sh"
bench_need wrk python3 /usr/sbin/nginx
bin="${1:-$bench_root/build/tools/bench/http_client_bench/http_client_bench}"
[[ -x "$bin" ]] || { echo "http_client_bench not found: $bin (build target http_client_bench or pass its path)" >&2; exit 2; }
runs="${RUNS:-3}"
duration="${DURATION:-5}"
conns="${CONNECTIONS:-64}"

bench_init
bench_start_sse_nginx
url="http://127.0.0.1:$port/v1/chat/completions"

body='{"model":"mock-model","messages":[{"role":"user","content":"Tell me a story"}],"max_completion_tokens":64,"stream":true}'
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA

echo "nginx (1 worker) serving $size bytes of SSE at $url; $runs x ${duration}s, $conns connections"
wrk_results=()
ours_results=()
for r in $(seq 1 "$runs"); do
  w=$(wrk -t1 -c"$conns" -d"${duration}s" -s "$work/post.lua" "$url" | awk '/Requests\/sec/ {print $2}')
  o=$("$bin" --url "$url" --connections "$conns" --duration "$duration" --threads 1 --body "$body" \
      | sed -n 's/^req_per_s=//p')
  echo "run $r: wrk $w req/s, http_client_bench $o req/s"
  wrk_results+=("$w")
  ours_results+=("$o")
done
python3 - "${wrk_results[*]}" "${ours_results[*]}" <<'PY'
import statistics, sys
w = [float(x) for x in sys.argv[1].split()]
o = [float(x) for x in sys.argv[2].split()]
mw, mo = statistics.median(w), statistics.median(o)
print(f"median wrk {mw:.0f} req/s, median http_client_bench {mo:.0f} req/s, ratio client/wrk {mo/mw:.3f}")
PY
