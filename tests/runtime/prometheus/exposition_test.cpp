// The exposition parser over texts in the shapes inference servers answer:
// prometheus_client (vLLM, SGLang: counters as _total with a _created
// companion, histograms as _bucket/_sum/_count), OpenMetrics (# EOF,
// # UNIT, exemplars, timestamps in seconds) and hand-written edge cases.
#include "runtime/prometheus/exposition.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace aiperf::prometheus {
namespace {

const family* find(const std::vector<family>& fs, std::string_view name) {
  for (const auto& f : fs)
    if (f.name == name)
      return &f;
  return nullptr;
}

// The shape prometheus_client writes for vLLM's engine metrics (metric
// names as vLLM's V1 engine registers them).
constexpr std::string_view vllm_text = R"(# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 1234.0
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-0.6B"} 12.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-0.6B"} 0.4508602
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 4.2421665e+07
# HELP vllm:prompt_tokens_created Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7592e+09
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="Qwen/Qwen3-0.6B"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="Qwen/Qwen3-0.6B"} 40.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="1.0",model_name="Qwen/Qwen3-0.6B"} 90.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="Qwen/Qwen3-0.6B"} 100.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="Qwen/Qwen3-0.6B"} 100.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="Qwen/Qwen3-0.6B"} 23.5
)";

TEST(exposition, families_of_a_prometheus_client_text) {
  auto fs = parse_exposition(vllm_text);
  ASSERT_TRUE(fs) << error_message(fs.error());
  ASSERT_EQ(fs->size(), 6u);
  auto* running = find(*fs, "vllm:num_requests_running");
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(running->type, metric_type::gauge);
  EXPECT_EQ(running->help, "Number of requests in model execution batches.");
  ASSERT_EQ(running->samples.size(), 1u);
  EXPECT_EQ(running->samples[0].value, 12.0);
  ASSERT_NE(running->samples[0].label("model_name"), nullptr);
  EXPECT_EQ(*running->samples[0].label("model_name"), "Qwen/Qwen3-0.6B");
  EXPECT_EQ(running->samples[0].label("absent"), nullptr);
  auto* prompt = find(*fs, "vllm:prompt_tokens_total");
  ASSERT_NE(prompt, nullptr);
  EXPECT_EQ(prompt->type, metric_type::counter);
  EXPECT_DOUBLE_EQ(prompt->samples[0].value, 4.2421665e+07);
  auto* ttft = find(*fs, "vllm:time_to_first_token_seconds");
  ASSERT_NE(ttft, nullptr);
  EXPECT_EQ(ttft->type, metric_type::histogram);
  ASSERT_EQ(ttft->samples.size(), 6u);
  EXPECT_EQ(ttft->samples[3].name, "vllm:time_to_first_token_seconds_bucket");
  EXPECT_EQ(*ttft->samples[3].label("le"), "+Inf");
  EXPECT_EQ(ttft->samples[5].name, "vllm:time_to_first_token_seconds_sum");
  EXPECT_EQ(ttft->samples[5].value, 23.5);
}

TEST(exposition, open_metrics_units_exemplars_timestamps_and_eof) {
  constexpr std::string_view text = R"(# TYPE dynamo_requests counter
# UNIT dynamo_requests requests
# HELP dynamo_requests Requests served.
dynamo_requests_total{model="m"} 17 1700000000.250 # {trace_id="abc"} 1 1700000000.1
dynamo_requests_created{model="m"} 1700000000
# TYPE dynamo_latency_seconds summary
dynamo_latency_seconds{quantile="0.5"} 0.2
dynamo_latency_seconds{quantile="0.99"} NaN
dynamo_latency_seconds_sum 4
dynamo_latency_seconds_count 20
# EOF
)";
  auto fs = parse_exposition(text);
  ASSERT_TRUE(fs) << error_message(fs.error());
  ASSERT_EQ(fs->size(), 2u);
  const auto& req = (*fs)[0];
  EXPECT_EQ(req.type, metric_type::counter);
  EXPECT_EQ(req.unit, "requests");
  EXPECT_EQ(req.help, "Requests served.");
  ASSERT_EQ(req.samples.size(), 2u);
  EXPECT_EQ(req.samples[0].value, 17);
  ASSERT_TRUE(req.samples[0].timestamp_ms);
  EXPECT_EQ(*req.samples[0].timestamp_ms, 1700000000250); // seconds -> ms
  const auto& lat = (*fs)[1];
  EXPECT_EQ(lat.type, metric_type::summary);
  ASSERT_EQ(lat.samples.size(), 4u);
  EXPECT_TRUE(std::isnan(lat.samples[1].value));
}

