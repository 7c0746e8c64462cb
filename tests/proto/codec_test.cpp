#include "proto/codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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
  EXPECT_TRUE(static_cast<bool>(bytes));
  auto frame = parse_frame(*bytes);
  EXPECT_TRUE(frame) << (frame ? "" : error_message(frame.error()));
  EXPECT_EQ(frame->header.type, msg_type_v<T>);
  EXPECT_EQ(frame->header.sender, sender);
  EXPECT_EQ(frame->header.flags, 3);
  auto decoded = decode_payload<T>(*frame);
  EXPECT_TRUE(decoded) << (decoded ? "" : error_message(decoded.error()));
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
  ASSERT_TRUE(frame);
  auto any = decode_any(*frame);
  ASSERT_TRUE(any);
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
  constexpr auto other = static_cast<std::uint16_t>(wire_version + 1);
  bytes[4] = static_cast<char>(other); // a newer peer
  auto frame = parse_frame(bytes);
  ASSERT_FALSE(frame);
  EXPECT_EQ(error_code(frame.error(), errc{}), errc::version_mismatch);
  EXPECT_NE(error_message(frame.error()).find("version " + std::to_string(other)),
            std::string::npos)
    << error_message(frame.error());
  EXPECT_NE(error_message(frame.error()).find("same aiperf-node version"),
            std::string::npos);
}

TEST(codec, bad_magic_unknown_type_and_wrong_type_are_rejected) {
  auto bytes = *encode_frame(sample_credit(1), "svc");
  auto bad = bytes;
  bad[0] = 'X';
  EXPECT_EQ(error_code(parse_frame(bad).error(), errc{}), errc::bad_magic);
  bad = bytes;
  bad[6] = static_cast<char>(200);
  EXPECT_EQ(error_code(parse_frame(bad).error(), errc{}), errc::unknown_type);
  auto frame = parse_frame(bytes);
  auto wrong = decode_payload<credit_return>(*frame);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(error_code(wrong.error(), errc{}), errc::type_mismatch);
}

TEST(codec, impossible_field_values_are_bad_value) {
  credit_return r{1, 2, credit_outcome::ok, false};
  auto bytes = *encode_frame(r, "");
  // Payload: u64 id, u32 worker, u8 outcome, u8 failed.
  auto bad = bytes;
  bad[frame_header_size + 12] = 9; // outcome 9
  auto x = decode_frame<credit_return>(bad);
  ASSERT_FALSE(x);
  EXPECT_EQ(error_code(x.error(), errc{}), errc::bad_value);
  bad = bytes;
  bad[frame_header_size + 13] = 2; // bool 2
  EXPECT_EQ(error_code(decode_frame<credit_return>(bad).error(), errc{}),
            errc::bad_value);
}

TEST(codec, truncation_at_every_byte_is_an_error) {
  auto bytes = *encode_frame(request_record_batch{{sample_request_record()}},
                             "worker_0");
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto frame = parse_frame(std::string_view{bytes}.substr(0, n));
    ASSERT_FALSE(frame) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(error_code(frame.error(), errc{}), errc::truncated) << n;
  }
  auto longer = bytes + "x";
  EXPECT_EQ(error_code(parse_frame(longer).error(), errc{}), errc::trailing_bytes);
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
    ASSERT_FALSE(x) << "payload cut at " << cut << " decoded";
    EXPECT_EQ(error_code(x.error(), errc{}), errc::truncated) << cut;
  }
}

TEST(codec, oversized_sender_is_refused_on_encode) {
  auto x = encode_frame(sample_credit(1), std::string(300, 's'));
  ASSERT_FALSE(x);
  EXPECT_EQ(error_code(x.error(), errc{}), errc::too_large);
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
    if (!frame) {
      ++rejected;
      continue;
    }
    auto any = decode_any(*frame);
    rejected += any ? 0 : 1;
  }
  EXPECT_GT(rejected, 19000u);
  // Single bit flips of a valid frame: either an error or a valid message.
  auto good = *encode_frame(metric_record_batch{{sample_metric_record()}}, "rp");
  std::size_t decoded = 0;
  for (std::size_t bit = 0; bit < good.size() * 8; ++bit) {
    auto flipped = good;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    auto frame = parse_frame(flipped);
    if (frame && static_cast<bool>(decode_any(*frame)))
      ++decoded;
  }
  // Most payload bits are values (any bit pattern valid), header bits are not.
  EXPECT_LT(decoded, good.size() * 8);
}


