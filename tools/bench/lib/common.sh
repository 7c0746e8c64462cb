# Shared helpers for the client benchmarks (sourced, not run):
#   bench_init                 temp work dir + cleanup trap (kills what we started)
#   bench_find_node [path]     sets $node to the aiperf-node binary
#   bench_free_port            prints a free loopback port
#   bench_sse_body FILE [N]    writes a static chat-completions SSE body (N content events)
#   bench_start_nginx ROOT PORT [CPU]   nginx (1 worker) serving ROOT, POST answered
#   bench_start_sse_nginx [CPU]  nginx serving benchmark 1's 64-event body; sets $port, $size
#   bench_pin_from_env         PIN=1: sets pin=(taskset -c 0) and nginx_cpu=0, else both empty
#   bench_start_mock PORTVAR ARGS...    aiperf-node mock-server on port 0, sets PORTVAR
#   bench_run CMD...           prints the exact command, then runs it
#   bench_timed OUT CMD...     like bench_run under /usr/bin/time; writes "user sys" to OUT
#   bench_profile_result TIME DIR [METRIC...]   "req/s cpu_us_per_req [p50 p99]..." of a profile run
bench_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
bench_pids=()

bench_init() {
  work="$(mktemp -d)"
  trap bench_cleanup EXIT
}

bench_cleanup() {
  local pid
  for pid in "${bench_pids[@]}"; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  [[ -n "${KEEP_WORK:-}" ]] && { echo "work dir kept: $work"; return; }
  rm -rf "$work"
}

bench_find_node() {
  node="${1:-${AIPERF_NODE_BIN:-}}"
  if [[ -z "$node" ]]; then
    for d in build-bench build; do
      [[ -x "$bench_root/$d/tools/aiperf-node/aiperf-node" ]] \
        && { node="$bench_root/$d/tools/aiperf-node/aiperf-node"; break; }
    done
  fi
  [[ -n "$node" && -x "$node" ]] || {
    echo "aiperf-node not found: build target aiperf-node or pass its path / set AIPERF_NODE_BIN" >&2
    exit 2
  }
}

bench_need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
  done
}

bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

bench_wait_port() {
  local port="$1" i
  for i in $(seq 1 200); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1',$port)).close()" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "nothing listening on 127.0.0.1:$port" >&2
  exit 2
}

bench_sse_body() {
  python3 - "$1" "${2:-64}" <<'PY'
import json, sys
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
n = int(sys.argv[2])
out = []
for i in range(n):
    chunk = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
             "model": "mock-model",
             "choices": [{"index": 0, "delta": {"content": " " + words[i % 8]}, "finish_reason": None}]}
    out.append("data: " + json.dumps(chunk, separators=(",", ":")) + "\n\n")
usage = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
         "model": "mock-model", "choices": [],
         "usage": {"prompt_tokens": 64, "completion_tokens": n, "total_tokens": 64 + n}}
out.append("data: " + json.dumps(usage, separators=(",", ":")) + "\n\n")
out.append("data: [DONE]\n\n")
open(sys.argv[1], "w").write("".join(out))
PY
}

# nginx with 1 worker serving ROOT on PORT; POST is answered with the file
# (error_page 405 =200). Optional CPU pins it with taskset.
bench_start_nginx() {
  local root="$1" port="$2" cpu="${3:-}" prefix="$work/nginx-$2" user_line=""
  mkdir -p "$prefix/logs" "$prefix/tmp"
  [[ $(id -u) -eq 0 ]] && user_line="user root;"
  cat >"$prefix/nginx.conf" <<CONF
$user_line
daemon off;
worker_processes 1;
pid $prefix/nginx.pid;
error_log $prefix/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nodelay on;
  keepalive_requests 100000000;
  client_body_temp_path $prefix/tmp;
  proxy_temp_path $prefix/tmp;
  fastcgi_temp_path $prefix/tmp;
  uwsgi_temp_path $prefix/tmp;
  scgi_temp_path $prefix/tmp;
  default_type text/event-stream;
  server {
    listen 127.0.0.1:$port;
    root $root;
    location / { error_page 405 =200 \$uri; }
  }
}
CONF
  local pin=()
  [[ -n "$cpu" ]] && pin=(taskset -c "$cpu")
  echo "+ ${pin[*]} /usr/sbin/nginx -p $prefix -c $prefix/nginx.conf"
  "${pin[@]}" /usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" &
  bench_pids+=($!)
  bench_wait_port "$port"
}

