#!/usr/bin/env bash
# Open streams: N concurrent SSE streams from ONE aiperf-node profile process
# against `aiperf-node mock-server --ttft 1000 --itl 500` (osl 20: each stream
# stays open ~10.5 s). Reports the client's peak RSS and RSS per stream (the
# delta against a small baseline run), the peak kernel TCP memory from
# /proc/net/sockstat, and whether every stream completed (N records, 0 errors).
#
#   tools/bench/open_streams/run.sh [N=20000] [baseline=100]
# Env: AIPERF_NODE (binary), MOCK_WORKERS (mock io threads, default 2),
#      IO_THREADS (client io threads, default 1), OUT (results dir).
#
# The profile process is started with the default open-file limit on purpose:
# the HTTP client raises RLIMIT_NOFILE itself. The mock server gets a raised
# limit from this script (it is the system under test's stand-in, not ours).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
bin="${AIPERF_NODE:-$root/build/tools/aiperf-node/aiperf-node}"
n="${1:-20000}"
base_n="${2:-100}"
mock_workers="${MOCK_WORKERS:-2}"
io_threads="${IO_THREADS:-1}"
out="${OUT:-/tmp/open_streams}"
[[ -x "$bin" ]] || { echo "error: $bin not built (tools/build --target aiperf-node)" >&2; exit 1; }
for v in "$n" "$base_n"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$v' is not a stream count; usage: $0 [N=20000] [baseline=100] (the binary goes in AIPERF_NODE)" >&2; exit 2; }
done
mkdir -p "$out"

port=$((20000 + RANDOM % 10000))
( ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  exec "$bin" mock-server --port "$port" --ttft 1000 --itl 500 \
    --workers "$mock_workers" --log-level warning ) >"$out/mock.log" 2>&1 &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  curl -s -o /dev/null "http://127.0.0.1:$port/v1/models" 2>/dev/null && break
  sleep 0.1
done

tcp_mem_pages() { awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "mem") print $(i+1) }' /proc/net/sockstat; }
tcp_inuse() { awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "inuse") print $(i+1) }' /proc/net/sockstat; }

# run <streams> <tag>: prints "peak_rss_kib peak_tcp_mem_pages peak_inuse records errors wall_s"
run() {
  local streams="$1" tag="$2" dir="$out/$2"
  rm -rf "$dir"
  local start; start=$(date +%s.%N)
  /usr/bin/time -v -o "$out/$tag.time" "$bin" profile --model m --tokenizer whitespace8 \
    --url "http://127.0.0.1:$port" --streaming --isl 16 --osl 20 \
    --concurrency "$streams" --request-count "$streams" \
    --io-threads "$io_threads" --request-timeout-seconds 600 \
    --output-artifact-dir "$dir" >"$out/$tag.log" 2>&1 &
  local pid=$! mem=0 inuse=0
  while kill -0 "$pid" 2>/dev/null; do
    local m i; m=$(tcp_mem_pages); i=$(tcp_inuse)
    (( m > mem )) && mem=$m
    (( i > inuse )) && inuse=$i
    sleep 0.5
  done
  local rc=0; wait "$pid" || rc=$?
  local end; end=$(date +%s.%N)
  local rss; rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/$tag.time")
  local jsonl; jsonl=$(find "$dir" -name 'profile_export.jsonl' | head -1)
  local records=0 errors=0
  if [[ -n "$jsonl" ]]; then
    records=$(wc -l <"$jsonl")
    errors=$(grep -c '"error":{' "$jsonl" || true)
  fi
  [[ $rc -eq 0 ]] || echo "warning: profile exited $rc (see $out/$tag.log)" >&2
  echo "$rss $mem $inuse $records $errors $(echo "$end - $start" | bc)"
}

read -r b_rss b_mem b_inuse b_rec b_err b_wall < <(run "$base_n" base)
read -r rss mem inuse rec err wall < <(run "$n" big)
page_kib=$(( $(getconf PAGESIZE) / 1024 ))
per_stream=$(echo "scale=2; ($rss - $b_rss) / ($n - $base_n)" | bc)
{
  echo "open_streams: $n streams (baseline $base_n), mock --ttft 1000 --itl 500, osl 20"
  echo "  client peak RSS:        $rss KiB   (baseline $b_rss KiB)"
  echo "  RSS per stream:         $per_stream KiB   (target < 20)"
  echo "  kernel TCP memory peak: $((mem * page_kib)) KiB ($mem pages, both ends; /proc/net/sockstat)"
  echo "  TCP sockets in use peak: $inuse"
  echo "  records: $rec / $n, error records: $err, wall: ${wall}s"
  if [[ "$rec" -eq "$n" && "$err" -eq 0 ]]; then echo "  every stream completed"; else echo "  NOT every stream completed"; fi
} | tee "$out/summary.txt"
