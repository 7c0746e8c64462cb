// Hugging Face's tokenizers library (Rust, through napi) on every line of a
// corpus: one JSON object per input line, {"ids": [...], "decoded": "..."},
// no special tokens added and none skipped in decode, as runtime/tokenizer
// counts ISL.
// Usage: node oracle.mjs TOKENIZER_JSON CORPUS_JSONL OUT_JSONL
// With --time: encodes the corpus one string at a time on one thread and
// prints {"seconds": S, "tokens": N} instead (tools/bench/tokenizer).
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");

const args = process.argv.slice(2);
const timing = args[0] === "--time";
if (timing) args.shift();
const [tokenizerPath, corpusPath, outPath] = args;
const tokenizer = Tokenizer.fromFile(tokenizerPath);
const lines = readFileSync(corpusPath, "utf8").split("\n").filter((l) => l.length > 0);
const texts = lines.map((l) => JSON.parse(l));
const options = { addSpecialTokens: false };

if (timing) {
  let tokens = 0;
  const start = process.hrtime.bigint();
  for (const t of texts) tokens += (await tokenizer.encode(t, null, options)).getIds().length;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ seconds, tokens }));
} else {
  const encodings = await tokenizer.encodeBatch(texts, options);
  const ids = encodings.map((e) => e.getIds());
  const decoded = await tokenizer.decodeBatch(ids, false);
  const out = ids.map((v, i) => JSON.stringify({ ids: v, decoded: decoded[i] }));
  writeFileSync(outPath, out.join("\n") + "\n");
}
