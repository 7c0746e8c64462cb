// profile_export_raw.jsonl lines: valid JSON whatever bytes a server sent.
#include "actors/benchmark/record_processor/record_processor.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

using namespace aiperf;

namespace {

proto::request_record raw_record() {
  proto::request_record r;
  // Move-assigned: assigning the literals trips GCC 12's -Wrestrict bug.
  r.x_request_id = std::string{"req-1"};
  r.conversation_id = std::string{"c"};
  r.worker_id = std::string{"worker_0"};
  r.http_status = 200;
  r.payload = std::string{"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xC3\xA9\"}]}"};
  r.request_headers = {"Content-Type: application/json"};
  r.response_headers = {"Content-Type: text/event-stream"};
  return r;
}

rapidjson::Document strict_parse(const std::string& line) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(line.data(), line.size());
  return d;
}

} // namespace

TEST(raw_line, ill_formed_server_bytes_are_replaced_and_counted) {
  auto r = raw_record();
  r.raw_responses.push_back(
    {1, "data: {\"delta\":\"ok \xFF\xC0\xAF\"}", ""});
  r.raw_responses.push_back({2, "data: \xED\xA0\x80 \xF4\x90\x80\x80", ""});
  r.raw_responses.push_back({3, "data: tail \xE2\x82", ""});
  r.response_headers.push_back("X-Odd: \x80");
  r.has_error = true;
  r.error = {0, "InvalidResponse", "not valid JSON: \xFE"};
  std::string line;
  record_processor::append_raw_line(line, r, "rp0");
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  auto d = strict_parse(line);
  ASSERT_FALSE(d.HasParseError()) << line;
  // 3 + 7 + 1 in the responses, 1 header, 1 in the error.
  EXPECT_EQ(d["metadata"]["invalid_utf8_replaced"].GetUint64(), 13u);
  const auto& rs = d["responses"];
  EXPECT_EQ(std::string{rs[0]["text"].GetString()},
            "data: {\"delta\":\"ok \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"}");
  EXPECT_EQ(std::string{rs[2]["text"].GetString()},
            "data: tail \xEF\xBF\xBD");
  EXPECT_EQ(std::string{d["response_headers"]["X-Odd"].GetString()}, "\xEF\xBF\xBD");
  EXPECT_EQ(std::string{d["error"]["message"].GetString()},
            "not valid JSON: \xEF\xBF\xBD");
  // The well-formed payload is still embedded as JSON, text unchanged.
  ASSERT_TRUE(d["payload"].IsObject());
  EXPECT_STREQ(d["payload"]["messages"][0]["content"].GetString(),
               "caf\xC3\xA9");
}

TEST(raw_line, clean_records_keep_the_layout) {
  auto r = raw_record();
  r.raw_responses.push_back({1, "data: {\"delta\":\"\xE2\x82\xAC\"}", ""});
  std::string line;
  record_processor::append_raw_line(line, r, "rp0");
  line.pop_back();
  auto d = strict_parse(line);
  ASSERT_FALSE(d.HasParseError()) << line;
  EXPECT_FALSE(d["metadata"].HasMember("invalid_utf8_replaced"));
  EXPECT_STREQ(d["responses"][0]["text"].GetString(),
               "data: {\"delta\":\"\xE2\x82\xAC\"}");
}

TEST(raw_line, an_ill_formed_payload_is_written_as_a_replaced_string) {
  auto r = raw_record();
  r.payload = std::string{"{\"content\":\"\xC3\"}"};
  std::string line;
  record_processor::append_raw_line(line, r, "rp0");
  line.pop_back();
  auto d = strict_parse(line);
  ASSERT_FALSE(d.HasParseError()) << line;
  ASSERT_TRUE(d["payload"].IsString());
  EXPECT_EQ(std::string{d["payload"].GetString()},
            "{\"content\":\"\xEF\xBF\xBD\"}");
  EXPECT_EQ(d["metadata"]["invalid_utf8_replaced"].GetUint64(), 1u);
}
