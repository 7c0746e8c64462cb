#include "proto/codec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace aiperf::proto {
namespace {

credit sample_credit(std::uint64_t id) {
  credit c;
  c.id = id;
  c.phase = phase::warmup;
  c.session_num = 7;
  c.conversation = 11;
  c.turn_index = 2;
  c.num_turns = 3;
  c.issued_at_ns = -5;
  c.due_ns = std::numeric_limits<std::int64_t>::max();
  c.url_index = 4;
  return c;
}

request_record sample_request_record() {
  request_record r;
  r.credit_id = 99;
  r.session_num = 3;
  r.turn_index = 1;
  r.phase = benchmark_phase::warmup;
  r.conversation_id = "conv-1";
  r.x_request_id = "req";
  r.x_correlation_id = "corr";
  r.worker_id = "worker_0";
  r.credit_issued_ns = 1;
  r.request_start_ns = 2;
  r.request_end_ns = 3;
  r.clock_offset_ns = -4;
  r.http_status = 200;
  r.streaming = true;
  r.response_ts_ns = {10, 20, 30};
  r.response_is_reasoning = {0, 1, 0};
  r.output_text = std::string("h\0llo", 5); // embedded NUL survives
  r.usage.prompt_tokens = 5;
  r.has_error = true;
  r.error = {502, "sse_error", "boom"};
  r.request_headers = {"a: b", ""};
  r.raw_responses = {{123, "data: x"}};
  return r;
}

metric_record sample_metric_record() {
  metric_record m;
  m.session_num = 1;
  m.x_request_id = "r";
  m.worker_id = "w";
  m.set(record_metric::request_latency, 1.5e9);
  m.set(record_metric::time_to_first_token, 0.25);
  m.values[static_cast<std::size_t>(record_metric::send_lag)]
    = std::numeric_limits<double>::quiet_NaN();
  m.set(record_metric::stream_setup_latency, -0.0);
  m.inter_chunk_latency = {1, 0, -3};
  m.osl_mismatch = true;
  return m;
}

timing_config sample_timing_config() {
  timing_config t;
  t.mode = timing_mode::user_centric;
  t.concurrency = 8;
  t.request_rate = 12.5;
  t.pattern = arrival_pattern::gamma;
  t.random_seed = 42;
  t.duration_ns = 60'000'000'000;
  t.grace_ns = -1;
  t.sessions = {{2, -1, {0, 500}}, {1, 100, {}}};
  return t;
}

/// Encodes, decodes, re-encodes: the bytes must be identical (every field
/// survived) and the decoded value is returned for field checks.
template <class T>
T round_trip(const T& x, std::string_view sender = "svc") {
  auto bytes = encode_frame(x, sender, 3);
  EXPECT_TRUE(bytes.ok());
  auto frame = parse_frame(*bytes);
  EXPECT_TRUE(frame.ok()) << (frame ? "" : frame.error().message);
  EXPECT_EQ(frame->header.type, msg_type_v<T>);
  EXPECT_EQ(frame->header.sender, sender);
  EXPECT_EQ(frame->header.flags, 3);
  auto decoded = decode_payload<T>(*frame);
  EXPECT_TRUE(decoded.ok()) << (decoded ? "" : decoded.error().message);
  auto again = encode_frame(*decoded, sender, 3);
  EXPECT_EQ(*again, *bytes) << "re-encoding changed the bytes";
  return *decoded;
}

TEST(codec, credit_and_credit_batch_round_trip) {
  auto c = round_trip(sample_credit(1));
  EXPECT_EQ(c.id, 1u);
  EXPECT_EQ(c.phase, phase::warmup);
  EXPECT_EQ(c.issued_at_ns, -5);
  EXPECT_EQ(c.due_ns, std::numeric_limits<std::int64_t>::max());
  auto batch = round_trip(credit_batch{sample_credit(1), sample_credit(2)});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1].id, 2u);
  EXPECT_TRUE(round_trip(credit_batch{}).empty());
}

TEST(codec, credit_return_types_round_trip) {
  credit_return r{77, 3, credit_outcome::lost, true};
  auto x = round_trip(r);
  EXPECT_EQ(x.credit_id, 77u);
  EXPECT_EQ(x.outcome, credit_outcome::lost);
  EXPECT_TRUE(x.failed);
  auto b = round_trip(credit_return_batch{r, r, r});
  EXPECT_EQ(b.size(), 3u);
}

