#!/usr/bin/env bash
# Rate adherence with the distributed runtime: benchmark 3
# (tools/bench/rate_adherence/run.sh) with each rate run both in one process
# and as `profile --worker-pods PODS`, so the cost of the process split shows.
#
# Usage: tools/bench/rate_adherence_pods/run.sh [path/to/aiperf-node]
#   env: RATES ("1000 5000"), DURATION (5), PODS (2)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODES="local pods" RATES="${RATES:-1000 5000}" exec "$here/../rate_adherence/run.sh" "$@"