// -- golden byte layout -------------------------------------------------------
//
// One fixed message of every frame type, encoded and compared with bytes
// recorded in this file. The round trips above cannot see a layout change
// (both ends change together); a peer of another build can. So a changed
// field order, width, type or a new field fails here. When it does on
// purpose: bump wire_version in proto/codec.hpp (the golden headers carry it
// too, so they all change) and paste the bytes the failure prints. Every
// field holds a value distinct from its neighbours', so swapping two fields
// of one type changes the bytes as well.

credit golden_credit(std::uint64_t id) {
  credit c;
  c.id = id;
  c.phase = phase::warmup;
  c.session_num = 2;
  c.conversation = 3;
  c.turn_index = 4;
  c.num_turns = 5;
  c.issued_at_ns = -6;
  c.due_ns = 7;
  c.url_index = 8;
  return c;
}

request_record golden_request_record() {
  request_record r;
  r.credit_id = 1;
  r.session_num = 2;
  r.turn_index = 3;
  r.phase = benchmark_phase::warmup;
  r.conversation_id = "c";
  r.x_request_id = "r";
  r.x_correlation_id = "x";
  r.worker_id = "w";
  r.credit_issued_ns = 4;
  r.credit_received_ns = 5;
  r.intended_send_ns = 6;
  r.request_start_ns = 7;
  r.request_start_wall_ns = 8;
  r.request_ack_ns = 9;
  r.request_end_ns = 10;
  r.clock_offset_ns = -11;
  r.http_status = 200;
  r.streaming = true;
  r.response_ts_ns = {12, 13};
  r.response_is_reasoning = {1, 0};
  r.output_text = "o";
  r.reasoning_text = "t";
  r.usage = {14, 15, 16, 17};
  r.input_tokens = 18;
  r.requested_output_tokens = 19;
  r.has_error = true;
  r.error = {502, "e", "m"};
  r.was_cancelled = false;
  r.cancellation_time_ns = 20;
  r.payload = "p";
  r.request_headers = {"q"};
  r.response_headers = {"s"};
  r.raw_responses = {{21, "d", "k"}};
  return r;
}

metric_record golden_metric_record() {
  metric_record m;
  m.session_num = 1;
  m.x_request_id = "r";
  m.x_correlation_id = "x";
  m.conversation_id = "c";
  m.turn_index = 2;
  m.credit_issued_ns = 3;
  m.request_start_ns = 4;
  m.request_ack_ns = 5;
  m.request_end_ns = 6;
  m.worker_id = "w";
  m.record_processor_id = "p";
  m.phase = benchmark_phase::warmup;
  m.was_cancelled = true;
  m.cancellation_time_ns = 7;
  for (std::size_t i = 0; i < record_metric_count; ++i)
    m.values[i] = static_cast<double>(i + 1);
  m.present = 0x0f0f0f0f;
  m.inter_chunk_latency = {8, 9};
  m.usage_discrepancy = true;
  m.osl_mismatch = false;
  m.has_error = true;
  m.error = {499, "e", "m"};
  return m;
}

timing_config golden_timing_config() {
  timing_config t;
  t.mode = timing_mode::fixed_schedule;
  t.concurrency = 1;
  t.prefill_concurrency = 2;
  t.request_rate = 3.5;
  t.pattern = arrival_pattern::gamma;
  t.smoothness = 4.5;
  t.random_seed = 5;
  t.warmup_request_count = 6;
  t.request_count = 7;
  t.duration_ns = 8;
  t.grace_ns = -9;
  t.num_users = 10;
  t.user_centric_rate = 11.5;
  t.num_urls = 12;
  t.lookahead_ns = 13;
  t.catch_up_window_ns = 14;
  t.sessions = {{15, 16, {17}}};
  return t;
}