TEST(exposition, escapes_spacing_infinities_and_untyped_samples) {
  constexpr std::string_view text
      = "# HELP odd A help with a \\\\ and a\\nnewline.\n"
        "odd{path=\"C:\\\\x\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",} -Inf\r\n"
        "\n"
        "  spaced { a = \"1\" , b=\"2\" }  +Inf  1700000000000\n"
        "nolabels 3e-3\n";
  auto fs = parse_exposition(text);
  ASSERT_TRUE(fs) << error_message(fs.error());
  ASSERT_EQ(fs->size(), 3u);
  const auto& odd = (*fs)[0];
  EXPECT_EQ(odd.type, metric_type::untyped);
  EXPECT_EQ(odd.help, "A help with a \\ and a\nnewline.");
  ASSERT_EQ(odd.samples.size(), 1u);
  EXPECT_EQ(*odd.samples[0].label("path"), "C:\\x");
  EXPECT_EQ(*odd.samples[0].label("quote"), "say \"hi\"");
  EXPECT_EQ(*odd.samples[0].label("nl"), "a\nb");
  EXPECT_TRUE(std::isinf(odd.samples[0].value) && odd.samples[0].value < 0);
  const auto& spaced = (*fs)[1];
  ASSERT_EQ(spaced.samples[0].labels.size(), 2u);
  EXPECT_EQ(spaced.samples[0].labels[1].second, "2");
  EXPECT_TRUE(std::isinf(spaced.samples[0].value));
  EXPECT_EQ(*spaced.samples[0].timestamp_ms, 1700000000000); // 0.0.4: ms
  EXPECT_DOUBLE_EQ((*fs)[2].samples[0].value, 0.003);
}

TEST(exposition, malformed_lines_name_the_line_and_the_fault) {
  struct bad_case {
    std::string_view text;
    std::string_view message;
  };
  const bad_case cases[] = {
      {"a 1\nb{x=1} 2\n", "line 2: the value of label x is not quoted"},
      {"a{x=\"1\" 2\n", "line 1: labels must be separated by ',' and closed by '}'"},
      {"a{x=\"1\\q\"} 2\n", "line 1: label x has an invalid escape '\\q'"},
      {"a{x=\"1\",x=\"2\"} 2\n", "line 1: label x is given twice"},
      {"a{x=\"1} 2\n", "line 1: the value of label x is not closed"},
      {"a one\n", "line 1: the value of a is not a number: 'one'"},
      {"a\n", "line 1: the value of a is not a number: ''"},
      {"a 1 soon\n", "line 1: the timestamp of a is not a number: 'soon'"},
      {"a 1 2 3\n", "line 1: unexpected text after the value of a: '3'"},
      {"9a 1\n", "line 1: a sample needs a metric name first, got '9a 1'"},
      {"# TYPE a gauge\n# TYPE a counter\n", "line 2: a second TYPE line for a"},
      {"a 1\n# TYPE a gauge\n", "line 2: the TYPE line of a comes after its samples"},
      {"# TYPE a meter\n", "line 1: unknown metric type 'meter' for a"},
      {"# HELP\n", "line 1: # HELP needs a metric name, got ''"},
      {"a 1\n# EOF\nb 2\n", "line 3: text after # EOF"},
  };
  for (const auto& c : cases) {
    auto fs = parse_exposition(c.text);
    ASSERT_FALSE(fs) << c.text;
    EXPECT_TRUE(is_error(fs.error(), errc::bad_exposition));
    EXPECT_NE(error_message(fs.error()).find(c.message), std::string::npos)
        << error_message(fs.error()) << "\nwanted: " << c.message;
  }
}

TEST(exposition, comments_and_an_empty_text_are_no_families) {
  auto fs = parse_exposition("# just a comment\n\n#another\n");
  ASSERT_TRUE(fs);
  EXPECT_TRUE(fs->empty());
  auto none = parse_exposition("");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

} // namespace
} // namespace aiperf::prometheus
