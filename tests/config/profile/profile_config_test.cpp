#include "config/profile/profile_config.hpp"
#include "tests/config/profile/profile_test_support.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace aiperf::config;
using aiperf::config::testing::parse;
using aiperf::config::testing::temp_file;

namespace {

// A self-signed CA certificate as PEM text, made fresh for the test.
std::string self_signed_pem() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{EVP_EC_gen("P-256"),
                                                          &EVP_PKEY_free};
  std::unique_ptr<X509, decltype(&X509_free)> cert{X509_new(), &X509_free};
  if (!key || !cert)
    return {};
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_set_pubkey(cert.get(), key.get());
  auto* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("test-ca"),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_sign(cert.get(), key.get(), EVP_sha256());
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new(BIO_s_mem()),
                                                &BIO_free};
  PEM_write_bio_X509(bio.get(), cert.get());
  char* data = nullptr;
  auto size = BIO_get_mem_data(bio.get(), &data);
  return {data, static_cast<std::size_t>(size)};
}

profile_config parse_ok(const std::vector<std::string>& args,
                        unsigned cores = 8) {
  auto cfg = parse(args, cores);
  EXPECT_TRUE(cfg) << (cfg ? "" : aiperf::error_message(cfg.error()));
  return cfg ? *cfg : profile_config{};
}

} // namespace

// -- defaults -----------------------------------------------------------------

TEST(profile_defaults, only_model_gives_concurrency_1_and_10_requests) {
  auto cfg = parse_ok({"--model", "m"});
  EXPECT_EQ(cfg.concurrency, 1);
  EXPECT_EQ(cfg.request_count, 10);
  EXPECT_FALSE(cfg.request_rate);
  EXPECT_FALSE(cfg.benchmark_duration);
  EXPECT_FALSE(cfg.streaming);
  EXPECT_EQ(cfg.endpoint_type, endpoint_type::chat);
  EXPECT_EQ(endpoint_path(cfg), "/v1/chat/completions");
  EXPECT_EQ(cfg.isl_mean, 550);
  EXPECT_FALSE(cfg.osl_mean);
  EXPECT_EQ(cfg.num_dataset_entries, 100);
  EXPECT_EQ(cfg.request_timeout_seconds, 21600.0);
  EXPECT_EQ(cfg.export_level, export_level::records);
  EXPECT_EQ(cfg.arrival_pattern, arrival_pattern::poisson);
  EXPECT_EQ(cfg.output_artifact_dir, "artifacts");
  EXPECT_EQ(cfg.scheduler_policy, scheduler_policy::automatic);
  EXPECT_TRUE(uses_mock_server(cfg));
}

TEST(profile_defaults, concurrency_8_gives_16_requests) {
  auto cfg = parse_ok({"-m", "m", "--concurrency", "8"});
  EXPECT_EQ(cfg.concurrency, 8);
  EXPECT_EQ(cfg.request_count, 16);
}

TEST(profile_defaults, small_concurrency_still_sends_10_requests) {
  EXPECT_EQ(parse_ok({"-m", "m", "--concurrency", "3"}).request_count, 10);
}

TEST(profile_defaults, request_rate_alone_gives_10_requests_and_no_cap) {
  auto cfg = parse_ok({"-m", "m", "--request-rate", "5"});
  EXPECT_EQ(cfg.request_count, 10);
  EXPECT_FALSE(cfg.concurrency);
  EXPECT_EQ(cfg.request_rate, 5.0);
}

TEST(profile_defaults, duration_replaces_request_count_and_sets_grace) {
  auto cfg = parse_ok({"-m", "m", "--benchmark-duration", "60"});
  EXPECT_FALSE(cfg.request_count);
  EXPECT_EQ(cfg.benchmark_grace_period, 30.0);
  auto inf = parse_ok({"-m", "m", "--benchmark-duration", "60",
                       "--benchmark-grace-period", "inf"});
  ASSERT_TRUE(inf.benchmark_grace_period);
  EXPECT_TRUE(std::isinf(*inf.benchmark_grace_period));
}

// AIPerf accepts both stop conditions; the first one reached ends the run.
TEST(profile_defaults, request_count_and_duration_are_both_kept) {
  auto cfg = parse_ok(
      {"-m", "m", "--request-count", "5", "--benchmark-duration", "3"});
  EXPECT_EQ(cfg.request_count, 5);
  EXPECT_EQ(cfg.benchmark_duration, 3.0);
  EXPECT_EQ(cfg.benchmark_grace_period, 30.0);
}

// AIPerf's unit: a ratio; 0 and 1 are its bounds (0 = any failure once the
// threshold is armed).
TEST(profile_defaults, failed_request_threshold_is_a_ratio) {
  EXPECT_EQ(parse_ok({"-m", "m", "--failed-request-threshold", "0.05"})
                .failed_request_threshold,
            0.05);
  EXPECT_EQ(parse_ok({"-m", "m", "--failed-request-threshold", "0"})
                .failed_request_threshold,
            0.0);
  EXPECT_EQ(parse_ok({"-m", "m", "--failed-request-threshold", "1"})
                .failed_request_threshold,
            1.0);
  EXPECT_FALSE(parse_ok({"-m", "m"}).failed_request_threshold);
}

// As in AIPerf, -v/-vv win over --log-level wherever they stand.
TEST(profile_defaults, verbose_flags_set_the_log_level) {
  EXPECT_EQ(parse_ok({"-m", "m"}).log_level, "info");
  EXPECT_EQ(parse_ok({"-m", "m", "-v", "--log-level", "error"}).log_level,
            "debug");
  EXPECT_EQ(parse_ok({"-m", "m", "--log-level", "error", "-vv"}).log_level,
            "trace");
  EXPECT_EQ(parse_ok({"-m", "m", "-v", "--extra-verbose"}).log_level, "trace");
}

// AIPerf's defaults: no cancellation, and a delay of 0 s.
TEST(profile_defaults, request_cancellation_is_off_by_default) {
  auto cfg = parse_ok({"-m", "m"});
  EXPECT_EQ(cfg.request_cancellation_rate, 0.0);
  EXPECT_EQ(cfg.request_cancellation_delay, 0.0);
  auto set = parse_ok({"-m", "m", "--request-cancellation-rate", "100",
                       "--request-cancellation-delay", "2.5"});
  EXPECT_EQ(set.request_cancellation_rate, 100.0);
  EXPECT_EQ(set.request_cancellation_delay, 2.5);
}

TEST(profile_defaults, explicit_request_count_wins) {
  EXPECT_EQ(parse_ok({"-m", "m", "--concurrency", "8", "--request-count", "3"})
                .request_count,
            3);
}

