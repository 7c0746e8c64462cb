#include "config/profile/profile_json.hpp"
#include "tests/config/profile/profile_test_support.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

using namespace aiperf::config;
using aiperf::config::testing::parse;
using aiperf::config::testing::temp_file;

namespace {

profile_config full_config() {
  auto cfg = parse({"-m",
                    "org/model,other",
                    "-u",
                    "localhost:8000",
                    "-u",
                    "https://[::1]:8443/v1",
                    "--endpoint-type",
                    "completions",
                    "--endpoint",
                    "/v1/custom",
                    "--streaming",
                    "--api-key",
                    "sk-secret",
                    "-H",
                    "X-Token: tok-secret",
                    "--extra-inputs",
                    "ignore_eos:true",
                    "temperature:0.7",
                    "stop:\"x\"",
                    "--extra-inputs",
                    "{\"nested\": {\"a\": [1, 2.5]}}",
                    "--request-timeout-seconds",
                    "12.5",
                    "--use-server-token-count",
                    "--use-legacy-max-tokens",
                    "--concurrency",
                    "12",
                    "--request-rate",
                    "3.3",
                    "--arrival-pattern",
                    "gamma",
                    "--arrival-smoothness",
                    "0.25",
                    "--benchmark-duration",
                    "90",
                    "--benchmark-grace-period",
                    "inf",
                    "--warmup-request-count",
                    "4",
                    "--prefill-concurrency",
                    "3",
                    "--goodput",
                    "request_latency:250.5 time_to_first_token:40",
                    "--failed-request-threshold",
                    "0.125",
                    "--random-seed",
                    "18446744073709551615",
                    "--isl",
                    "123",
                    "--isl-stddev",
                    "0.1",
                    "--osl",
                    "45",
                    "--osl-stddev",
                    "2",
                    "--conversation-num",
                    "9",
                    "--conversation-turn-mean",
                    "3",
                    "--conversation-turn-stddev",
                    "1",
                    "--conversation-turn-delay-mean",
                    "100.25",
                    "--conversation-turn-delay-stddev",
                    "5",
                    "--conversation-turn-delay-ratio",
                    "0.5",
                    "--num-dataset-entries",
                    "77",
                    "--artifact-dir",
                    "out dir",
                    "--export-level",
                    "raw",
                    "--ui",
                    "none",
                    "--log-level",
                    "debug",
                    "--scheduler-policy",
                    "stealing",
                    "--scheduler-threads",
                    "3",
                    "--io-threads",
                    "2",
                    "--worker-pods",
                    "2",
                    "--workers-per-pod",
                    "4",
                    "--record-processors",
                    "2",
                    "--io-priority",
                    "high",
                    "--insecure"},
                   8);
  EXPECT_TRUE(cfg) << aiperf::error_message(cfg.error());
  return cfg ? *cfg : profile_config{};
}

} // namespace

TEST(profile_json, round_trips_a_full_config_exactly) {
  auto cfg = full_config();
  auto json = to_json(cfg, false);
  auto back = from_json(json);
  ASSERT_TRUE(back) << aiperf::error_message(back.error());
  EXPECT_EQ(*back, cfg);
  EXPECT_EQ(to_json(*back, false), json);
}

TEST(profile_json, round_trips_defaults_and_fixed_schedule) {
  auto plain = parse({"-m", "m"});
  ASSERT_TRUE(plain);
  auto back = from_json(to_json(*plain, false));
  ASSERT_TRUE(back) << aiperf::error_message(back.error());
  EXPECT_EQ(*back, *plain);
  temp_file trace{"json_trace.jsonl", "{\"timestamp\":0,\"input_length\":1}\n"};
  auto fixed = parse({"-m", "m", "--input-file", trace.path(),
                      "--fixed-schedule-start-offset", "0",
                      "--fixed-schedule-end-offset", "1000"});
  ASSERT_TRUE(fixed) << aiperf::error_message(fixed.error());
  auto fixed_back = from_json(to_json(*fixed, false));
  ASSERT_TRUE(fixed_back) << aiperf::error_message(fixed_back.error());
  EXPECT_EQ(*fixed_back, *fixed);
}