TEST(codec, record_batches_round_trip) {
  auto rb = round_trip(request_record_batch{{sample_request_record(), {}}});
  ASSERT_EQ(rb.records.size(), 2u);
  EXPECT_EQ(rb.records[0].output_text, std::string("h\0llo", 5));
  EXPECT_EQ(rb.records[0].response_ts_ns, (std::vector<std::int64_t>{10, 20, 30}));
  EXPECT_EQ(rb.records[0].error, (error_details{502, "sse_error", "boom"}));
  EXPECT_EQ(rb.records[0].raw_responses.at(0).text, "data: x");
  auto mb = round_trip(metric_record_batch{{sample_metric_record()}});
  ASSERT_EQ(mb.records.size(), 1u);
  EXPECT_EQ(mb.records[0].get(record_metric::request_latency), 1.5e9);
  EXPECT_FALSE(mb.records[0].has(record_metric::send_lag));
  // Raw IEEE bits: NaN and −0.0 survive, unlike CAF 0.17's float packing.
  EXPECT_TRUE(std::isnan(
    mb.records[0].values[static_cast<std::size_t>(record_metric::send_lag)]));
  EXPECT_TRUE(std::signbit(
    *mb.records[0].get(record_metric::stream_setup_latency)));
  EXPECT_EQ(mb.records[0].inter_chunk_latency,
            (std::vector<std::int64_t>{1, 0, -3}));
}

TEST(codec, timing_types_round_trip) {
  auto t = round_trip(sample_timing_config());
  EXPECT_EQ(t.mode, timing_mode::user_centric);
  ASSERT_EQ(t.sessions.size(), 2u);
  EXPECT_EQ(t.sessions[0].turn_delay_ns, (std::vector<std::int64_t>{0, 500}));
  phase_stats s;
  s.sent = 10;
  s.lost = 1;
  s.timed_out = true;
  auto ps = round_trip(s);
  EXPECT_EQ(ps.sent, 10u);
  EXPECT_TRUE(ps.timed_out);
}

TEST(codec, control_messages_round_trip) {
  EXPECT_EQ(round_trip(register_service{"worker_1", "worker", "pod-a", 42}).pid,
            42u);
  EXPECT_EQ(round_trip(registered{"worker_1", false, "duplicate id"}).reason,
            "duplicate id");
  EXPECT_EQ(round_trip(heartbeat{"w", "running", 5}).state, "running");
  EXPECT_EQ(round_trip(time_ping{3, 100}).send_wall_ns, 100);
  EXPECT_EQ(round_trip(time_pong{3, 100, 150, 151}).recv_wall_ns, 150);
  EXPECT_EQ(round_trip(command{9, "configure", "{\"a\":1}"}).body, "{\"a\":1}");
  EXPECT_EQ(round_trip(ack{9, false, "bad"}).error, "bad");
  EXPECT_EQ(round_trip(shutdown{"done", 3}).exit_code, 3);
  EXPECT_EQ(round_trip(worker_connected{"worker_1"}).worker_id, "worker_1");
}

TEST(codec, decode_any_returns_the_alternative_the_header_names) {
  auto bytes = encode_frame(sample_timing_config(), "tm");
  auto frame = parse_frame(*bytes);
  ASSERT_TRUE(frame.ok());
  auto any = decode_any(*frame);
  ASSERT_TRUE(any.ok());
  ASSERT_TRUE(std::holds_alternative<timing_config>(*any));
  EXPECT_EQ(std::get<timing_config>(*any).random_seed, 42u);
}

TEST(codec, every_msg_type_id_maps_back) {
  for (std::uint16_t id = 0; id < 64; ++id) {
    auto t = to_msg_type(id);
    if (t) {
      EXPECT_EQ(static_cast<std::uint16_t>(*t), id);
    }
  }
  EXPECT_FALSE(to_msg_type(0));
  EXPECT_EQ(to_msg_type(24), msg_type::worker_connected);
}

TEST(codec, version_mismatch_is_a_clear_error) {
  auto bytes = *encode_frame(sample_credit(1), "svc");
  bytes[4] = 2; // version 2
  auto frame = parse_frame(bytes);
  ASSERT_FALSE(frame.ok());
  EXPECT_EQ(frame.error().code, codec_errc::version_mismatch);
  EXPECT_NE(frame.error().message.find("version 2"), std::string::npos);
  EXPECT_NE(frame.error().message.find("same aiperf-node version"),
            std::string::npos);
}

