// Scanner vs RapidJSON on real-shaped chunks (Google Benchmark):
//   build/tools/bench/response_parser_bench/response_parser_bench
#include "actors/benchmark/worker/response_parser.hpp"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

using aiperf::proto::endpoint_kind;
using aiperf::worker::message_fields;
using aiperf::worker::response_parser;

const std::string vllm_chunk
  = R"({"id":"chatcmpl-7f2a9c","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]})";
const std::string openai_chunk
  = R"({"id":"chatcmpl-A","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" tok\"en\n"},"logprobs":null,"finish_reason":null}],"usage":null})";
const std::string usage_chunk
  = R"({"id":"chatcmpl-A","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":550,"completion_tokens":150,"total_tokens":700,"completion_tokens_details":{"reasoning_tokens":0}}})";

const std::string& pick(int i) {
  return i == 0 ? vllm_chunk : i == 1 ? openai_chunk : usage_chunk;
}

void bm_scanner(benchmark::State& state) {
  response_parser p;
  message_fields f;
  const auto& json = pick(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = p.parse(json, endpoint_kind::chat, f);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(f.content.data());
  }
  if (p.fallbacks() != 0)
    state.SkipWithError("scanner fell back");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * json.size()));
}

void bm_rapidjson(benchmark::State& state) {
  response_parser p;
  message_fields f;
  const auto& json = pick(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = p.parse_dom(json, endpoint_kind::chat, f);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(f.content.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * json.size()));
}

// 0 = vLLM content chunk, 1 = OpenAI chunk with escapes, 2 = usage-only
BENCHMARK(bm_scanner)->Arg(0)->Arg(1)->Arg(2);
BENCHMARK(bm_rapidjson)->Arg(0)->Arg(1)->Arg(2);

} // namespace

BENCHMARK_MAIN();