phase_stats golden_phase_stats() {
  phase_stats s;
  s.phase = phase::warmup;
  s.sent = 1;
  s.returned = 2;
  s.cancelled = 3;
  s.lost = 4;
  s.sessions_started = 5;
  s.skipped_sends = 6;
  s.start_ns = 7;
  s.end_ns = 8;
  s.timed_out = true;
  s.was_cancelled = false;
  return s;
}

/// Lowercase hex of `bytes`: the 16-byte header, the sender, then the
/// payload in lines of 32 bytes, as C++ string literals to paste.
std::string golden_literal(std::string_view bytes, std::size_t sender_size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  auto line = [&](std::string_view part) {
    out += "\n    \"";
    for (unsigned char ch : part) {
      out += digits[ch >> 4];
      out += digits[ch & 15];
    }
    out += '"';
  };
  line(bytes.substr(0, frame_header_size));
  line(bytes.substr(frame_header_size, sender_size));
  for (auto at = frame_header_size + sender_size; at < bytes.size(); at += 32)
    line(bytes.substr(at, 32));
  return out;
}

std::string hex_of(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : bytes) {
    out += digits[ch >> 4];
    out += digits[ch & 15];
  }
  return out;
}

struct golden_frame {
  msg_type type;
  std::string bytes; // encoded with sender "svc", flags 0
  const char* hex;
};

template <class T>
golden_frame golden(const T& msg, const char* hex) {
  auto bytes = encode_frame(msg, "svc");
  EXPECT_TRUE(static_cast<bool>(bytes));
  return {msg_type_v<T>, bytes ? *bytes : std::string{}, hex};
}

