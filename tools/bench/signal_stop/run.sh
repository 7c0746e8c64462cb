#!/usr/bin/env bash
# Start-up under a signal: how long `profile` takes from SIGINT/SIGTERM to
# its exit while it builds a large dataset, against the 0.5 s bound
# (docs/profile.md, exit codes 130/143, nothing exported). Cases:
#   synthetic      --num-dataset-entries 1000 --isl 100000 (1e8 prompt tokens)
#   single_turn    an --input-file of SIZE_MB MiB of text lines (read, parsed,
#                  tokenized)
#   mooncake       an --input-file of 100 trace lines of 1,000,000 tokens each
#                  (prompts generated from the lengths, then tokenized)
# each signalled DELAYS seconds after the run printed its first line (the
# build starts right after it), so the signal lands in different phases.
# Prints per run: the phase time before the signal, signal -> exit, the exit
# code, whether inputs.json exists, and the time against the bound.
#
#   tools/bench/signal_stop/run.sh [aiperf-node]
# Env: AIPERF_NODE_BIN, DELAYS (default "0.2 1 2"), SIZE_MB (default 512),
#      SIGNAL (INT or TERM, default TERM), CASES (default all three).
# A benchmark: not run in CI.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
bench_find_node "${1:-}"
bench_init
delays="${DELAYS:-0.2 1 2}"
size_mb="${SIZE_MB:-512}"
sig="${SIGNAL:-TERM}"
cases="${CASES:-synthetic single_turn mooncake}"

echo "+ writing $work/single_turn.jsonl ($size_mb MiB) and $work/mooncake.jsonl"
python3 - "$work" "$size_mb" <<'PY'
import sys
work, size_mb = sys.argv[1], int(sys.argv[2])
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
text = " ".join(words[i % 8] for i in range(10000))  # ~60 KiB per line
line = '{"text": "' + text + '"}\n'
with open(f"{work}/single_turn.jsonl", "w") as f:
    for _ in range(size_mb * 1024 * 1024 // len(line)):
        f.write(line)
with open(f"{work}/mooncake.jsonl", "w") as f:
    for i in range(100):
        f.write('{"timestamp": %d, "input_length": 1000000, "output_length": 1}\n' % i)
PY

python3 - "$node" "$work" "$sig" "$delays" "$cases" <<'PY'
import os, signal, subprocess, sys, time
node, work, sig, delays, cases = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5].split()
signo = getattr(signal, "SIG" + sig)
expected = 128 + signo
bound = 0.5
args = {
    "synthetic": ["--num-dataset-entries", "1000", "--isl", "100000"],
    "single_turn": ["--input-file", f"{work}/single_turn.jsonl", "--custom-dataset-type", "single_turn"],
    "mooncake": ["--input-file", f"{work}/mooncake.jsonl", "--custom-dataset-type", "mooncake_trace"],
}
worst = 0.0
n = 0
for case in cases:
    for d in delays:
        art = f"{work}/artifacts-{case}-{d}"
        cmd = [node, "profile", "--model", "m", "--ui", "none", "--streaming", "--request-count", "4",
               "--output-artifact-dir", art] + args[case]
        print("+ " + " ".join(cmd) + f"   # SIG{sig} {d} s after the first line", flush=True)
        with open(f"{work}/{case}-{d}.err", "w") as err:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
            p.stdout.readline()
            started = time.monotonic()
            time.sleep(float(d))
            if p.poll() is not None:
                print(f"  {case:<12} ended before the signal (exit {p.returncode}): use a shorter delay")
                continue
            t0 = time.monotonic()
            p.send_signal(signo)
            code = p.wait()
            took = time.monotonic() - t0
        inputs = any(os.path.exists(os.path.join(r, "inputs.json")) for r, _, _ in os.walk(art))
        tail = open(f"{work}/{case}-{d}.err").read().strip().splitlines()
        worst = max(worst, took)
        n += 1
        ok = code == expected and not inputs and took <= bound
        print(f"  {case:<12} signalled {t0 - started:4.2f} s into the build: exit {code} in {took * 1e3:6.1f} ms "
              f"(bound {bound * 1e3:.0f} ms: x{took / bound:.2f}), inputs.json {'WRITTEN' if inputs else 'absent'}"
              f"{'' if ok else '  <-- FAILS'}  [{tail[-1][:90] if tail else ''}]", flush=True)
print(f"worst of {n} runs: {worst * 1e3:.1f} ms from SIG{sig} to exit (bound {bound * 1e3:.0f} ms: x{worst / bound:.2f})")
PY
