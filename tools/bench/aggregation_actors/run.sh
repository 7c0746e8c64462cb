#!/usr/bin/env bash
# Benchmark 5 — aggregation of 1,000,000 records (OSL 64: 63 ICL values each,
# every metric) through the shipped record_processor + records_manager actors
# to the summary exports, at --export-level summary and records (default).
# The reference in the same run is the pure records path
# (tools/bench/aggregation/aggregation_bench: compute_metrics + aggregator +
# finalize, no actors, no files); the ratio shows what the actor hops and the
# exports add. Target: < 2 s. Prints wall time, CPU time and peak RSS.
#
# Usage: tools/bench/aggregation_actors/run.sh [build-dir]
#   env: RECORDS (1000000)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
build="${1:-$root/build-bench}"
records="${RECORDS:-1000000}"
actors_bin="$build/tools/bench/aggregation_actors/aggregation_actors_bench"
pure_bin="$build/tools/bench/aggregation/aggregation_bench"
for b in "$actors_bin" "$pure_bin"; do
  [[ -x "$b" ]] || { echo "not built: $b (cmake --build $build --target aggregation_actors_bench aggregation_bench)" >&2; exit 2; }
done
run() { echo "+ $*" >&2; "$@"; }
pure=$(run "$pure_bin" "$records")
echo "$pure" | grep -E "total|peak RSS"
summ=$(run "$actors_bin" "$records" summary)
echo "$summ"
recs=$(run "$actors_bin" "$records" records)
echo "$recs"
python3 - "$pure" "$summ" "$recs" <<'PY'
import re, sys
m = re.search(r"total compute\+aggregate\+finalize: ([\d.]+) s wall, ([\d.]+) s CPU", sys.argv[1])
pure, pure_cpu = float(m.group(1)), float(m.group(2))
for name, out in (("summary", sys.argv[2]), ("records (default)", sys.argv[3])):
    m = re.search(r"exports: ([\d.]+) s wall, ([\d.]+) s CPU", out)
    wall, cpu = float(m.group(1)), float(m.group(2))
    rss = re.search(r"peak RSS: (\d+) MiB", out).group(1)
    print(f"actors, export level {name}: {wall:.3f} s ({wall / 2:.2f}× the 2 s target, "
          f"{wall / pure:.2f}× the pure path's {pure:.3f} s); CPU {cpu:.3f} s "
          f"({cpu / pure_cpu:.2f}× the pure path's {pure_cpu:.3f} s); peak RSS {rss} MiB")
PY
