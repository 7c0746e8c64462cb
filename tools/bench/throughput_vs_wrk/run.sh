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
#   http_client_bench (aiperf-node's HTTP layer alone, no SSE parsing, no
#     actors; when built next to the binary or given as HTTP_BENCH_BIN)
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
bench_pin_from_env
bench_init

bench_start_sse_nginx "$nginx_cpu"
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

# aiperf-node's HTTP layer alone (runtime/http, one I/O thread, closed loop,
# no SSE parsing, no actors): splits our cost into "talking HTTP" and "the
# measurement pipeline". Skipped when the binary is not built.
http_bench="${HTTP_BENCH_BIN:-$(dirname "$node")/../bench/http_client_bench/http_client_bench}"
[[ -x "$http_bench" ]] || { echo "note: $http_bench not built; the HTTP-layer column is skipped" >&2; http_bench=""; }
run_http() { # -> "req/s cpu_us_per_req"
  local t="$work/http.time"
  bench_timed "$t" "${pin[@]}" "$http_bench" --url "$url/v1/chat/completions" \
    --connections 64 --duration "$duration" --body "$body"
  python3 - "$t" <<'PY'
import re, sys
u, s = map(float, open(sys.argv[1]).read().split()[-2:])
log = open(sys.argv[1] + ".log").read()
n = int(re.search(r"(\d+) requests in", log).group(1))
rps = float(re.search(r"req_per_s=([\d.]+)", log).group(1))
print(f"{rps:.1f} {(u + s) / n * 1e6:.2f}")
PY
}

# Warm-up + calibration: how many requests make ~DURATION seconds.
wrk_results=() ; def_results=() ; sum_results=() ; http_results=()
first=$(run_wrk)
requests="${REQUESTS:-$(python3 -c "print(max(1000, int(float('${first% *}') * $duration)))")}"
echo "calibration: wrk $first (req/s, CPU µs/req) -> --request-count $requests"
for r in $(seq 1 "$runs"); do
  w=$(run_wrk); o=$(run_ours default); s=$(run_ours summary)
  line="run $r: wrk ${w% *} req/s ${w#* } µs/req | aiperf-node (records) ${o% *} req/s ${o#* } µs/req | aiperf-node (summary) ${s% *} req/s ${s#* } µs/req"
  if [[ -n "$http_bench" ]]; then
    h=$(run_http); http_results+=("$h")
    line+=" | HTTP layer alone ${h% *} req/s ${h#* } µs/req"
  fi
  echo "$line"
  wrk_results+=("$w"); def_results+=("$o"); sum_results+=("$s")
done
python3 - "$(printf '%s;' "${wrk_results[@]}")" "$(printf '%s;' "${def_results[@]}")" "$(printf '%s;' "${sum_results[@]}")" "$(printf '%s;' "${http_results[@]}")" <<'PY'
import statistics, sys
def parse(s): return [tuple(map(float, x.split())) for x in s.split(";") if x]
w, d, s, h = (parse(a) for a in sys.argv[1:5])
med = lambda xs, i: statistics.median(x[i] for x in xs)
# Cores busy = req/s × CPU per request: a client that keeps one core busy
# whatever it does per request is co-limiting the run with the server (its
# CPU per request is then 1 core / req/s, see the README).
cores = lambda xs: statistics.median(x[0] * x[1] / 1e6 for x in xs)
wr, wc = med(w, 0), med(w, 1)
print(f"median wrk: {wr:.0f} req/s, {wc:.2f} µs CPU/req, {cores(w):.2f} cores busy")
arms = [("aiperf-node, export-level records (default)", d, True),
        ("aiperf-node, export-level summary", s, True)]
if h: arms.append(("aiperf-node's HTTP layer alone (http_client_bench, no SSE parsing, no actors)", h, False))
for name, xs, targeted in arms:
    r, c = med(xs, 0), med(xs, 1)
    goal = (", target ≥ 0.95", ", target ≤ 1.2") if targeted else ("", "")
    print(f"median {name}: {r:.0f} req/s ({r / wr:.3f}× wrk{goal[0]}), "
          f"{c:.2f} µs CPU/req ({c / wc:.2f}× wrk{goal[1]}), {cores(xs):.2f} cores busy")
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