TEST(codec, bad_magic_unknown_type_and_wrong_type_are_rejected) {
  auto bytes = *encode_frame(sample_credit(1), "svc");
  auto bad = bytes;
  bad[0] = 'X';
  EXPECT_EQ(parse_frame(bad).error().code, codec_errc::bad_magic);
  bad = bytes;
  bad[6] = static_cast<char>(200);
  EXPECT_EQ(parse_frame(bad).error().code, codec_errc::unknown_type);
  auto frame = parse_frame(bytes);
  auto wrong = decode_payload<credit_return>(*frame);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, codec_errc::type_mismatch);
}

TEST(codec, impossible_field_values_are_bad_value) {
  credit_return r{1, 2, credit_outcome::ok, false};
  auto bytes = *encode_frame(r, "");
  // Payload: u64 id, u32 worker, u8 outcome, u8 failed.
  auto bad = bytes;
  bad[frame_header_size + 12] = 9; // outcome 9
  auto x = decode_frame<credit_return>(bad);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.error().code, codec_errc::bad_value);
  bad = bytes;
  bad[frame_header_size + 13] = 2; // bool 2
  EXPECT_EQ(decode_frame<credit_return>(bad).error().code,
            codec_errc::bad_value);
}

TEST(codec, truncation_at_every_byte_is_an_error) {
  auto bytes = *encode_frame(request_record_batch{{sample_request_record()}},
                             "worker_0");
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto frame = parse_frame(std::string_view{bytes}.substr(0, n));
    ASSERT_FALSE(frame.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(frame.error().code, codec_errc::truncated) << n;
  }
  auto longer = bytes + "x";
  EXPECT_EQ(parse_frame(longer).error().code, codec_errc::trailing_bytes);
}

TEST(codec, payload_truncation_with_a_consistent_header_is_an_error) {
  // A sender that lies consistently: header length matches a cut payload.
  auto full = *encode_frame(sample_timing_config(), "tm");
  auto payload_size = full.size() - frame_header_size - 2;
  for (std::size_t cut = 0; cut < payload_size; ++cut) {
    auto bytes = full.substr(0, full.size() - payload_size + cut);
    auto p = static_cast<std::uint32_t>(cut);
    std::memcpy(bytes.data() + 12, &p, 4);
    auto x = decode_frame<timing_config>(bytes);
    ASSERT_FALSE(x.ok()) << "payload cut at " << cut << " decoded";
    EXPECT_EQ(x.error().code, codec_errc::truncated) << cut;
  }
}

TEST(codec, oversized_sender_is_refused_on_encode) {
  auto x = encode_frame(sample_credit(1), std::string(300, 's'));
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.error().code, codec_errc::too_large);
}

TEST(codec, random_bytes_and_bit_flips_never_crash) {
  std::mt19937_64 rng{12345};
  std::uniform_int_distribution<int> byte{0, 255};
  std::size_t rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string junk(static_cast<std::size_t>(byte(rng)), '\0');
    for (auto& ch : junk)
      ch = static_cast<char>(byte(rng));
    if (i % 2 == 0 && junk.size() >= 6) { // get past magic/version sometimes
      std::memcpy(junk.data(), &wire_magic, 4);
      std::memcpy(junk.data() + 4, &wire_version, 2);
    }
    auto frame = parse_frame(junk);
    if (!frame.ok()) {
      ++rejected;
      continue;
    }
    auto any = decode_any(*frame);
    rejected += any.ok() ? 0 : 1;
  }
  EXPECT_GT(rejected, 19000u);
  // Single bit flips of a valid frame: either an error or a valid message.
  auto good = *encode_frame(metric_record_batch{{sample_metric_record()}}, "rp");
  std::size_t decoded = 0;
  for (std::size_t bit = 0; bit < good.size() * 8; ++bit) {
    auto flipped = good;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    auto frame = parse_frame(flipped);
    if (frame.ok() && decode_any(*frame).ok())
      ++decoded;
  }
  // Most payload bits are values (any bit pattern valid), header bits are not.
  EXPECT_LT(decoded, good.size() * 8);
}

} // namespace
} // namespace aiperf::proto