// Verifies the JSON layout other components (exporters, pods) rely on.
TEST(profile_json, layout_has_sections_and_typed_values) {
  auto cfg = full_config();
  rapidjson::Document doc;
  doc.Parse(to_json(cfg, false).c_str());
  ASSERT_TRUE(doc.IsObject());
  for (auto section : {"endpoint", "input", "loadgen", "output", "runtime"})
    EXPECT_TRUE(doc.HasMember(section) && doc[section].IsObject()) << section;
  EXPECT_STREQ(doc["endpoint"]["endpoint_type"].GetString(), "completions");
  EXPECT_TRUE(doc["endpoint"]["extra_inputs"]["ignore_eos"].GetBool());
  EXPECT_EQ(doc["endpoint"]["extra_inputs"]["nested"]["a"][1].GetDouble(), 2.5);
  EXPECT_EQ(doc["loadgen"]["concurrency"].GetInt64(), 12);
  EXPECT_EQ(doc["loadgen"]["goodput"]["request_latency"].GetDouble(), 250.5);
  EXPECT_STREQ(doc["loadgen"]["benchmark_grace_period"].GetString(), "inf");
  EXPECT_EQ(doc["input"]["random_seed"].GetUint64(), 18446744073709551615ull);
  EXPECT_FALSE(doc["loadgen"].HasMember("request_count")); // unset: omitted
  EXPECT_FALSE(doc.HasMember("cli"));
}

TEST(profile_json, redaction_hides_api_key_and_header_values) {
  auto cfg = full_config();
  auto plain = to_json(cfg, false);
  EXPECT_NE(plain.find("sk-secret"), std::string::npos);
  EXPECT_NE(plain.find("tok-secret"), std::string::npos);
  auto hidden = to_json(cfg, true);
  EXPECT_EQ(hidden.find("sk-secret"), std::string::npos);
  EXPECT_EQ(hidden.find("tok-secret"), std::string::npos);
  auto back = from_json(hidden);
  ASSERT_TRUE(back) << aiperf::error_message(back.error());
  EXPECT_EQ(back->api_key, std::string{redacted});
  ASSERT_EQ(back->headers.size(), 1u);
  EXPECT_EQ(back->headers[0].name, "X-Token");
  EXPECT_EQ(back->headers[0].value, std::string{redacted});
  // Everything else survives redaction.
  back->api_key = cfg.api_key;
  back->headers = cfg.headers;
  EXPECT_EQ(*back, cfg);
}

TEST(profile_json, redaction_hides_url_user_info) {
  auto cfg = parse({"-m", "m", "-u", "http://alice:pw-secret@h:8000/v1", "-u", "http://h2:1"});
  ASSERT_TRUE(cfg) << aiperf::error_message(cfg.error());
  // The user-info survives finalization (derive normalizes the URL).
  EXPECT_EQ(cfg->urls[0], "http://alice:pw-secret@h:8000/v1");
  EXPECT_NE(to_json(*cfg, false).find("pw-secret"), std::string::npos);
  auto hidden = to_json(*cfg, true);
  EXPECT_EQ(hidden.find("pw-secret"), std::string::npos) << hidden;
  EXPECT_EQ(hidden.find("alice"), std::string::npos) << hidden;
  EXPECT_NE(hidden.find("http://<redacted>@h:8000/v1"), std::string::npos) << hidden;
  EXPECT_NE(hidden.find("http://h2:1"), std::string::npos) << hidden;
}

TEST(profile_json, rejects_invalid_json) {
  auto r = from_json("{\"endpoint\": ");
  ASSERT_FALSE(r);
  EXPECT_EQ(error_flag(r.error()), "input_config");
  EXPECT_NE(aiperf::error_message(r.error()).find("invalid JSON"),
            std::string::npos);
}

TEST(profile_json, rejects_unknown_keys_by_path) {
  auto r = from_json(
      R"({"endpoint": {"model_names": ["m"]}, "loadgen": {"concurrenzy": 3}})");
  ASSERT_FALSE(r);
  EXPECT_EQ(error_flag(r.error()), "input_config.loadgen.concurrenzy");
  auto s = from_json(R"({"endpoint": {"model_names": ["m"]}, "extra": {}})");
  ASSERT_FALSE(s);
  EXPECT_EQ(error_flag(s.error()), "input_config.extra");
}

TEST(profile_json, rejects_wrong_types_by_path) {
  auto r = from_json(
      R"({"endpoint": {"model_names": ["m"]}, "loadgen": {"concurrency": "8"}})");
  ASSERT_FALSE(r);
  EXPECT_EQ(error_flag(r.error()), "input_config.loadgen.concurrency");
  EXPECT_NE(aiperf::error_message(r.error()).find("integer"),
            std::string::npos);
  auto e = from_json(
      R"({"endpoint": {"model_names": ["m"], "endpoint_type": "rerank"}})");
  ASSERT_FALSE(e);
  EXPECT_EQ(error_flag(e.error()), "input_config.endpoint.endpoint_type");
}

TEST(profile_json, validates_what_it_reads) {
  auto r = from_json(
      R"({"endpoint": {"model_names": ["m"]}, "loadgen": {"concurrency": 0}})");
  ASSERT_FALSE(r);
  EXPECT_EQ(error_flag(r.error()), "--concurrency");
  auto missing = from_json("{}");
  ASSERT_FALSE(missing);
  EXPECT_EQ(error_flag(missing.error()), "--model");
}
