#!/usr/bin/env bash
# Requests/s of `aiperf-node mock-server --fast --workers 1` vs nginx (1 worker)
# serving a static file of exactly the mock's streamed response body (64
# tokens + usage + [DONE]), both driven by `wrk -t1 -c64 -d5s -s post.lua`,
# RUNS alternating runs each; prints both medians and the ratio mock/nginx.
#
# Usage: tools/bench/mock_vs_nginx/run.sh [path/to/aiperf-node]
#   env: RUNS (5), DURATION (5s), CONNECTIONS (64)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib/common.sh"
bench_need wrk curl bc /usr/sbin/nginx
bench_find_node "${1:-}"
runs="${RUNS:-5}"
duration="${DURATION:-5s}"
conns="${CONNECTIONS:-64}"
bench_init

# -- mock server ----------------------------------------------------------------
bench_start_mock mock_port --fast --workers 1

# The exact body wrk's request gets from the mock becomes nginx's file.
body="$(sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$here/post.lua")"
mkdir -p "$work/html/v1/chat"
curl -sS -o "$work/html/v1/chat/completions" -H 'Content-Type: application/json' \
  -d "$body" "http://127.0.0.1:$mock_port/v1/chat/completions"
size=$(stat -c %s "$work/html/v1/chat/completions")

# -- nginx ----------------------------------------------------------------------
nginx_port=$(bench_free_port)
bench_start_nginx "$work/html" "$nginx_port"
nginx_size=$(curl -sS -X POST -H 'Content-Type: application/json' -d "$body" \
  "http://127.0.0.1:$nginx_port/v1/chat/completions" | wc -c)
[[ "$nginx_size" -eq "$size" ]] || { echo "nginx serves $nginx_size bytes, mock $size" >&2; exit 1; }

rps() { # url -> requests/s
  wrk -t1 -c"$conns" -d"$duration" -s "$here/post.lua" "$1" \
    | awk '/^Requests\/sec:/ {print $2} /Non-2xx/ {print "non-2xx: " $0 > "/dev/stderr"}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "response body: $size bytes (64 tokens + usage + [DONE]); wrk -t1 -c$conns -d$duration, $runs alternating runs"
: >"$work/mock.rps"
: >"$work/nginx.rps"
for i in $(seq 1 "$runs"); do
  n=$(rps "http://127.0.0.1:$nginx_port/v1/chat/completions")
  m=$(rps "http://127.0.0.1:$mock_port/v1/chat/completions")
  echo "$n" >>"$work/nginx.rps"
  echo "$m" >>"$work/mock.rps"
  printf 'run %d: nginx %10.0f req/s   mock %10.0f req/s\n' "$i" "$n" "$m"
done
nginx_med=$(median <"$work/nginx.rps")
mock_med=$(median <"$work/mock.rps")
printf 'median: nginx %.0f req/s, mock %.0f req/s, ratio mock/nginx %.3f\n' \
  "$nginx_med" "$mock_med" "$(echo "$mock_med / $nginx_med" | bc -l)"
