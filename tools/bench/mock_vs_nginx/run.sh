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
root="$(cd "$here/../../.." && pwd)"
bin="${1:-${AIPERF_NODE_BIN:-$root/build-mock/tools/aiperf-node/aiperf-node}}"
runs="${RUNS:-5}"
duration="${DURATION:-5s}"
conns="${CONNECTIONS:-64}"
for tool in wrk curl /usr/sbin/nginx; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
[[ -x "$bin" ]] || { echo "aiperf-node binary not found: $bin (build it or pass its path)" >&2; exit 2; }

work="$(mktemp -d)"
mock_pid=""
nginx_pid=""
cleanup() {
  [[ -n "$mock_pid" ]] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null
  [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# -- mock server --------------------------------------------------------------
"$bin" mock-server --fast --workers 1 -p 0 --log-level warning >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 1 200); do
  grep -q 'listening on' "$work/mock.out" 2>/dev/null && break
  sleep 0.05
done
mock_url="$(grep -o 'http://[^ ]*' "$work/mock.out")"
mock_port="${mock_url##*:}"

# The exact body wrk's request gets from the mock becomes nginx's file.
body="$(sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$here/post.lua")"
mkdir -p "$work/html/v1/chat" "$work/logs" "$work/tmp"
curl -sS -o "$work/html/v1/chat/completions" -H 'Content-Type: application/json' \
  -d "$body" "http://127.0.0.1:$mock_port/v1/chat/completions"
size=$(stat -c %s "$work/html/v1/chat/completions")

# -- nginx ----------------------------------------------------------------------
nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
user_line=""
[[ $(id -u) -eq 0 ]] && user_line="user root;"
cat >"$work/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 100000000;
  client_body_temp_path $work/tmp;
  proxy_temp_path $work/tmp;
  fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp;
  scgi_temp_path $work/tmp;
  default_type text/event-stream;
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/html;
    location / { error_page 405 =200 \$uri; }
  }
}
CONF
/usr/sbin/nginx -p "$work" -c "$work/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
for _ in $(seq 1 200); do
  curl -s -o /dev/null "http://127.0.0.1:$nginx_port/v1/chat/completions" && break
  sleep 0.05
done
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
