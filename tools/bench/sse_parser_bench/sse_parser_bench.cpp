// Throughput of the SSE parser on a realistic chat-completions stream: 64
// content chunks + a usage chunk + `data: [DONE]` (66 events, ~12 KB), fed in
// 64 KiB reads (one read per response, as the HTTP client does) and in
// 1.5 KiB reads (about one TCP segment: many events straddle reads).
// Variants: LF endings, CRLF endings (the CR-aware loop), and the mock
// server's `--stamp-events` comments.
//
// Events/s:      sse_parser_bench
// Instructions per event (no PMU needed; valgrind counts them):
//   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=cg.out
//     sse_parser_bench --instructions 65536 2000 lf
//   then divide the "totals:" line of cg.out by the events it printed.
#include "runtime/sse/sse_parser.hpp"

#include <benchmark/benchmark.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define AIPERF_CALLGRIND_START() CALLGRIND_START_INSTRUMENTATION
#define AIPERF_CALLGRIND_STOP() CALLGRIND_STOP_INSTRUMENTATION
#else
#define AIPERF_CALLGRIND_START() (void)0
#define AIPERF_CALLGRIND_STOP() (void)0
#endif

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using aiperf::sse::sse_event;
using aiperf::sse::sse_parser;

enum variant : int { lf = 0, crlf = 1, stamped = 2 };

constexpr std::size_t events_per_stream = 66;

std::string make_stream(variant v) {
  const std::string eol = v == crlf ? "\r\n" : "\n";
  std::string out;
  auto event = [&](std::string_view json, int i) {
    if (v == stamped)
      out += ": t="
             + std::to_string(1'700'000'000'000'000'000LL + i * 5'000'000LL)
             + eol;
    out += "data: ";
    out += json;
    out += eol;
    out += eol;
  };
  for (int i = 0; i < 64; ++i)
    event(R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,)"
          R"("model":"m","choices":[{"index":0,"delta":{"content":" word"},)"
          R"("finish_reason":null}]})",
          i);
  event(R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,)"
        R"("model":"m","choices":[],"usage":{"prompt_tokens":128,)"
        R"("completion_tokens":64,"total_tokens":192}})",
        64);
  event("[DONE]", 65);
  return out;
}

/// What a worker does per event at the least: look at it. Keeps the
/// compiler from deleting the parse.
struct sink {
  std::size_t events = 0;
  std::size_t bytes = 0;
  std::int64_t last_ts = 0;
  void operator()(const sse_event& e) noexcept {
    ++events;
    bytes += e.data.size() + e.comment.size();
    last_ts = e.ts_ns;
  }
};

[[gnu::noinline]] void parse_stream(sse_parser& parser, std::string_view stream,
                                    std::size_t read_size, sink& out) {
  std::int64_t ts = 0;
  for (std::size_t pos = 0; pos < stream.size(); pos += read_size)
    parser.feed(stream.substr(pos, read_size), ++ts, out);
  parser.reset();
}

void bm_parse(benchmark::State& state) {
  auto read_size = static_cast<std::size_t>(state.range(0));
  auto stream = make_stream(static_cast<variant>(state.range(1)));
  sse_parser parser;
  sink out;
  for (auto _ : state) {
    parse_stream(parser, stream, read_size, out);
    benchmark::DoNotOptimize(out);
  }
  if (out.events != events_per_stream * state.iterations())
    state.SkipWithError("wrong number of events");
  state.counters["events/s"] = benchmark::Counter(
      static_cast<double>(out.events), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(stream.size())
                          * state.iterations());
  state.SetLabel(std::to_string(stream.size()) + " B/stream");
}

BENCHMARK(bm_parse)
    ->ArgNames({"read", "variant"})
    ->ArgsProduct({{65536, 1536}, {lf, crlf, stamped}});

/// `--instructions <read_size> <streams> <lf|crlf|stamped>`: parses `streams`
/// streams with callgrind instrumentation on only around the parse loop.
int count_instructions(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: %s --instructions <read_size> <streams> "
                 "<lf|crlf|stamped>\n",
                 argv[0]);
    return 2;
  }
  auto read_size
      = static_cast<std::size_t>(std::strtoull(argv[2], nullptr, 10));
  auto streams = std::strtoull(argv[3], nullptr, 10);
  std::string_view name = argv[4];
  variant v = name == "crlf" ? crlf : name == "stamped" ? stamped : lf;
  if (read_size == 0 || streams == 0
      || (name != "lf" && name != "crlf" && name != "stamped")) {
    std::fprintf(stderr, "read_size and streams must be > 0 and the variant "
                         "one of lf, crlf, stamped\n");
    return 2;
  }
  auto stream = make_stream(v);
  sse_parser parser;
  sink out;
  parse_stream(parser, stream, read_size, out); // warm the buffers
  out = sink{};
  AIPERF_CALLGRIND_START();
  for (unsigned long long i = 0; i < streams; ++i)
    parse_stream(parser, stream, read_size, out);
  AIPERF_CALLGRIND_STOP();
  std::printf("events=%zu bytes_per_stream=%zu reads_per_stream=%zu\n",
              out.events, stream.size(),
              (stream.size() + read_size - 1) / read_size);
  return out.events == events_per_stream * streams ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view{argv[1]} == "--instructions")
    return count_instructions(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
