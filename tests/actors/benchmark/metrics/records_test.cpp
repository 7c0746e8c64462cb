#include "proto/records.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>
#include <caf/make_message.hpp>

#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

using namespace aiperf;

// CAF messages are copy-on-write: every record type must be copyable.
static_assert(std::is_copy_constructible_v<proto::request_record>);
static_assert(std::is_copy_constructible_v<proto::metric_record>);
static_assert(std::is_copy_constructible_v<proto::request_record_batch>);
static_assert(std::is_copy_constructible_v<proto::metric_record_batch>);
static_assert(std::is_copy_constructible_v<proto::error_details>);
static_assert(std::is_copy_constructible_v<proto::usage_counts>);
static_assert(std::is_copy_constructible_v<proto::raw_response>);
static_assert(std::is_nothrow_move_constructible_v<proto::request_record>);
static_assert(std::is_nothrow_move_constructible_v<proto::metric_record>);

TEST(records, metric_record_values_start_absent) {
  proto::metric_record m;
  EXPECT_FALSE(m.has(proto::record_metric::time_to_first_token));
  EXPECT_FALSE(m.get(proto::record_metric::error_isl));
  m.set(proto::record_metric::error_isl, 12);
  EXPECT_EQ(m.get(proto::record_metric::error_isl), 12.0);
}

// Verifies the inspect() overloads cover the fields: a binary round trip
// reproduces the batch.
TEST(records, batches_round_trip_through_caf_serialization) {
  proto::request_record r;
  r.credit_id = 7;
  r.x_request_id = "abc";
  r.phase = proto::benchmark_phase::warmup;
  r.response_ts_ns = {1, 2, 3};
  r.usage.completion_tokens = 9;
  r.raw_responses.push_back({5, "data: x"});
  r.error = {500, "HTTPError", "boom"};
  proto::request_record_batch batch{{r, r}};
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  ASSERT_FALSE(sink(batch));
  proto::request_record_batch back;
  caf::binary_deserializer source{nullptr, buf};
  ASSERT_FALSE(source(back));
  ASSERT_EQ(back.records.size(), 2u);
  EXPECT_EQ(back.records[1].credit_id, 7u);
  EXPECT_EQ(back.records[1].x_request_id, "abc");
  EXPECT_EQ(back.records[1].phase, proto::benchmark_phase::warmup);
  EXPECT_EQ(back.records[1].response_ts_ns,
            (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(back.records[1].usage.completion_tokens, 9);
  EXPECT_EQ(back.records[1].raw_responses[0].text, "data: x");
  EXPECT_EQ(back.records[1].error, r.error);

  proto::metric_record m;
  m.set(proto::record_metric::request_latency, 25);
  m.inter_chunk_latency = {10, 15};
  proto::metric_record_batch mb{{m}};
  auto msg = caf::make_message(mb);
  EXPECT_EQ(msg.size(), 1u);
  EXPECT_NE(caf::deep_to_string(mb).find("metric_record"), std::string::npos);
  std::vector<char> buf2;
  caf::binary_serializer sink2{nullptr, buf2};
  ASSERT_FALSE(sink2(mb));
  proto::metric_record_batch mback;
  caf::binary_deserializer source2{nullptr, buf2};
  ASSERT_FALSE(source2(mback));
  ASSERT_EQ(mback.records.size(), 1u);
  EXPECT_EQ(mback.records[0].get(proto::record_metric::request_latency), 25.0);
  EXPECT_FALSE(mback.records[0].has(proto::record_metric::time_to_first_token));
  EXPECT_EQ(mback.records[0].inter_chunk_latency,
            (std::vector<std::int64_t>{10, 15}));
}
