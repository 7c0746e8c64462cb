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
root="$(cd "$here/../.." && pwd)"
bin="${1:-$root/build-http/tools/bench/http_client_bench/http_client_bench}"
runs="${RUNS:-3}"
duration="${DURATION:-5}"
conns="${CONNECTIONS:-64}"
for tool in wrk python3 /usr/sbin/nginx; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
[[ -x "$bin" ]] || { echo "http_client_bench not found: $bin (build target http_client_bench or pass its path)" >&2; exit 2; }

work="$(mktemp -d)"
nginx_pid=""
cleanup() {
  [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# -- the SSE body -----------------------------------------------------------------
mkdir -p "$work/html/v1/chat" "$work/logs"
python3 - "$work/html/v1/chat/completions" <<'PY'
import json, sys
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
out = []
for i in range(64):
    chunk = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
             "model": "mock-model",
             "choices": [{"index": 0, "delta": {"content": " " + words[i % 8]}, "finish_reason": None}]}
    out.append("data: " + json.dumps(chunk, separators=(",", ":")) + "\n\n")
usage = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
         "model": "mock-model", "choices": [],
         "usage": {"prompt_tokens": 12, "completion_tokens": 64, "total_tokens": 76}}
out.append("data: " + json.dumps(usage, separators=(",", ":")) + "\n\n")
out.append("data: [DONE]\n\n")
open(sys.argv[1], "w").write("".join(out))
PY
size=$(stat -c %s "$work/html/v1/chat/completions")

# -- nginx --------------------------------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
user_line=""
[[ $(id -u) -eq 0 ]] && user_line="user root;"
cat >"$work/nginx.conf" <<CONF
$user_line
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  keepalive_requests 1000000;
  client_body_temp_path $work/tmp_body;
  proxy_temp_path $work/tmp_proxy;
  fastcgi_temp_path $work/tmp_fcgi;
  uwsgi_temp_path $work/tmp_uwsgi;
  scgi_temp_path $work/tmp_scgi;
  types { text/event-stream completions; }
  server {
    listen 127.0.0.1:$port;
    root $work/html;
    error_page 405 =200 \$uri;
  }
}
CONF
/usr/sbin/nginx -p "$work" -c "$work/nginx.conf" &
nginx_pid=$!
url="http://127.0.0.1:$port/v1/chat/completions"
for _ in $(seq 1 200); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1',$port))" 2>/dev/null && break
  sleep 0.05
done

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