# nginx (1 worker, optionally pinned to CPU) serving benchmark 1's body, a
# static chat-completions stream of 64 content events, at
# /v1/chat/completions on a free port; sets port and size (body bytes).
bench_start_sse_nginx() {
  mkdir -p "$work/html/v1/chat"
  bench_sse_body "$work/html/v1/chat/completions" 64
  size=$(stat -c %s "$work/html/v1/chat/completions")
  port=$(bench_free_port)
  bench_start_nginx "$work/html" "$port" "${1:-}"
}

# PIN=1 in the environment: nginx and the client share core 0 (sets
# pin=(taskset -c 0) to prefix client commands, and nginx_cpu=0); otherwise
# both are empty.
bench_pin_from_env() {
  pin=()
  nginx_cpu=""
  if [[ "${PIN:-0}" == 1 ]]; then
    pin=(taskset -c 0)
    nginx_cpu=0
  fi
}

# Starts `aiperf-node mock-server -p 0 ARGS...` and stores its port in PORTVAR.
bench_start_mock() {
  local var="$1" out="$work/mock-$RANDOM.out" i
  shift
  echo "+ $node mock-server -p 0 --log-level warning $*"
  "$node" mock-server -p 0 --log-level warning "$@" >"$out" 2>"$out.err" &
  bench_pids+=($!)
  for i in $(seq 1 200); do
    grep -q 'listening on' "$out" 2>/dev/null && break
    sleep 0.05
  done
  local url
  url="$(grep -o 'http://[^ ]*' "$out" | head -1)"
  [[ -n "$url" ]] || { echo "mock server did not start: $(cat "$out.err")" >&2; exit 2; }
  printf -v "$var" '%s' "${url##*:}"
}

bench_run() {
  echo "+ $*"
  "$@"
}

# Runs CMD under /usr/bin/time; writes "user_s sys_s" to OUT; CMD's stdout
# and stderr go to OUT.log.
bench_timed() {
  local out="$1"
  shift
  echo "+ /usr/bin/time -f '%U %S' $*" >&2
  /usr/bin/time -o "$out" -f '%U %S' "$@" >"$out.log" 2>&1 || {
    echo "command failed (exit $?): $*" >&2
    tail -20 "$out.log" >&2
    exit 1
  }
}

# Prints "req/s cpu_us_per_req" of a profile run, then "p50 p99" of each
# METRIC (in its unit), from the run's bench_timed file and the
# profile_export_aiperf.json under its artifact DIR; its errors and warnings
# go to stderr.
bench_profile_result() { # TIME DIR [METRIC...]
  local time="$1" dir="$2"
  shift 2
  python3 - "$time" "$(bench_export_dir "$dir")/profile_export_aiperf.json" "$@" <<'PY'
import json, sys
u, s = map(float, open(sys.argv[1]).read().split()[-2:])
d = json.load(open(sys.argv[2]))
n = d["request_count"]["avg"]
errs = sum(e.get("count", 0) for e in d.get("error_summary", []))
if errs: print(f"aiperf-node saw {errs} errors", file=sys.stderr)
for w in d.get("warnings", []): print("warning:", w, file=sys.stderr)
load = d.get("load", {})
if "mean_requests_in_flight" in load and "target_concurrency" in load:
    print(f"requests in flight at the server: {load['mean_requests_in_flight']:.1f} "
          f"of --concurrency {load['target_concurrency']}", file=sys.stderr)
out = [f"{d['request_throughput']['avg']:.1f}", f"{(u + s) / n * 1e6:.2f}"]
for m in sys.argv[3:]:
    out += [f"{d[m]['p50']:.3f}", f"{d[m]['p99']:.3f}"]
print(" ".join(out))
PY
}

# The directory holding profile_export_aiperf.json under an artifact dir.
bench_export_dir() {
  dirname "$(find "$1" -name profile_export_aiperf.json | head -1)"
}

# CPU seconds (user+sys) used so far by PID, from /proc/PID/stat.
bench_proc_cpu() {
  python3 - "$1" <<'PY'
import os, sys
f = open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")", 1)[1].split()
print((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"))
PY
}