TEST(profile_defaults, workers_follow_concurrency_and_cores) {
  // 8 cores: max(1, int(8·0.75) − 1) = 5.
  auto one = parse_ok({"-m", "m"}, 8);
  EXPECT_EQ(one.workers_max, 1);
  EXPECT_EQ(one.record_processors, 1);
  auto many = parse_ok({"-m", "m", "--concurrency", "100"}, 8);
  EXPECT_EQ(many.workers_max, 5);
  EXPECT_EQ(many.record_processors, 1);
  // 64 cores: 47, capped at 32; one record processor per 4 workers.
  auto big = parse_ok({"-m", "m", "--concurrency", "1000"}, 64);
  EXPECT_EQ(big.workers_max, 32);
  EXPECT_EQ(big.record_processors, 8);
  // 2 cores: int(1.5) − 1 = 0 → at least 1.
  EXPECT_EQ(parse_ok({"-m", "m", "--concurrency", "100"}, 2).workers_max, 1);
  // Rate mode has no concurrency: cores decide.
  EXPECT_EQ(parse_ok({"-m", "m", "--request-rate", "100"}, 8).workers_max, 5);
}

TEST(profile_defaults, io_and_scheduler_threads_follow_cores) {
  auto small = parse_ok({"-m", "m"}, 2);
  EXPECT_EQ(small.io_threads, 1);
  EXPECT_EQ(small.scheduler_threads, 1);
  auto big = parse_ok({"-m", "m"}, 8);
  EXPECT_EQ(big.io_threads, 4);
  EXPECT_EQ(big.scheduler_threads, 4);
  EXPECT_EQ(parse_ok({"-m", "m", "--io-threads", "3"}, 8).io_threads, 3);
}

TEST(profile_defaults, worker_pods_split_totals_evenly) {
  auto per_pod
      = parse_ok({"-m", "m", "--worker-pods", "2", "--workers-per-pod", "3"});
  EXPECT_EQ(per_pod.workers_max, 6);
  EXPECT_EQ(per_pod.record_processors, 2); // max(1, 3/4) per pod
  // Derived 5 workers round up to a multiple of 4 pods.
  auto derived
      = parse_ok({"-m", "m", "--concurrency", "100", "--worker-pods", "4"}, 8);
  EXPECT_EQ(derived.workers_max, 8);
  EXPECT_EQ(derived.workers_per_pod, 2);
  EXPECT_EQ(derived.record_processors, 4);
  auto totals = parse_ok({"-m", "m", "--worker-pods", "2", "--workers-max",
                          "16", "--record-processors", "4"});
  EXPECT_EQ(totals.workers_per_pod, 8);
  EXPECT_EQ(totals.record_processors, 4);
}

TEST(profile_defaults, embeddings_cannot_stream) {
  auto cfg
      = parse_ok({"-m", "m", "--endpoint-type", "embeddings", "--streaming"});
  EXPECT_FALSE(cfg.streaming);
  EXPECT_EQ(endpoint_path(cfg), "/v1/embeddings");
}

TEST(profile_defaults, include_usage_needs_streaming_and_server_counts) {
  EXPECT_TRUE(parse_ok({"-m", "m", "--streaming", "--use-server-token-count"})
                  .include_usage);
  EXPECT_FALSE(parse_ok({"-m", "m", "--use-server-token-count"}).include_usage);
  EXPECT_FALSE(parse_ok({"-m", "m", "--streaming"}).include_usage);
}

TEST(profile_defaults, endpoint_paths_by_type_and_override) {
  EXPECT_EQ(
      endpoint_path(parse_ok({"-m", "m", "--endpoint-type", "completions"})),
      "/v1/completions");
  EXPECT_EQ(endpoint_path(parse_ok({"-m", "m", "--endpoint", "/custom/x"})),
            "/custom/x");
}

TEST(profile_defaults, trace_file_implies_fixed_schedule) {
  temp_file trace{"trace.jsonl", "{\"timestamp\": 0, \"input_length\": 10, "
                                 "\"output_length\": 5, \"hash_ids\": [1]}\n"
                                 "{\"timestamp\": 100, \"input_length\": 20, "
                                 "\"output_length\": 5}\n"};
  auto cfg = parse_ok({"-m", "m", "--input-file", trace.path(),
                       "--custom-dataset-type", "mooncake_trace"});
  EXPECT_TRUE(cfg.fixed_schedule);
  EXPECT_FALSE(cfg.concurrency);
  EXPECT_FALSE(cfg.request_count);
}

TEST(profile_defaults, dataset_type_is_detected_from_first_record) {
  temp_file trace{"detect_trace.jsonl", "{\"input_length\": 10}\n"};
  EXPECT_EQ(
      parse_ok({"-m", "m", "--input-file", trace.path()}).custom_dataset_type,
      custom_dataset_type::mooncake_trace);
  temp_file multi{"detect_multi.jsonl",
                  "{\"session_id\": \"a\", \"turns\": [{\"text\": \"hi\"}]}\n"};
  EXPECT_EQ(
      parse_ok({"-m", "m", "--input-file", multi.path()}).custom_dataset_type,
      custom_dataset_type::multi_turn);
  temp_file single{"detect_single.jsonl", "\n{\"text\": \"hello\"}\n"};
  EXPECT_EQ(
      parse_ok({"-m", "m", "--input-file", single.path()}).custom_dataset_type,
      custom_dataset_type::single_turn);
}

TEST(profile_defaults, user_centric_mode) {
  auto cfg = parse_ok({"-m", "m", "--user-centric-rate", "1", "--num-users",
                       "15", "--conversation-turn-mean", "3"});
  EXPECT_FALSE(cfg.concurrency);
  EXPECT_EQ(cfg.request_count, 30);
  EXPECT_EQ(cfg.workers_max, 5);
}

// Verifies finalize() can run twice (e.g. after from_json) without change.
TEST(profile_defaults, finalize_is_idempotent) {
  auto cfg = parse_ok({"-m", "a/b", "--concurrency", "7", "-H", "X-A:1",
                       "--extra-inputs", "ignore_eos:true", "--streaming",
                       "--goodput", "time_to_first_token:100", "--worker-pods",
                       "2"});
  auto again = cfg;
  ASSERT_TRUE(finalize(again, 8));
  EXPECT_EQ(again, cfg);
}