std::vector<golden_frame> golden_frames() {
  // Each: header (magic, version, type, flags, sender and payload sizes),
  // sender "svc", payload.
  std::vector<golden_frame> out;
  out.push_back(golden(golden_credit(1),
    "4149504e04000100000003002d000000"
    "737663"
    "01000000000000000002000000030000000400000005000000faffffffffffff"
    "ff070000000000000008000000"));
  out.push_back(golden(credit_batch{golden_credit(1), golden_credit(9)},
    "4149504e04000200000003005e000000"
    "737663"
    "0200000001000000000000000002000000030000000400000005000000faffff"
    "ffffffffff070000000000000008000000090000000000000000020000000300"
    "00000400000005000000faffffffffffffff070000000000000008000000"));
  out.push_back(golden(credit_return{1, 2, credit_outcome::cancelled, true},
    "4149504e04000300000003000e000000"
    "737663"
    "0100000000000000020000000101"));
  out.push_back(golden(credit_return_batch{{1, 2, credit_outcome::lost, false},
                                           {3, 4, credit_outcome::ok, true}},
    "4149504e040004000000030020000000"
    "737663"
    "0200000001000000000000000200000002000300000000000000040000000001"));
  out.push_back(golden(request_record_batch{{golden_request_record()}},
    "4149504e040005000000030008010000"
    "737663"
    "0100000001000000000000000200000003000000000100000063010000007201"
    "0000007801000000770400000000000000050000000000000006000000000000"
    "000700000000000000080000000000000009000000000000000a000000000000"
    "00f5ffffffffffffffc80000000100020000000c000000000000000d00000000"
    "000000020000000100010000006f01000000740e000000000000000f00000000"
    "0000001000000000000000110000000000000012000000000000001300000000"
    "00000001f60100000100000065010000006d0014000000000000000100000070"
    "0100000001000000710100000001000000730100000015000000000000000100"
    "000064010000006b"));
  out.push_back(golden(metric_record_batch{{golden_metric_record()}},
    "4149504e040006000000030059010000"
    "737663"
    "0100000001000000010000007201000000780100000063020000000300000000"
    "0000000400000000000000050000000000000006000000000000000100000077"
    "010000007000010700000000000000000000000000f03f000000000000004000"
    "0000000000084000000000000010400000000000001440000000000000184000"
    "00000000001c4000000000000020400000000000002240000000000000244000"
    "0000000000264000000000000028400000000000002a400000000000002c4000"
    "00000000002e4000000000000030400000000000003140000000000000324000"
    "0000000000334000000000000034400000000000003540000000000000364000"
    "00000000003740000000000000384000000000000039400000000000003a4000"
    "00000000003b400000000000003c400f0f0f0f02000000080000000000000009"
    "0000000000000001000001f30100000100000065010000006d"));
  out.push_back(golden(golden_timing_config(),
    "4149504e04000700000003007e000000"
    "737663"
    "0201000000020000000000000000000c40020000000000001240050000000000"
    "0000060000000000000007000000000000000800000000000000f7ffffffffff"
    "ffff0a00000000000000000027400c0000000d000000000000000e0000000000"
    "0000010000000f0000001000000000000000010000001100000000000000"));
  out.push_back(golden(golden_phase_stats(),
    "4149504e040008000000030043000000"
    "737663"
    "0001000000000000000200000000000000030000000000000004000000000000"
    "0005000000000000000600000000000000070000000000000008000000000000"
    "000100"));
  out.push_back(golden(register_service{"i", "t", "n", 1},
    "4149504e040010000000030013000000"
    "737663"
    "01000000690100000074010000006e01000000"));
  out.push_back(golden(registered{"i", false, "r", true},
    "4149504e04001100000003000c000000"
    "737663"
    "010000006900010000007201"));
  out.push_back(golden(heartbeat{"i", "s", -1, -2, 3, -4, true},
    "4149504e040012000000030027000000"
    "737663"
    "01000000690100000073fffffffffffffffffeffffffffffffff03000000fcff"
    "ffffffffffff01"));
  out.push_back(golden(time_ping{1, 2},
    "4149504e040013000000030010000000"
    "737663"
    "01000000000000000200000000000000"));
  out.push_back(golden(time_pong{1, 2, 3, 4},
    "4149504e040014000000030020000000"
    "737663"
    "0100000000000000020000000000000003000000000000000400000000000000"));
  out.push_back(golden(command{1, "n", "b"},
    "4149504e040015000000030012000000"
    "737663"
    "0100000000000000010000006e0100000062"));
  out.push_back(golden(ack{1, false, "e"},
    "4149504e04001600000003000e000000"
    "737663"
    "0100000000000000000100000065"));
  out.push_back(golden(shutdown{"r", -2},
    "4149504e040017000000030009000000"
    "737663"
    "0100000072feffffff"));
  out.push_back(golden(worker_connected{"w"},
    "4149504e040018000000030005000000"
    "737663"
    "0100000077"));
  return out;
}

TEST(codec, every_frame_type_encodes_to_its_golden_bytes) {
  for (const auto& g : golden_frames()) {
    std::string expected = g.hex;
    EXPECT_EQ(hex_of(g.bytes), expected)
      << to_string(g.type) << ": the wire layout changed. If on purpose, "
      << "bump wire_version (now " << wire_version << ") and record:"
      << golden_literal(g.bytes, 3);
    // The golden bytes decode, so they are a frame this build accepts.
    auto frame = parse_frame(g.bytes);
    ASSERT_TRUE(frame) << to_string(g.type);
    EXPECT_TRUE(static_cast<bool>(decode_any(*frame))) << to_string(g.type);
  }
}

TEST(codec, every_msg_type_has_a_golden_frame) {
  std::vector<msg_type> covered;
  for (const auto& g : golden_frames())
    covered.push_back(g.type);
  for (std::uint16_t id = 0; id < 1024; ++id) {
    if (auto t = to_msg_type(id)) {
      EXPECT_NE(std::find(covered.begin(), covered.end(), *t), covered.end())
        << to_string(*t) << " has no golden frame: add one above";
    }
  }
}

} // namespace
} // namespace aiperf::proto
