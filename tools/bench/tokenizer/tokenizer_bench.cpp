// Encodes every line of a corpus (one JSON string per line) one string at a
// time on one thread, as oracle.mjs --time does with Hugging Face's library,
// and prints {"seconds": S, "tokens": N}: the loading time is not counted.
// Usage: tokenizer_bench TOKENIZER_JSON CORPUS_JSONL
#include "runtime/tokenizer/hf_tokenizer.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER_JSON CORPUS_JSONL\n", argv[0]);
    return 2;
  }
  auto tok = aiperf::tokenizer::hf_tokenizer::from_file(argv[1]);
  if (!tok) {
    std::fprintf(stderr, "error: %s\n",
                 aiperf::error_message(tok.error()).c_str());
    return 1;
  }
  std::vector<std::string> texts;
  std::ifstream in(argv[2]);
  std::string line;
  try {
    while (std::getline(in, line))
      if (!line.empty())
        texts.push_back(nlohmann::json::parse(line).get<std::string>());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s: %s\n", argv[2], e.what());
    return 1;
  }
  std::size_t tokens = 0;
  auto start = std::chrono::steady_clock::now();
  for (const auto& t : texts)
    tokens += tok->count(t);
  std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
  std::printf("{\"seconds\": %.6f, \"tokens\": %zu}\n", s.count(), tokens);
  return 0;
}
