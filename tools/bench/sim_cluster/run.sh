#!/usr/bin/env bash
# Benchmark of `aiperf-node sim-cluster` (not in CI). On a 2-core machine:
# wrk pinned to core 0, the simulator to core 1.
#   1. GET of one ConfigMap by name, keep-alive, 64 connections, over HTTP
#      and over HTTPS (bearer token); target >= 5,000 req/s.
#   2. 1,000 open watches (one per ConfigMap), 100 updates/s spread over
#      them: p50/p99 event delivery latency (watch_latency.py).
# Usage: run.sh path/to/aiperf-node [seconds per wrk run, default 10]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:?usage: run.sh path/to/aiperf-node [seconds]}"
secs="${2:-10}"
work="$(mktemp -d)"
trap 'kill "${sim:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

start_sim() { # $@: extra flags
  taskset -c 1 "$bin" sim-cluster --kubeconfig "$work/kc" "$@" >"$work/out" 2>"$work/err" &
  sim=$!
  for _ in $(seq 100); do [[ -s "$work/out" ]] && break; sleep 0.1; done
  url="$(sed 's/^listening on //' "$work/out")"
}
stop_sim() { kill "$sim"; wait "$sim" || true; sim=; }
cm='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench"},"data":{"a":"b"}}'

start_sim
curl -s -X POST -H 'Content-Type: application/json' -d "$cm" \
  "$url/api/v1/namespaces/default/configmaps" >/dev/null
echo "== GET one ConfigMap, HTTP, 64 connections, ${secs}s"
taskset -c 0 wrk -t1 -c64 -d"${secs}s" "$url/api/v1/namespaces/default/configmaps/bench"
port="${url##*:}"
echo "== 1,000 watches, 100 updates/s"
taskset -c 0 /usr/bin/python3 "$here/watch_latency.py" "$port" 1000 100 20
stop_sim

start_sim --tls
token="$(sed -n 's/^ *token: //p' "$work/kc")"
curl -sk -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d "$cm" "$url/api/v1/namespaces/default/configmaps" >/dev/null
echo "== GET one ConfigMap, HTTPS, 64 connections, ${secs}s"
taskset -c 0 wrk -t1 -c64 -d"${secs}s" -H "Authorization: Bearer $token" \
  "$url/api/v1/namespaces/default/configmaps/bench"
stop_sim
