#!/usr/bin/env bash
# Benchmark 1 — throughput vs the physical limit.
#
# nginx (1 worker) serves a static chat-completions SSE body (64 content
# events + usage + [DONE], ~11 KB) on loopback; POST is answered with the file.
# Alternating runs of
#   wrk -t2 -c64 -d${DURATION}s (POST)                            reference
#   aiperf-node profile --streaming --concurrency 64 --isl 64 --osl 16
#     --request-count <~DURATION s worth>  at the default export level
#   aiperf-node profile ... --export-level summary
# each under /usr/bin/time. Prints req/s (ours: request_throughput from
# profile_export_aiperf.json, i.e. every SSE event parsed, every metric
# computed) and client CPU per request ((user+sys)/requests, whole process
# including start-up and exports), medians, and the ratios ours/wrk.
# With PIN=1 nginx and the client are pinned to the same core (taskset -c 0),
# where client cost shows directly as lost throughput.
#
# Artifacts (the default level writes ~1.8 KB of JSONL per request) go under
# $TMPDIR: on a VM disk their writeback competes with nginx for the cores, so
# TMPDIR=/dev/shm measures the client (its own write cost is still counted).
#
# Usage: tools/bench/throughput_vs_wrk/run.sh [path/to/aiperf-node]
#   env: RUNS (3), DURATION (10), PIN (0|1), REQUESTS (default: wrk's req/s × DURATION)
# Targets: req/s ≥ 0.95× wrk; CPU per request ≤ 1.2× wrk.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib/common.sh"
bench_need wrk python3 /usr/sbin/nginx /usr/bin/time taskset
bench_find_node "${1:-}"
runs="${RUNS:-3}"
duration="${DURATION:-10}"
pin=()
nginx_cpu=""
if [[ "${PIN:-0}" == 1 ]]; then
  pin=(taskset -c 0)
  nginx_cpu=0
fi
bench_init

mkdir -p "$work/html/v1/chat"
bench_sse_body "$work/html/v1/chat/completions" 64
size=$(stat -c %s "$work/html/v1/chat/completions")
port=$(bench_free_port)
bench_start_nginx "$work/html" "$port" "$nginx_cpu"
url="http://127.0.0.1:$port"

body='{"model":"mock-model","messages":[{"role":"user","content":"Tell me a story"}],"max_completion_tokens":16,"stream":true}'
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA

echo "nginx (1 worker${nginx_cpu:+, cpu $nginx_cpu}) serving $size bytes of SSE at $url; $runs alternating runs, ~${duration}s each; client ${pin[*]:-unpinned}"

run_wrk() { # -> "req/s cpu_us_per_req"
  local t="$work/wrk.time"
  bench_timed "$t" "${pin[@]}" wrk -t2 -c64 -d"${duration}s" -s "$work/post.lua" "$url/v1/chat/completions"
  python3 - "$t" <<'PY'
import re, sys
u, s = map(float, open(sys.argv[1]).read().split()[-2:])
log = open(sys.argv[1] + ".log").read()
n = int(re.search(r"(\d+) requests in", log).group(1))
rps = float(re.search(r"Requests/sec:\s*([\d.]+)", log).group(1))
errs = re.search(r"Non-2xx or 3xx responses: (\d+)", log)
if errs: print(f"wrk saw {errs.group(1)} non-2xx responses", file=sys.stderr)
print(f"{rps:.1f} {(u + s) / n * 1e6:.2f}")
PY
}

run_ours() { # level -> "req/s cpu_us_per_req"
  local level="$1" t="$work/ours-$1.time" dir="$work/art-$1-$RANDOM"
  local args=(profile --model mock-model --url "$url" --streaming --isl 64 --osl 16
              --concurrency 64 --request-count "$requests" --output-artifact-dir "$dir")
  [[ "$level" != default ]] && args+=(--export-level "$level")
  bench_timed "$t" "${pin[@]}" "$node" "${args[@]}"
  bench_profile_result "$t" "$dir"
  rm -rf "$dir"
}

# Warm-up + calibration: how many requests make ~DURATION seconds.
wrk_results=() ; def_results=() ; sum_results=()
first=$(run_wrk)
requests="${REQUESTS:-$(python3 -c "print(max(1000, int(float('${first% *}') * $duration)))")}"
echo "calibration: wrk $first (req/s, CPU µs/req) -> --request-count $requests"
for r in $(seq 1 "$runs"); do
  w=$(run_wrk); o=$(run_ours default); s=$(run_ours summary)
  echo "run $r: wrk ${w% *} req/s ${w#* } µs/req | aiperf-node (records) ${o% *} req/s ${o#* } µs/req | aiperf-node (summary) ${s% *} req/s ${s#* } µs/req"
  wrk_results+=("$w"); def_results+=("$o"); sum_results+=("$s")
done
python3 - "$(printf '%s;' "${wrk_results[@]}")" "$(printf '%s;' "${def_results[@]}")" "$(printf '%s;' "${sum_results[@]}")" <<'PY'
import statistics, sys
def parse(s): return [tuple(map(float, x.split())) for x in s.split(";") if x]
w, d, s = (parse(a) for a in sys.argv[1:4])
med = lambda xs, i: statistics.median(x[i] for x in xs)
wr, wc = med(w, 0), med(w, 1)
print(f"median wrk: {wr:.0f} req/s, {wc:.2f} µs CPU/req")
for name, xs in (("export-level records (default)", d), ("export-level summary", s)):
    r, c = med(xs, 0), med(xs, 1)
    print(f"median aiperf-node, {name}: {r:.0f} req/s ({r / wr:.3f}× wrk, target ≥ 0.95), "
          f"{c:.2f} µs CPU/req ({c / wc:.2f}× wrk, target ≤ 1.2)")
    # Each run against the wrk run just before it: the spread shows how much
    # of a difference the machine's own drift can hide, and the median of
    # these paired ratios is less sensitive to that drift than the ratio of
    # the medians above.
    cpu = sorted(x[1] / y[1] for x, y in zip(xs, w))
    rps = sorted(x[0] / y[0] for x, y in zip(xs, w))
    print(f"  per run vs the wrk run before it: req/s {rps[0]:.3f}–{rps[-1]:.3f}× "
          f"(median {statistics.median(rps):.3f}×), CPU/req {cpu[0]:.2f}–{cpu[-1]:.2f}× "
          f"(median {statistics.median(cpu):.2f}×)")
PY