// Files inside the pods of a kube run are not read: the input file's type
// must then be given, and a CA bundle elsewhere is taken as it is.
TEST(profile_defaults, files_elsewhere_are_not_read) {
  profile_config cfg;
  cfg.model_names = {"m"};
  cfg.input_file = "/mnt/in-pod/prompts.jsonl";
  cfg.ca_file = "/mnt/in-pod/ca.pem";
  auto untyped = cfg;
  auto refused = finalize(untyped, file_site{false, false}, 8);
  ASSERT_FALSE(refused);
  auto msg = aiperf::error_message(refused.error());
  EXPECT_NE(msg.find("--input-file"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pass --custom-dataset-type"), std::string::npos) << msg;
  cfg.custom_dataset_type = custom_dataset_type::single_turn;
  ASSERT_TRUE(finalize(cfg, file_site{false, false}, 8));
  EXPECT_EQ(cfg.input_file, "/mnt/in-pod/prompts.jsonl");
  auto here = cfg;
  EXPECT_FALSE(finalize(here, 8)) << "read here, the missing file is an error";
}

// -- aliases ------------------------------------------------------------------

TEST(profile_aliases, model_spellings_and_comma_lists) {
  EXPECT_EQ(parse_ok({"--model-names", "a"}).model_names,
            std::vector<std::string>{"a"});
  EXPECT_EQ(parse_ok({"--model", "a,b"}).model_names,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(parse_ok({"-m", "a", "-m", "b"}).model_names,
            (std::vector<std::string>{"a", "b"}));
}

TEST(profile_aliases, token_distribution_spellings) {
  for (auto flag :
       {"--isl", "--synthetic-input-tokens-mean", "--prompt-input-tokens-mean"})
    EXPECT_EQ(parse_ok({"-m", "m", flag, "100"}).isl_mean, 100) << flag;
  for (auto flag : {"--isl-stddev", "--synthetic-input-tokens-stddev",
                    "--prompt-input-tokens-stddev"})
    EXPECT_EQ(parse_ok({"-m", "m", flag, "2.5"}).isl_stddev, 2.5) << flag;
  for (auto flag :
       {"--osl", "--output-tokens-mean", "--prompt-output-tokens-mean"})
    EXPECT_EQ(parse_ok({"-m", "m", flag, "64"}).osl_mean, 64) << flag;
  for (auto flag : {"--osl-stddev", "--output-tokens-stddev",
                    "--prompt-output-tokens-stddev"})
    EXPECT_EQ(parse_ok({"-m", "m", "--osl", "64", flag, "4"}).osl_stddev, 4.0)
        << flag;
}

TEST(profile_aliases, load_generator_spellings) {
  EXPECT_EQ(parse_ok({"-m", "m", "--num-requests", "7"}).request_count, 7);
  EXPECT_EQ(
      parse_ok({"-m", "m", "--num-warmup-requests", "3"}).warmup_request_count,
      3);
  EXPECT_EQ(
      parse_ok({"-m", "m", "--warmup-request-count", "4"}).warmup_request_count,
      4);
  auto gamma
      = parse_ok({"-m", "m", "--request-rate", "2", "--request-rate-mode",
                  "gamma", "--vllm-burstiness", "0.5"});
  EXPECT_EQ(gamma.arrival_pattern, arrival_pattern::gamma);
  EXPECT_EQ(gamma.arrival_smoothness, 0.5);
  EXPECT_EQ(parse_ok({"-m", "m", "--request-rate", "2", "--arrival-pattern",
                      "constant"})
                .arrival_pattern,
            arrival_pattern::constant);
}

TEST(profile_aliases, dataset_spellings) {
  EXPECT_EQ(parse_ok({"-m", "m", "--num-prompts", "5"}).num_dataset_entries, 5);
  EXPECT_EQ(parse_ok({"-m", "m", "--num-conversations", "4"}).conversation_num,
            4);
  EXPECT_EQ(parse_ok({"-m", "m", "--num-sessions", "6"}).conversation_num, 6);
  EXPECT_EQ(
      parse_ok({"-m", "m", "--session-turns-mean", "3"}).conversation_turn_mean,
      3);
  auto turns = parse_ok({"-m", "m", "--conversation-turn-stddev", "1",
                         "--conversation-turn-delay-mean", "200",
                         "--conversation-turn-delay-stddev", "20",
                         "--conversation-turn-delay-ratio", "0.5"});
  EXPECT_EQ(turns.conversation_turn_stddev, 1.0);
  EXPECT_EQ(turns.conversation_turn_delay_mean, 200.0);
  EXPECT_EQ(turns.conversation_turn_delay_stddev, 20.0);
  EXPECT_EQ(turns.conversation_turn_delay_ratio, 0.5);
}

TEST(profile_aliases, output_and_runtime_spellings) {
  EXPECT_EQ(parse_ok({"-m", "m", "--artifact-dir", "out"}).output_artifact_dir,
            "out");
  EXPECT_EQ(
      parse_ok({"-m", "m", "--output-artifact-dir", "o2"}).output_artifact_dir,
      "o2");
  EXPECT_EQ(parse_ok({"-m", "m", "--max-workers", "3"}).workers_max, 3);
  EXPECT_EQ(parse_ok({"-m", "m", "--workers-max", "4"}).workers_max, 4);
  EXPECT_EQ(parse_ok({"-m", "m", "--record-processor-service-count", "2"})
                .record_processors,
            2);
  EXPECT_EQ(parse_ok({"-m", "m", "--ui-type", "none"}).ui, ui_type::none);
  EXPECT_EQ(parse_ok({"-m", "m", "--ui", "none"}).ui, ui_type::none);
  EXPECT_EQ(parse_ok({"-m", "m", "--export-level", "raw"}).export_level,
            export_level::raw);
  EXPECT_EQ(parse_ok({"-m", "m", "--log-level", "DEBUG"}).log_level, "debug");
  EXPECT_EQ(parse_ok({"-m", "m", "--scheduler-policy", "stealing",
                      "--scheduler-threads", "3"})
                .scheduler_policy,
            scheduler_policy::stealing);
  EXPECT_EQ(
      parse_ok({"-m", "m", "--scheduler-policy", "io-thread"}).scheduler_policy,
      scheduler_policy::io_thread);
  EXPECT_EQ(parse_ok({"-m", "m"}).io_priority, io_priority::automatic);
  EXPECT_EQ(parse_ok({"-m", "m", "--io-priority", "high"}).io_priority,
            io_priority::high);
  EXPECT_EQ(parse_ok({"-m", "m", "--io-priority", "normal"}).io_priority,
            io_priority::normal);
  EXPECT_EQ(*parse_ok({"-m", "m", "--custom-endpoint", "/x"}).custom_endpoint,
            "/x");
  EXPECT_EQ(parse_ok({"-m", "m", "--tokenizer", "gpt2"}).tokenizer, "gpt2");
  EXPECT_EQ(
      parse_ok({"-m", "m", "--tokenizer-revision", "v1"}).tokenizer_revision,
      "v1");
}

TEST(profile_aliases, endpoint_flags) {
  auto cfg = parse_ok({"-m",
                       "m",
                       "-u",
                       "localhost:8000",
                       "--url",
                       "https://h/v1/",
                       "--api-key",
                       "sk-1",
                       "--use-legacy-max-tokens",
                       "--random-seed",
                       "42",
                       "--failed-request-threshold",
                       "0.1",
                       "--request-timeout-seconds",
                       "5",
                       "--prefill-concurrency",
                       "2",
                       "--streaming",
                       "--model-selection-strategy",
                       "random"});
  EXPECT_EQ(cfg.urls, (std::vector<std::string>{"http://localhost:8000",
                                                "https://h:443/v1"}));
  EXPECT_FALSE(uses_mock_server(cfg));
  EXPECT_EQ(cfg.api_key, "sk-1");
  EXPECT_TRUE(cfg.use_legacy_max_tokens);
  EXPECT_EQ(cfg.random_seed, 42u);
  EXPECT_EQ(cfg.failed_request_threshold, 0.1);
  EXPECT_EQ(cfg.request_timeout_seconds, 5.0);
  EXPECT_EQ(cfg.prefill_concurrency, 2);
  EXPECT_EQ(cfg.model_selection_strategy, model_selection_strategy::random);
}

// -- value parsers ------------------------------------------------------------

TEST(profile_goodput, parses_space_separated_pairs) {
  auto slos = parse_goodput("request_latency:250 inter_token_latency:10.5");
  ASSERT_TRUE(slos) << aiperf::error_message(slos.error());
  ASSERT_EQ(slos->size(), 2u);
  EXPECT_EQ((*slos)[0], (goodput_slo{"request_latency", 250.0}));
  EXPECT_EQ((*slos)[1], (goodput_slo{"inter_token_latency", 10.5}));
}

TEST(profile_goodput, accepts_repeated_flags_and_one_quoted_string) {
  auto cfg = parse_ok({"-m", "m", "--streaming", "--goodput",
                       "request_latency:250 time_to_first_token:50",
                       "--goodput", "output_token_throughput_per_user:600"});
  ASSERT_EQ(cfg.goodput.size(), 3u);
  EXPECT_EQ(cfg.goodput[2].tag, "output_token_throughput_per_user");
  EXPECT_EQ(cfg.goodput[2].value, 600.0);
  EXPECT_TRUE(cfg.cli.goodput.empty());
}

TEST(profile_goodput, applicability_by_endpoint_and_streaming) {
  EXPECT_TRUE(
      goodput_tag_applies("request_latency", endpoint_type::embeddings, false));
  EXPECT_TRUE(goodput_tag_applies("input_sequence_length",
                                  endpoint_type::embeddings, false));
  EXPECT_FALSE(goodput_tag_applies("output_sequence_length",
                                   endpoint_type::embeddings, false));
  EXPECT_TRUE(goodput_tag_applies("e2e_output_token_throughput",
                                  endpoint_type::chat, false));
  EXPECT_FALSE(
      goodput_tag_applies("time_to_first_token", endpoint_type::chat, false));
  EXPECT_TRUE(
      goodput_tag_applies("time_to_first_token", endpoint_type::chat, true));
  EXPECT_FALSE(goodput_tag_applies("nonsense", endpoint_type::chat, true));
  EXPECT_EQ(goodput_tags().size(), 9u);
}

TEST(profile_extra_inputs, values_are_json_when_they_are_json) {
  auto parse_one = [](std::string_view text) {
    auto x = parse_extra_inputs(text);
    EXPECT_TRUE(x) << text;
    return x && x->size() == 1 ? (*x)[0] : extra_input{};
  };
  EXPECT_EQ(parse_one("ignore_eos:true"), (extra_input{"ignore_eos", "true"}));
  EXPECT_EQ(parse_one("min_tokens:5"), (extra_input{"min_tokens", "5"}));
  EXPECT_EQ(parse_one("temperature:0.5"), (extra_input{"temperature", "0.5"}));
  EXPECT_EQ(parse_one("stop:foo"), (extra_input{"stop", "\"foo\""}));
  EXPECT_EQ(parse_one("stop:a:b"), (extra_input{"stop", "\"a:b\""}));
  EXPECT_EQ(parse_one("response_format:{\"type\": \"json_object\"}"),
            (extra_input{"response_format", "{\"type\":\"json_object\"}"}));
  EXPECT_EQ(parse_one("empty:"), (extra_input{"empty", "\"\""}));
}

TEST(profile_extra_inputs, json_object_form_and_later_keys_win) {
  auto x = parse_extra_inputs("{\"a\": 1, \"b\": [1, 2], \"c\": null}");
  ASSERT_TRUE(x);
  EXPECT_EQ(*x, (std::vector<extra_input>{
                    {"a", "1"}, {"b", "[1,2]"}, {"c", "null"}}));
  auto cfg = parse_ok({"-m", "m", "--extra-inputs", "min_tokens:5",
                       "ignore_eos:true", "--extra-inputs", "min_tokens:7"});
  EXPECT_EQ(
      cfg.extra_inputs,
      (std::vector<extra_input>{{"min_tokens", "7"}, {"ignore_eos", "true"}}));
}

TEST(profile_headers, name_value_and_json_forms) {
  auto h = parse_headers("Authorization: Bearer abc");
  ASSERT_TRUE(h);
  EXPECT_EQ(*h, (std::vector<http_header>{{"Authorization", "Bearer abc"}}));
  auto j = parse_headers("{\"X-A\": \"1\", \"X-B\": \"two:parts\"}");
  ASSERT_TRUE(j);
  EXPECT_EQ(*j, (std::vector<http_header>{{"X-A", "1"}, {"X-B", "two:parts"}}));
  auto cfg = parse_ok({"-m", "m", "-H", "X-A:1", "--header", "X-B:2"});
  EXPECT_EQ(cfg.headers,
            (std::vector<http_header>{{"X-A", "1"}, {"X-B", "2"}}));
}

TEST(profile_urls, parses_and_normalizes) {
  auto bare = parse_url("localhost:8000");
  ASSERT_TRUE(bare);
  EXPECT_EQ(*bare, (parsed_url{"http", "localhost", 8000, ""}));
  auto tls = parse_url("HTTPS://example.com/api/");
  ASSERT_TRUE(tls);
  EXPECT_EQ(*tls, (parsed_url{"https", "example.com", 443, "/api"}));
  auto v6 = parse_url("http://[::1]:9000");
  ASSERT_TRUE(v6);
  EXPECT_EQ(*v6, (parsed_url{"http", "::1", 9000, ""}));
  EXPECT_EQ(to_string(*v6), "http://[::1]:9000");
  EXPECT_EQ(to_string(*bare), "http://localhost:8000");
}

// -- naming -------------------------------------------------------------------

TEST(profile_run_name, follows_aiperf_stimulus_names) {
  EXPECT_EQ(
      run_name(parse_ok({"-m", "Qwen/Qwen3-0.6B", "--concurrency", "10"})),
      "Qwen_Qwen3-0.6B-openai-chat-concurrency10");
  EXPECT_EQ(run_name(parse_ok(
                {"-m", "m", "--concurrency", "10", "--request-rate", "5"})),
            "m-openai-chat-concurrency10-request_rate5.0");
  EXPECT_EQ(run_name(parse_ok({"-m", "m", "--request-rate", "2.5",
                               "--endpoint-type", "completions"})),
            "m-openai-completions-request_rate2.5");
  EXPECT_EQ(
      run_name(parse_ok({"-m", "m", "--user-centric-rate", "1", "--num-users",
                         "15", "--conversation-turn-mean", "2"})),
      "m-openai-chat-user_centric-users15-qps1.0");
  EXPECT_EQ(run_name(parse_ok({"-m", "a,b", "--endpoint-type", "embeddings"})),
            "a_multi-openai-embeddings-concurrency1");
}

TEST(profile_run_name, fixed_schedule_and_artifact_dir) {
  temp_file trace{"name_trace.jsonl", "{\"timestamp\":0,\"input_length\":1}\n"};
  auto cfg = parse_ok({"-m", "org/model", "--input-file", trace.path(),
                       "--artifact-dir", "/tmp/arts"});
  EXPECT_EQ(run_name(cfg), "org_model-openai-chat-fixed_schedule");
  EXPECT_EQ(artifact_dir(cfg),
            std::filesystem::path{"/tmp/arts/org_model-openai-chat-"
                                  "fixed_schedule"});
}

TEST(profile_run_name, python_float_spelling) {
  EXPECT_EQ(python_float(5), "5.0");
  EXPECT_EQ(python_float(0.5), "0.5");
  EXPECT_EQ(python_float(1.25), "1.25");
  EXPECT_EQ(python_float(100), "100.0");
  EXPECT_EQ(python_float(0.1), "0.1");
  EXPECT_EQ(python_float(1e16), "1e+16");
  EXPECT_EQ(python_float(1e-5), "1e-05");
}

TEST(profile_errors, message_is_the_flag_and_what_is_wrong) {
  auto cfg = parse({"-m", "m", "--concurrency", "0"});
  ASSERT_FALSE(cfg);
  EXPECT_EQ("error: " + aiperf::error_message(cfg.error()),
            "error: --concurrency: must be ≥ 1 (got 0)");
  EXPECT_EQ(error_flag(cfg.error()), "--concurrency");
  EXPECT_TRUE(aiperf::is_error(cfg.error(), errc::invalid));
}

TEST(profile_errors, codes_tell_missing_conflicting_and_unreadable_apart) {
  auto none = parse({});
  ASSERT_FALSE(none);
  EXPECT_TRUE(aiperf::is_error(none.error(), errc::missing));
  auto both = parse({"-m", "m", "--request-rate", "5", "--user-centric-rate",
                     "2", "--num-users", "2", "--conversation-turn-mean", "2"});
  ASSERT_FALSE(both);
  EXPECT_TRUE(aiperf::is_error(both.error(), errc::conflict));
  auto file = parse({"-m", "m", "--input-file", "/nonexistent/in.jsonl"});
  ASSERT_FALSE(file);
  EXPECT_TRUE(aiperf::is_error(file.error(), errc::unreadable));
  EXPECT_EQ(error_flag(file.error()), "--input-file");
}

// -- validation errors: one case per check ------------------------------------

namespace {

struct error_case {
  const char* name;
  std::vector<std::string> args;
  std::string flag;              // must appear in the error's flag
  std::string message_part = ""; // must appear in the message if set
  std::string file_content = ""; // written to a temp file, path replaces @
};

class profile_validation : public ::testing::TestWithParam<error_case> {};

TEST_P(profile_validation, names_the_flag) {
  const auto& c = GetParam();
  std::optional<temp_file> file;
  auto args = c.args;
  if (!c.file_content.empty()) {
    file.emplace(std::string{c.name} + ".jsonl", c.file_content);
    for (auto& a : args)
      if (a == "@")
        a = file->path();
  }
  auto cfg = parse(args);
  ASSERT_FALSE(cfg) << "expected an error for " << c.name;
  auto message = aiperf::error_message(cfg.error());
  EXPECT_NE(error_flag(cfg.error()).find(c.flag), std::string::npos) << message;
  EXPECT_NE(message.find(c.flag), std::string::npos);
  EXPECT_NE(message.find(c.message_part), std::string::npos) << message;
}

const std::string trace_line = "{\"timestamp\":0,\"input_length\":5}\n";

INSTANTIATE_TEST_SUITE_P(
    all, profile_validation,
    ::testing::Values(
        error_case{"missing_model", {}, "--model", "required"},
        error_case{"blank_model", {"-m", " "}, "--model"},
        error_case{
            "url_scheme", {"-m", "m", "-u", "ftp://x"}, "--url", "scheme"},
        error_case{"url_port",
                   {"-m", "m", "-u", "http://h:70000"},
                   "--url",
                   "1-65535"},
        error_case{
            "url_no_host", {"-m", "m", "-u", "http://:80"}, "--url", "no host"},
        error_case{"url_bad_user_info_escape",
                   {"-m", "m", "-u", "http://u:p%zz@h"},
                   "--url",
                   "%25"},
        error_case{"endpoint_path",
                   {"-m", "m", "--endpoint", "v1/x"},
                   "--endpoint",
                   "'/'"},
        error_case{"api_key_empty", {"-m", "m", "--api-key", ""}, "--api-key"},
        error_case{"header_no_colon",
                   {"-m", "m", "-H", "NoColon"},
                   "--header",
                   "Name:Value"},
        error_case{"header_bad_name",
                   {"-m", "m", "-H", "Bad Name:x"},
                   "--header",
                   "invalid header name"},
        error_case{"header_json_value",
                   {"-m", "m", "-H", "{\"a\": 1}"},
                   "--header",
                   "string"},
        error_case{"extra_no_colon",
                   {"-m", "m", "--extra-inputs", "novalue"},
                   "--extra-inputs",
                   "key:value"},
        error_case{"extra_bad_object",
                   {"-m", "m", "--extra-inputs", "{bad"},
                   "--extra-inputs",
                   "JSON object"},
        error_case{"timeout_zero",
                   {"-m", "m", "--request-timeout-seconds", "0"},
                   "--request-timeout-seconds",
                   "> 0"},
        error_case{"insecure_and_ca",
                   {"-m", "m", "--insecure", "--ca-file", "/etc/hostname"},
                   "--insecure"},
        error_case{"ca_missing",
                   {"-m", "m", "--ca-file", "/nonexistent/ca.pem"},
                   "--ca-file",
                   "does not exist"},
        error_case{"input_missing",
                   {"-m", "m", "--input-file", "/nonexistent/in.jsonl"},
                   "--input-file",
                   "does not exist"},
        error_case{"input_bad_json",
                   {"-m", "m", "--input-file", "@"},
                   "--input-file",
                   "line 2",
                   "{\"text\":\"a\"}\n{oops\n"},
        error_case{"input_not_object",
                   {"-m", "m", "--input-file", "@"},
                   "--input-file",
                   "line 1",
                   "[1, 2]\n"},
        error_case{"input_no_records",
                   {"-m", "m", "--input-file", "@"},
                   "--input-file",
                   "no records",
                   "\n  \n"},
        error_case{"input_multi_turn_no_turns",
                   {"-m", "m", "--input-file", "@", "--custom-dataset-type",
                    "multi_turn"},
                   "--input-file",
                   "turns",
                   "{\"text\":\"a\"}\n"},
        error_case{"input_trace_bad_length",
                   {"-m", "m", "--input-file", "@"},
                   "--input-file",
                   "input_length",
                   "{\"input_length\": -3}\n"},
        error_case{"dataset_type_without_file",
                   {"-m", "m", "--custom-dataset-type", "single_turn"},
                   "--custom-dataset-type",
                   "--input-file"},
        error_case{"fixed_schedule_without_file",
                   {"-m", "m", "--fixed-schedule"},
                   "--fixed-schedule",
                   "--input-file"},
        error_case{"offset_without_fixed_schedule",
                   {"-m", "m", "--input-file", "@",
                    "--fixed-schedule-start-offset", "5"},
                   "--fixed-schedule-start-offset",
                   "fixed schedule",
                   "{\"text\":\"a\"}\n"},
        error_case{"offsets_reversed",
                   {"-m", "m", "--input-file", "@",
                    "--fixed-schedule-start-offset", "50",
                    "--fixed-schedule-end-offset", "10"},
                   "--fixed-schedule-end-offset",
                   "start-offset",
                   trace_line},
        error_case{"offset_negative",
                   {"-m", "m", "--input-file", "@",
                    "--fixed-schedule-end-offset", "-1"},
                   "--fixed-schedule-end-offset",
                   "≥ 0",
                   trace_line},
        error_case{"auto_offset_and_start_offset",
                   {"-m", "m", "--input-file", "@",
                    "--fixed-schedule-auto-offset",
                    "--fixed-schedule-start-offset", "5"},
                   "--fixed-schedule-auto-offset",
                   "start-offset",
                   trace_line},
        error_case{"rate_with_fixed_schedule",
                   {"-m", "m", "--input-file", "@", "--request-rate", "5"},
                   "--request-rate",
                   "fixed schedule",
                   trace_line},
        error_case{"dataset_entries_zero",
                   {"-m", "m", "--num-dataset-entries", "0"},
                   "--num-dataset-entries",
                   "≥ 1"},
        error_case{
            "isl_zero", {"-m", "m", "--isl", "0"}, "--isl", "≥ 1 (got 0)"},
        error_case{"isl_stddev_negative",
                   {"-m", "m", "--isl-stddev", "-1"},
                   "--isl-stddev",
                   "≥ 0"},
        error_case{"osl_zero", {"-m", "m", "--osl", "0"}, "--osl", "≥ 1"},
        error_case{"osl_stddev_without_osl",
                   {"-m", "m", "--osl-stddev", "3"},
                   "--osl-stddev",
                   "--osl"},
        error_case{"osl_stddev_negative",
                   {"-m", "m", "--osl", "5", "--osl-stddev", "-2"},
                   "--osl-stddev",
                   "≥ 0"},
        error_case{"conversation_num_zero",
                   {"-m", "m", "--conversation-num", "0"},
                   "--conversation-num"},
        error_case{"turn_mean_zero",
                   {"-m", "m", "--conversation-turn-mean", "0"},
                   "--conversation-turn-mean"},
        error_case{"turn_stddev_negative",
                   {"-m", "m", "--conversation-turn-stddev", "-1"},
                   "--conversation-turn-stddev"},
        error_case{"turn_delay_negative",
                   {"-m", "m", "--conversation-turn-delay-mean", "-1"},
                   "--conversation-turn-delay-mean"},
        error_case{"turn_delay_stddev_negative",
                   {"-m", "m", "--conversation-turn-delay-stddev", "-1"},
                   "--conversation-turn-delay-stddev"},
        error_case{"turn_delay_ratio_negative",
                   {"-m", "m", "--conversation-turn-delay-ratio", "-0.5"},
                   "--conversation-turn-delay-ratio"},
        error_case{"tokenizer_revision_empty",
                   {"-m", "m", "--tokenizer-revision", ""},
                   "--tokenizer-revision",
                   "must not be empty"},
        error_case{"concurrency_zero",
                   {"-m", "m", "--concurrency", "0"},
                   "--concurrency",
                   "must be ≥ 1 (got 0)"},
        error_case{"rate_zero",
                   {"-m", "m", "--request-rate", "0"},
                   "--request-rate",
                   "> 0"},
        error_case{"rate_nan",
                   {"-m", "m", "--request-rate", "nan"},
                   "--request-rate",
                   "> 0"},
        error_case{
            "smoothness_without_gamma",
            {"-m", "m", "--request-rate", "1", "--arrival-smoothness", "2"},
            "--arrival-smoothness",
            "gamma"},
        error_case{"smoothness_zero",
                   {"-m", "m", "--request-rate", "1", "--arrival-pattern",
                    "gamma", "--arrival-smoothness", "0"},
                   "--arrival-smoothness",
                   "> 0"},
        error_case{"request_count_zero",
                   {"-m", "m", "--request-count", "0"},
                   "--request-count"},
        error_case{"duration_zero",
                   {"-m", "m", "--benchmark-duration", "0"},
                   "--benchmark-duration"},
        error_case{"grace_without_duration",
                   {"-m", "m", "--benchmark-grace-period", "5"},
                   "--benchmark-grace-period",
                   "--benchmark-duration"},
        error_case{"grace_negative",
                   {"-m", "m", "--benchmark-duration", "5",
                    "--benchmark-grace-period", "-1"},
                   "--benchmark-grace-period",
                   "≥ 0"},
        error_case{"warmup_negative",
                   {"-m", "m", "--warmup-request-count", "-1"},
                   "--warmup-request-count"},
        error_case{"prefill_without_streaming",
                   {"-m", "m", "--prefill-concurrency", "2"},
                   "--prefill-concurrency",
                   "--streaming"},
        error_case{"prefill_with_embeddings",
                   {"-m", "m", "--prefill-concurrency", "2", "--streaming",
                    "--endpoint-type", "embeddings"},
                   "--prefill-concurrency",
                   "embeddings"},
        error_case{"prefill_zero",
                   {"-m", "m", "--prefill-concurrency", "0", "--streaming"},
                   "--prefill-concurrency",
                   "≥ 1"},
        error_case{"user_centric_without_users",
                   {"-m", "m", "--user-centric-rate", "1",
                    "--conversation-turn-mean", "2"},
                   "--user-centric-rate",
                   "--num-users"},
        error_case{"user_centric_with_rate",
                   {"-m", "m", "--user-centric-rate", "1", "--num-users", "2",
                    "--request-rate", "3", "--conversation-turn-mean", "2"},
                   "--user-centric-rate",
                   "--request-rate"},
        error_case{"user_centric_single_turn",
                   {"-m", "m", "--user-centric-rate", "1", "--num-users", "2"},
                   "--user-centric-rate",
                   "--conversation-turn-mean"},
        error_case{"user_centric_zero",
                   {"-m", "m", "--user-centric-rate", "0", "--num-users", "2"},
                   "--user-centric-rate",
                   "> 0"},
        error_case{"num_users_without_user_centric",
                   {"-m", "m", "--num-users", "3"},
                   "--num-users",
                   "--user-centric-rate"},
        error_case{"num_users_zero",
                   {"-m", "m", "--user-centric-rate", "1", "--num-users", "0"},
                   "--num-users",
                   "≥ 1"},
        error_case{"goodput_unknown_tag",
                   {"-m", "m", "--goodput", "latency:5"},
                   "--goodput",
                   "unknown metric tag"},
        error_case{"goodput_needs_streaming",
                   {"-m", "m", "--goodput", "time_to_first_token:5"},
                   "--goodput",
                   "--streaming"},
        error_case{"goodput_embeddings_osl",
                   {"-m", "m", "--endpoint-type", "embeddings", "--goodput",
                    "output_sequence_length:5"},
                   "--goodput",
                   "embeddings"},
        error_case{"goodput_bad_value",
                   {"-m", "m", "--goodput", "request_latency:fast"},
                   "--goodput",
                   "positive number"},
        error_case{"goodput_negative_value",
                   {"-m", "m", "--goodput", "request_latency:-5"},
                   "--goodput",
                   "positive number"},
        error_case{
            "goodput_duplicate",
            {"-m", "m", "--goodput", "request_latency:5 request_latency:6"},
            "--goodput",
            "twice"},
        error_case{"goodput_no_colon",
                   {"-m", "m", "--goodput", "request_latency"},
                   "--goodput",
                   "tag:value"},
        error_case{"failed_threshold_negative",
                   {"-m", "m", "--failed-request-threshold", "-0.1"},
                   "--failed-request-threshold",
                   "ratio in [0, 1]"},
        error_case{"failed_threshold_a_percentage",
                   {"-m", "m", "--failed-request-threshold", "5"},
                   "--failed-request-threshold",
                   "5 means 500 %; pass 0.05 for 5 %"},
        error_case{"failed_threshold_over_100",
                   {"-m", "m", "--failed-request-threshold", "150"},
                   "--failed-request-threshold",
                   "ratio in [0, 1]"},
        error_case{"cancellation_rate_over_100",
                   {"-m", "m", "--request-cancellation-rate", "150"},
                   "--request-cancellation-rate",
                   "percentage in [0, 100]"},
        error_case{"cancellation_rate_negative",
                   {"-m", "m", "--request-cancellation-rate", "-1"},
                   "--request-cancellation-rate",
                   "percentage in [0, 100]"},
        error_case{"cancellation_rate_nan",
                   {"-m", "m", "--request-cancellation-rate", "nan"},
                   "--request-cancellation-rate",
                   "percentage in [0, 100]"},
        error_case{"cancellation_delay_negative",
                   {"-m", "m", "--request-cancellation-delay", "-0.5"},
                   "--request-cancellation-delay",
                   "≥ 0"},
        error_case{"cancellation_delay_inf",
                   {"-m", "m", "--request-cancellation-delay", "inf"},
                   "--request-cancellation-delay",
                   "finite"},

        error_case{"export_prefix_empty",
                   {"-m", "m", "--profile-export-prefix", ""},
                   "--profile-export-prefix",
                   "file name prefix"},
        error_case{"export_prefix_a_folder",
                   {"-m", "m", "--profile-export-prefix", "out/run1"},
                   "--profile-export-prefix",
                   "--artifact-dir"},
        error_case{"export_prefix_with_pods",
                   {"-m", "m", "--profile-export-prefix", "run1",
                    "--worker-pods", "2"},
                   "--profile-export-prefix",
                   "--worker-pods"},
        error_case{"artifact_dir_empty",
                   {"-m", "m", "--artifact-dir", ""},
                   "--output-artifact-dir"},
        error_case{"log_level_unknown",
                   {"-m", "m", "--log-level", "loud"},
                   "--log-level",
                   "loud"},
        error_case{"workers_zero",
                   {"-m", "m", "--workers-max", "0"},
                   "--workers-max",
                   "≥ 1"},
        error_case{"record_processors_zero",
                   {"-m", "m", "--record-processors", "0"},
                   "--record-processors",
                   "≥ 1"},
        error_case{"io_threads_zero",
                   {"-m", "m", "--io-threads", "0"},
                   "--io-threads",
                   "≥ 1"},
        error_case{"scheduler_threads_zero",
                   {"-m", "m", "--scheduler-threads", "0"},
                   "--scheduler-threads",
                   "≥ 1"},
        error_case{"worker_pods_zero",
                   {"-m", "m", "--worker-pods", "0"},
                   "--worker-pods",
                   "≥ 1"},
        error_case{"workers_per_pod_zero",
                   {"-m", "m", "--workers-per-pod", "0"},
                   "--workers-per-pod",
                   "≥ 1"},
        error_case{"workers_not_divisible",
                   {"-m", "m", "--worker-pods", "2", "--workers-max", "5"},
                   "--workers-max",
                   "multiple of 2"},
        error_case{"workers_per_pod_disagrees",
                   {"-m", "m", "--worker-pods", "2", "--workers-max", "8",
                    "--workers-per-pod", "3"},
                   "--workers-per-pod",
                   "--workers-max 8"},
        error_case{
            "record_processors_not_divisible",
            {"-m", "m", "--worker-pods", "2", "--record-processors", "3"},
            "--record-processors",
            "multiple of 2"},
        // Limits: values no run can satisfy (docs/profile.md, "Limits").
        error_case{"rate_too_slow",
                   {"-m", "m", "--request-rate", "1e-300"},
                   "--request-rate",
                   "≥ 1e-06 requests/s"},
        error_case{"user_centric_rate_too_slow",
                   {"-m", "m", "--user-centric-rate", "1e-300", "--num-users",
                    "2", "--conversation-turn-mean", "2"},
                   "--user-centric-rate",
                   "≥ 1e-06 requests/s"},
        error_case{"timeout_too_long",
                   {"-m", "m", "--request-timeout-seconds", "9.3e9"},
                   "--request-timeout-seconds",
                   "≤ 10000000.0 s"},
        error_case{"duration_too_long",
                   {"-m", "m", "--benchmark-duration", "1e300"},
                   "--benchmark-duration",
                   "≤ 10000000.0 s"},
        error_case{"io_threads_above_max",
                   {"-m", "m", "--io-threads", "1000"},
                   "--io-threads",
                   "≤ 64"},
        error_case{"io_threads_above_4_per_core",
                   {"-m", "m", "--io-threads", "33"},
                   "--io-threads",
                   "≤ 4 × the 8 cores = 32"},
        error_case{"request_count_above_max",
                   {"-m", "m", "--request-count", "100000001"},
                   "--request-count",
                   "≤ 100000000"},
        error_case{"warmup_count_above_max",
                   {"-m", "m", "--warmup-request-count", "100000001"},
                   "--warmup-request-count",
                   "≤ 100000000"},
        error_case{
            "rate_times_duration_above_max",
            {"-m", "m", "--request-rate", "1e9", "--benchmark-duration", "3"},
            "--request-rate",
            "plans 3000000000.0 requests, above the 100000000"},
        error_case{"concurrency_above_open_files",
                   {"-m", "m", "--concurrency", "99999999999"},
                   "--concurrency",
                   "ulimit -n"},
        error_case{"isl_above_max",
                   {"-m", "m", "--isl", "100000000"},
                   "--isl",
                   "≤ 1000000 tokens"},
        error_case{"isl_stddev_above_max",
                   {"-m", "m", "--isl-stddev", "1e12"},
                   "--isl-stddev",
                   "≤ 1000000 tokens"},
        error_case{"osl_stddev_above_max",
                   {"-m", "m", "--osl", "5", "--osl-stddev", "1e12"},
                   "--osl-stddev",
                   "≤ 1000000 tokens"},
        error_case{"synthetic_dataset_above_max",
                   {"-m", "m", "--num-dataset-entries", "1000000000"},
                   "--num-dataset-entries",
                   "above the 1000000000.0"},
        error_case{"synthetic_sessions_above_max",
                   {"-m", "m", "--conversation-num", "1000", "--isl", "1000000",
                    "--conversation-turn-mean", "2"},
                   "--conversation-num",
                   "1000 prompts × 2 turns"},
        error_case{"osl_above_max",
                   {"-m", "m", "--osl", "1000001"},
                   "--osl",
                   "≤ 1000000 tokens"},
        error_case{"trace_input_length_above_max",
                   {"-m", "m", "--input-file", "@"},
                   "--input-file",
                   "line 2: \"input_length\" 2147483647 is above the 1000000",
                   trace_line
                       + "{\"timestamp\":1,\"input_length\":2147483647}\n"},
        error_case{"trace_output_length_above_max",
                   {"-m", "m", "--input-file", "@"},
                   "--input-file",
                   "line 1: \"output_length\" 1000001 is above",
                   "{\"timestamp\":0,\"input_length\":5,"
                   "\"output_length\":1000001}\n"},
        error_case{"ca_file_not_pem",
                   {"-m", "m", "--ca-file", "@"},
                   "--ca-file",
                   "is not a PEM bundle",
                   "this is not a certificate\n"}),
    [](const auto& info) { return std::string{info.param.name}; });

// Enum spellings are rejected while parsing, naming the flag and choices.
struct enum_case {
  const char* name;
  std::string flag;
};

class profile_enum_validation : public ::testing::TestWithParam<enum_case> {};

TEST_P(profile_enum_validation, rejects_unknown_spelling) {
  const auto& c = GetParam();
  try {
    (void)parse({"-m", "m", c.flag, "bogus"});
    FAIL() << "expected CLI::ValidationError for " << c.flag;
  } catch (const CLI::ValidationError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(c.flag), std::string::npos) << what;
    EXPECT_NE(what.find("'bogus' is not one of"), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    all, profile_enum_validation,
    ::testing::Values(enum_case{"endpoint_type", "--endpoint-type"},
                      enum_case{"model_selection",
                                "--model-selection-strategy"},
                      enum_case{"arrival_pattern", "--arrival-pattern"},
                      enum_case{"dataset_type", "--custom-dataset-type"},
                      enum_case{"export_level", "--export-level"},
                      enum_case{"ui", "--ui"},
                      enum_case{"scheduler_policy", "--scheduler-policy"},
                      enum_case{"io_priority", "--io-priority"},
                      enum_case{"url_strategy", "--url-strategy"}),
    [](const auto& info) { return std::string{info.param.name}; });

// Integers beyond int64 are refused while parsing, naming the flag, instead
// of being clamped to 2^63 − 1 (CLI11's strtoll).
TEST(profile_integers, overflow_is_refused_naming_the_flag) {
  for (const std::string flag :
       {"--request-count", "--concurrency", "--isl", "--osl",
        "--num-dataset-entries", "--warmup-request-count", "--conversation-num",
        "--conversation-turn-mean", "--prefill-concurrency", "--num-users",
        "--fixed-schedule-start-offset", "--fixed-schedule-end-offset"}) {
    SCOPED_TRACE(flag);
    for (const std::string text : {"9223372036854775808", "12x", ""}) {
      try {
        (void)parse({"-m", "m", flag, text});
        ADD_FAILURE() << "expected CLI::ValidationError for '" << text << "'";
      } catch (const CLI::ValidationError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find(flag), std::string::npos) << what;
        EXPECT_NE(what.find("'" + text + "'"), std::string::npos) << what;
      }
    }
  }
  auto cfg = parse_ok({"-m", "m", "--request-count", "100000000"});
  EXPECT_EQ(cfg.request_count, 100000000);
}

TEST(profile_limits, the_bounds_themselves_are_accepted) {
  auto cfg = parse_ok({"-m", "m", "--request-rate", "1e-6",
                       "--request-timeout-seconds", "1e7", "--isl", "1000000",
                       "--osl", "1000000", "--io-threads", "32"},
                      8);
  EXPECT_EQ(cfg.request_rate, 1e-6);
  EXPECT_EQ(cfg.isl_mean, 1000000);
  EXPECT_EQ(cfg.io_threads, 32);
  auto planned = parse_ok(
      {"-m", "m", "--request-rate", "1e6", "--benchmark-duration", "100"});
  EXPECT_EQ(planned.benchmark_duration, 100.0);
}

TEST(profile_limits, a_pem_ca_bundle_is_accepted) {
  temp_file ca{"ca.pem", self_signed_pem()};
  auto cfg = parse_ok({"-m", "m", "--ca-file", ca.path()});
  EXPECT_EQ(cfg.ca_file, ca.path());
}

// Verifies a negative seed is refused rather than wrapped to 2^64 − 1.
TEST(profile_random_seed, rejects_negative_and_accepts_max) {
  EXPECT_THROW((void)parse({"-m", "m", "--random-seed", "-1"}),
               CLI::ValidationError);
  EXPECT_THROW((void)parse({"-m", "m", "--random-seed", "12x"}),
               CLI::ValidationError);
  auto cfg = parse({"-m", "m", "--random-seed", "18446744073709551615"});
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->random_seed, 18446744073709551615ull);
}

} // namespace

TEST(profile_tokenizer, default_is_the_model_except_for_the_mock) {
  auto with_url = parse_ok({"-m", "org/name", "--url", "http://h:1"});
  EXPECT_EQ(effective_tokenizer(with_url), "org/name");
  EXPECT_EQ(effective_tokenizer(parse_ok({"-m", "org/name"})), "whitespace8");
  EXPECT_EQ(effective_tokenizer(
                parse_ok({"-m", "mock-model", "--url", "http://h:1"})),
            "whitespace8");
  EXPECT_EQ(effective_tokenizer(parse_ok(
                {"-m", "org/name", "--url", "http://h:1", "--tokenizer", "x"})),
            "x");
}
