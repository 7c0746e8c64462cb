// Builds a small BERT-style WordPiece tokenizer.json with Hugging Face's
// library itself (BertNormalizer, BertPreTokenizer, WordPiece, WordPiece
// decoder), so no vocabulary file is committed. The vocabulary comes from
// the corpus, deterministically: every character (and its ## form) of the
// lowercased, accent-stripped text, the words seen at least 10 times, and
// their 2..4-character endings as ## pieces.
// Usage: node make_wordpiece.mjs CORPUS_JSONL OUT_TOKENIZER_JSON
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const tk = require("tokenizers");

const [corpusPath, outPath] = process.argv.slice(2);
const texts = readFileSync(corpusPath, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
const clean = (s) => s.normalize("NFD").replace(/\p{Mn}/gu, "").toLowerCase();
const chars = new Set();
const words = new Map();
for (const t of texts) {
  const c = clean(t);
  for (const ch of c) chars.add(ch);
  for (const w of c.split(/[\s\p{P}]+/u)) if (w) words.set(w, (words.get(w) || 0) + 1);
}
const tokens = new Set(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]);
for (const ch of [...chars].sort()) {
  tokens.add(ch);
  tokens.add("##" + ch);
}
for (const [w, n] of [...words].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
  if (n < 10) continue;
  tokens.add(w);
  const cps = [...w];
  for (let k = 2; k <= 4 && k < cps.length; ++k) tokens.add("##" + cps.slice(cps.length - k).join(""));
}
const vocab = {};
let id = 0;
for (const t of tokens) vocab[t] = id++;
const tokenizer = new tk.Tokenizer(tk.WordPiece.init(vocab, { unkToken: "[UNK]" }));
tokenizer.setNormalizer(tk.bertNormalizer({ cleanText: true, handleChineseChars: true, lowercase: true }));
tokenizer.setPreTokenizer(tk.bertPreTokenizer());
tokenizer.setDecoder(tk.wordPieceDecoder("##", true));
tokenizer.addSpecialTokens(["[CLS]", "[SEP]", "[MASK]"]);
tokenizer.save(outPath, true);
