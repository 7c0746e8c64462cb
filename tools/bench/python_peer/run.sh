#!/usr/bin/env bash
# Python peer: what a Python streaming client costs, and what it reports.
#
# nginx (1 worker) serves benchmark 1's static chat-completions SSE body (64
# content events) on loopback. Alternating runs of
#   peer.py --concurrency 64 (uvloop when installed + aiohttp, json.loads
#     per event: the floor of a Python client such as AIPerf's workers)
#   aiperf-node profile --streaming --concurrency 64 (as fast as it goes)
#   aiperf-node profile --streaming --concurrency 64 --request-rate <the
#     peer's req/s>: the same server at the same load
# each under /usr/bin/time. Prints req/s, client CPU per request, and TTFT
# p50/p99: the peer's against ours at the same request rate shows how much of
# what a saturated Python client reports is its own event loop.
#
# Usage: tools/bench/python_peer/run.sh [path/to/aiperf-node]
#   env: RUNS (3), PEER_REQUESTS (5000)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../lib/common.sh"
bench_need /usr/sbin/nginx /usr/bin/time python3
/usr/bin/python3 -c 'import aiohttp' 2>/dev/null \
  || { echo "missing: python3-aiohttp (Debian package; tools/bootstrap installs it)" >&2; exit 2; }
bench_find_node "${1:-}"
runs="${RUNS:-3}"
peer_requests="${PEER_REQUESTS:-5000}"
bench_init

bench_start_sse_nginx
url="http://127.0.0.1:$port"
echo "nginx (1 worker) serving benchmark 1's SSE body at $url; $runs alternating runs"

run_peer() { # -> "req/s cpu_us_per_req ttft_p50 ttft_p99"
  local t="$work/peer.time"
  bench_timed "$t" /usr/bin/python3 "$here/peer.py" "$url/v1/chat/completions" \
    --requests "$peer_requests" --concurrency 64
  /usr/bin/python3 - "$t" <<'PY'
import json, sys
u, s = map(float, open(sys.argv[1]).read().split()[-2:])
r = json.loads(open(sys.argv[1] + ".log").read().strip().splitlines()[-1])
if r["errors"]: print(f"peer saw {r['errors']} errors", file=sys.stderr)
open(sys.argv[1] + ".loop", "w").write(r["loop"])
print(f"{r['req_per_s']:.1f} {(u + s) / r['requests'] * 1e6:.1f} {r['ttft_ms_p50']:.3f} {r['ttft_ms_p99']:.3f}")
PY
}

run_ours() { # requests [extra args] -> "req/s cpu_us_per_req ttft_p50 ttft_p99"
  local n="$1" t="$work/ours.time" dir="$work/art-$RANDOM"
  shift
  bench_timed "$t" "$node" profile --model mock-model --url "$url" --streaming --isl 64 --osl 16 \
    --concurrency 64 --request-count "$n" --output-artifact-dir "$dir" "$@"
  bench_profile_result "$t" "$dir" time_to_first_token
  rm -rf "$dir"
}

peer=() ; fast=() ; same=()
for r in $(seq 1 "$runs"); do
  p=$(run_peer)
  rate=${p%% *}
  # ~5 s of full speed; at the peer's rate, as many requests as it sent.
  f=$(run_ours 200000)
  s=$(run_ours "$peer_requests" --request-rate "$rate")
  echo "run $r: peer $p | aiperf-node $f | aiperf-node at ${rate} req/s $s   (req/s, CPU µs/req, TTFT p50 p99 ms)"
  peer+=("$p"); fast+=("$f"); same+=("$s")
done
echo "the peer ran on $(cat "$work/peer.time.loop")"
/usr/bin/python3 - "$(printf '%s;' "${peer[@]}")" "$(printf '%s;' "${fast[@]}")" "$(printf '%s;' "${same[@]}")" <<'PY'
import statistics, sys
def parse(s): return [tuple(map(float, x.split())) for x in s.split(";") if x]
p, f, s = (parse(a) for a in sys.argv[1:4])
med = lambda xs, i: statistics.median(x[i] for x in xs)
print(f"median Python peer: {med(p, 0):.0f} req/s, {med(p, 1):.0f} µs CPU/req, "
      f"TTFT p50 {med(p, 2):.3f} / p99 {med(p, 3):.3f} ms")
print(f"median aiperf-node: {med(f, 0):.0f} req/s ({med(f, 0) / med(p, 0):.1f}× the peer), "
      f"{med(f, 1):.1f} µs CPU/req (the peer uses {med(p, 1) / med(f, 1):.0f}× as much)")
print(f"median aiperf-node at the peer's rate: TTFT p50 {med(s, 2):.3f} / p99 {med(s, 3):.3f} ms "
      f"(the peer reports {med(p, 2) / med(s, 2):.0f}× / {med(p, 3) / med(s, 3):.0f}× that for the same server and load)")
PY
