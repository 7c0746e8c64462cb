#!/usr/bin/env bash
# Benchmark 1's elasticity experiment: does client CPU per request follow the
# work the client does per request? Builds aiperf-node with busy_wait.patch
# (the I/O thread burns BUSY_WAIT_NS of CPU in every request's completion;
# the shipped binary has no such path) from a copy of HEAD, then runs
# benchmark 1's profile command against benchmark 1's nginx body, alternating
# BUSY_WAIT_NS = 0, 2000 and 5000, unpinned and (PIN=1) with nginx and the
# client on one core. Prints median CPU per request and req/s per setting.
#
# A client whose CPU per request stays put while it burns 5 µs more per
# request is not limited by its own work: it keeps one core busy whatever it
# does (see "Where benchmark 1's CPU goes" in the README).
#
# Usage: tools/bench/throughput_vs_wrk/busy_wait.sh
#   env: RUNS (5), REQUESTS (150000), PIN (0|1), KEEP_BUILD (reuse $BUILD)
#        BUILD (default /tmp/aiperf-busy-wait: source copy + build dir)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib/common.sh"
bench_need git patch cmake python3 /usr/sbin/nginx /usr/bin/time taskset
runs="${RUNS:-5}"
requests="${REQUESTS:-150000}"
build="${BUILD:-/tmp/aiperf-busy-wait}"
node="$build/build/tools/aiperf-node/aiperf-node"

if [[ -z "${KEEP_BUILD:-}" || ! -x "$node" ]]; then
  rm -rf "$build"
  mkdir -p "$build/src"
  echo "+ git -C $bench_root archive HEAD | tar -x -C $build/src"
  git -C "$bench_root" archive HEAD | tar -x -C "$build/src"
  bench_run patch -d "$build/src" -p1 -i "$here/busy_wait.patch"
  bench_run cmake -S "$build/src" -B "$build/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  bench_run cmake --build "$build/build" -j2 --target aiperf-node >/dev/null
fi

bench_pin_from_env
bench_init
bench_start_sse_nginx "$nginx_cpu"
echo "client ${pin[*]:-unpinned}; $runs alternating runs of $requests requests per setting"

declare -A res
for r in $(seq 1 "$runs"); do
  for ns in 0 2000 5000; do
    t="$work/busy-$ns.time" dir="$work/art-$ns"
    bench_timed "$t" env BUSY_WAIT_NS="$ns" "${pin[@]}" "$node" profile \
      --model mock-model --url "http://127.0.0.1:$port" --streaming --isl 64 \
      --osl 16 --concurrency 64 --request-count "$requests" \
      --output-artifact-dir "$dir"
    res[$ns]+="$(bench_profile_result "$t" "$dir");"
    rm -rf "$dir"
  done
  echo "run $r of $runs done"
done
python3 - "${res[0]}" "${res[2000]}" "${res[5000]}" <<'PY'
import statistics, sys
rows = [[tuple(map(float, x.split())) for x in a.split(";") if x] for a in sys.argv[1:4]]
base = statistics.median(x[1] for x in rows[0])
for ns, xs in zip((0, 2000, 5000), rows):
    c = statistics.median(x[1] for x in xs)
    r = statistics.median(x[0] for x in xs)
    cores = statistics.median(x[0] * x[1] / 1e6 for x in xs)
    print(f"BUSY_WAIT_NS={ns:>4}: {r:.0f} req/s, {c:.2f} µs CPU/req "
          f"({c - base:+.2f} µs for {ns / 1000:.0f} µs burnt), {cores:.2f} cores busy")
PY
