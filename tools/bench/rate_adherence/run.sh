#!/usr/bin/env bash
# Benchmark 3 — rate adherence.
#
# `aiperf-node mock-server --fast` (answers at once) driven by
#   aiperf-node profile --streaming --isl 64 --osl 16 --request-rate R
#     --arrival-pattern poisson --request-count R·DURATION
# for R in 1000, 5000, 10000 req/s. The reference is the target rate R;
# prints achieved rate / target and the p50/p99 send lag (actual − intended
# send time) from profile_export_aiperf.json's "load" object, plus the CPU
# the client and the mock used (cores = CPU s / wall s) so a shortfall can be
# attributed. Target: ≥ 99 % of 10k req/s with p99 send lag < 200 µs.
#
# With MODES="local pods" each rate also runs as `--worker-pods PODS` (one
# controller and PODS worker processes linked by the ZMQ bridge; send lag on
# the controller's clock: one host = one monotonic clock), next to the same
# run in one process; the client CPU is then the whole process tree's.
#
# Usage: tools/bench/rate_adherence/run.sh [path/to/aiperf-node]
#   env: RATES ("1000 5000 10000"), DURATION (5 seconds of schedule per rate),
#        MODES ("local"), PODS (2)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib/common.sh"
bench_need python3 /usr/bin/time
bench_find_node "${1:-}"
rates="${RATES:-1000 5000 10000}"
duration="${DURATION:-5}"
modes="${MODES:-local}"
pods="${PODS:-2}"
bench_init

bench_start_mock port --fast
mock_pid="${bench_pids[-1]}"
url="http://127.0.0.1:$port"
cores=$(nproc)

for rate in $rates; do
  for mode in $modes; do
    n=$(( rate * duration ))
    dir="$work/art-$rate-$mode"
    extra=()
    [[ $mode == pods ]] && extra=(--worker-pods "$pods" --workers-max "$pods")
    mock_before=$(bench_proc_cpu "$mock_pid")
    t0=$(date +%s.%N)
    bench_timed "$work/r$rate$mode.time" "$node" profile --model mock-model --url "$url" \
      --streaming --isl 64 --osl 16 --request-rate "$rate" --arrival-pattern poisson \
      --request-count "$n" --random-seed 1 --output-artifact-dir "$dir" "${extra[@]}"
    t1=$(date +%s.%N)
    mock_after=$(bench_proc_cpu "$mock_pid")
    python3 - "$(bench_export_dir "$dir")" "$rate" "$n" "$work/r$rate$mode.time" "$t0" "$t1" \
      "$mock_before" "$mock_after" "$cores" "$mode" <<'PY'
import json, sys
d, rate, n, tfile, t0, t1, mb, ma, cores, mode = sys.argv[1:]
rate, n = float(rate), int(n)
s = json.load(open(d + "/profile_export_aiperf.json"))
load = s.get("load", {})
u, sy = map(float, open(tfile).read().split()[-2:])
wall = float(t1) - float(t0)
achieved = load.get("achieved_request_rate", float("nan"))
target = load.get("target_request_rate", rate)
p50 = load.get("send_lag_p50_ms"); p99 = load.get("send_lag_p99_ms")
fmt = lambda v: f"{v * 1000:.1f} µs" if v is not None else "n/a"
errs = sum(e.get("count", 0) for e in s.get("error_summary", []))
print(f"{mode:>5} rate {target:>7.0f}/s: achieved {achieved:9.1f}/s = {achieved / target:.4f}× target (≥ 0.99); "
      f"send lag p50 {fmt(p50)}, p99 {fmt(p99)} (< 200 µs); "
      f"client {(u + sy) / wall:.2f} cores, mock {(float(ma) - float(mb)) / wall:.2f} cores of {cores} "
      f"(process wall {wall:.1f} s, {n} requests)" + (f" [{errs} errors]" if errs else ""))
for w in s.get("warnings", []):
    if "output length" not in w and "built-in tokenizer" not in w: print("  warning:", w)
PY
    rm -rf "$dir"
  done
done
