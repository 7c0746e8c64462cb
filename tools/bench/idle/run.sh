#!/usr/bin/env bash
# Idle cost: one profile process waiting on a server that never answers in
# time (`mock-server --ttft 60000`, 4 streams open, nothing to read). After a
# settling second, measures the process for SECONDS from /proc: CPU from
# /proc/PID/stat (utime + stime, % of one core) and context switches from
# /proc/PID/task/*/status (voluntary + nonvoluntary = wake-ups), per thread
# and in total. Target: < 0.5 % of a core and < 100 wake-ups/s.
#
#   tools/bench/idle/run.sh [aiperf-node] [SECONDS=10]
# Env: AIPERF_NODE_BIN (binary), PROFILE_ARGS (extra profile options).
# A benchmark: not run in CI.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
bench_find_node "${1:-}"
secs="${2:-10}"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [aiperf-node] [SECONDS=10]" >&2; exit 2; }
bench_init

bench_start_mock mport --ttft 60000
# shellcheck disable=SC2206 # PROFILE_ARGS: split into words on purpose
cmd=("$node" profile --url "http://127.0.0.1:$mport" --model mock-model --streaming
     --concurrency 4 --request-count 4 --ui none --request-timeout-seconds 600
     --output-artifact-dir "$work/artifacts" ${PROFILE_ARGS:-})
echo "+ ${cmd[*]}"
"${cmd[@]}" >"$work/profile.log" 2>&1 &
ppid=$!
bench_pids+=("$ppid")
sleep 1
kill -0 "$ppid" 2>/dev/null || { echo "profile exited early:" >&2; tail -20 "$work/profile.log" >&2; exit 1; }

# snapshot PID: "tid name csw" per thread, then "total cpu_ticks"
snap() {
  local t name v
  for t in /proc/"$1"/task/*; do
    name=$(cat "$t/comm" 2>/dev/null) || continue
    v=$(awk '/^voluntary_ctxt_switches/ {v=$2} /^nonvoluntary_ctxt_switches/ {n=$2} END {print v+n}' "$t/status" 2>/dev/null) || continue
    echo "${t##*/} ${name// /_} $v"
  done
  awk '{ sub(/.*\) /, ""); split($0, f, " "); print "total", f[12] + f[13] }' /proc/"$1"/stat
}
snap "$ppid" >"$work/before"
t0=$(date +%s.%N)
sleep "$secs"
snap "$ppid" >"$work/after"
t1=$(date +%s.%N)
kill -0 "$ppid" 2>/dev/null || { echo "profile exited during the measurement" >&2; exit 1; }

python3 - "$work/before" "$work/after" "$t0" "$t1" "$(getconf CLK_TCK)" <<'PY'
import sys
def load(p):
    threads, ticks = {}, 0
    for line in open(p):
        f = line.split()
        if f[0] == "total": ticks = int(f[1])
        else: threads[f[0]] = (f[1], int(f[2]))
    return threads, ticks
(b, bt), (a, at) = load(sys.argv[1]), load(sys.argv[2])
wall = float(sys.argv[4]) - float(sys.argv[3])
cpu = (at - bt) / int(sys.argv[5]) / wall * 100
total = 0.0
print(f"{'tid':>8} {'thread':<16} wake-ups/s")
for tid, (name, n) in sorted(a.items(), key=lambda kv: int(kv[0])):
    rate = (n - b.get(tid, (name, 0))[1]) / wall
    total += rate
    print(f"{tid:>8} {name:<16} {rate:10.1f}")
print(f"threads {len(a)}, measured {wall:.1f} s")
print(f"cpu {cpu:.2f} % of a core (target 0.5 %: x{cpu / 0.5:.2f})")
print(f"wake-ups {total:.0f}/s (target 100/s: x{total / 100:.2f})")
PY
