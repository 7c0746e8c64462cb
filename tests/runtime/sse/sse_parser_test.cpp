#include "runtime/sse/sse_parser.hpp"
#include "tests/runtime/sse/alloc_counter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace aiperf::sse;

namespace {

/// An owned copy of an sse_event, comparable in tests.
struct owned_event {
  std::string data;
  std::string event;
  std::string id;
  std::string comment;
  std::optional<std::uint64_t> retry;
  std::uint32_t data_lines = 0;
  std::int64_t ts_ns = 0;

  bool operator==(const owned_event&) const = default;
};

std::ostream& operator<<(std::ostream& os, const owned_event& e) {
  os << "{data='" << e.data << "' event='" << e.event << "' id='" << e.id
     << "' comment='" << e.comment << "' retry=";
  if (e.retry)
    os << *e.retry;
  else
    os << "none";
  return os << " lines=" << e.data_lines << " ts=" << e.ts_ns << "}";
}

owned_event own(const sse_event& e) {
  return owned_event{std::string{e.data},
                     std::string{e.event},
                     std::string{e.id},
                     std::string{e.comment},
                     e.retry,
                     e.data_lines,
                     e.ts_ns};
}

/// Feeds `chunks` (chunk i stamped with ts i) and collects the events.
std::vector<owned_event> parse_chunks(sse_parser& parser,
                                      const std::vector<std::string>& chunks) {
  std::vector<owned_event> out;
  for (std::size_t i = 0; i < chunks.size(); ++i)
    parser.feed(chunks[i], static_cast<std::int64_t>(i),
                [&](const sse_event& e) { out.push_back(own(e)); });
  return out;
}

std::vector<owned_event> parse_chunks(const std::vector<std::string>& chunks) {
  sse_parser parser;
  return parse_chunks(parser, chunks);
}

/// `text` cut into chunks of 1 to `max_len` bytes; `starts` gets each
/// chunk's offset.
std::vector<std::string> random_split(const std::string& text,
                                      std::size_t max_len, std::mt19937& rng,
                                      std::vector<std::size_t>& starts) {
  std::vector<std::string> chunks;
  for (std::size_t pos = 0; pos < text.size();) {
    auto len = std::min<std::size_t>(1 + rng() % max_len, text.size() - pos);
    starts.push_back(pos);
    chunks.push_back(text.substr(pos, len));
    pos += len;
  }
  return chunks;
}

std::vector<owned_event> parse_one(std::string_view text) {
  return parse_chunks({std::string{text}});
}

/// Test oracle: a deliberately naive byte-at-a-time implementation of the
/// rules documented in sse_parser.hpp. `ts_ns` holds the offset of the byte
/// that completed the event (the first byte of the empty line's terminator).
std::vector<owned_event> reference_parse(std::string_view s) {
  std::vector<owned_event> out;
  owned_event cur;
  bool dispatchable = false;
  std::string line;
  auto field = [&](std::string_view l, std::size_t at) {
    if (l.empty()) {
      if (dispatchable) {
        cur.ts_ns = static_cast<std::int64_t>(at);
        out.push_back(cur);
      }
      cur = owned_event{};
      dispatchable = false;
      return;
    }
    if (l[0] == ':') {
      auto c = l.substr(1);
      if (!c.empty() && c[0] == ' ')
        c.remove_prefix(1);
      cur.comment = std::string{c};
      return;
    }
    auto colon = l.find(':');
    std::string_view name = l.substr(0, colon);
    std::string_view value;
    if (colon != std::string_view::npos) {
      value = l.substr(colon + 1);
      if (!value.empty() && value[0] == ' ')
        value.remove_prefix(1);
    }
    if (name == "data") {
      if (cur.data_lines++ > 0)
        cur.data += '\n';
      cur.data += value;
      dispatchable = true;
    } else if (name == "event") {
      cur.event = std::string{value};
      dispatchable = true;
    } else if (name == "id") {
      if (value.find('\0') == std::string_view::npos) {
        cur.id = std::string{value};
        dispatchable = true;
      }
    } else if (name == "retry") {
      bool digits = !value.empty() && value.size() < 19;
      for (char c : value)
        digits = digits && c >= '0' && c <= '9';
      if (digits) {
        cur.retry = std::stoull(std::string{value});
        dispatchable = true;
      }
    }
  };
  std::size_t i = 0;
  if (s.substr(0, 3) == "\xEF\xBB\xBF")
    i = 3;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\r' || c == '\n') {
      std::size_t at = i;
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n')
        ++i;
      field(line, at);
      line.clear();
    } else {
      line += c;
    }
  }
  return out;
}

/// Maps each oracle event's completing byte offset to the index of the chunk
/// holding that byte, given the chunk start offsets.
std::vector<owned_event>
expect_for_split(std::vector<owned_event> events,
                 const std::vector<std::size_t>& starts) {
  for (auto& e : events) {
    auto at = static_cast<std::size_t>(e.ts_ns);
    std::int64_t chunk = 0;
    for (std::size_t i = 0; i < starts.size(); ++i)
      if (starts[i] <= at)
        chunk = static_cast<std::int64_t>(i);
    e.ts_ns = chunk;
  }
  return events;
}

// Covers every feature at once: BOM, LF/CRLF/CR endings, leading blank
// lines, comments, multi-line and empty data, no-colon fields, unknown
// fields, a comment-only block, event/id/retry, error and [DONE].
const std::string corpus
    = std::string{"\xEF\xBB\xBF"} + "\n\r\n"
      + ": t=100\ndata: {\"choices\":[{\"delta\":{\"content\":\" hi\"}}]}\n\n"
      + ":t=200\r\ndata:x\r\n\r\n" + "data: line1\rdata:line2\r\rdata\n\n"
      + "data:\ndata:\n\n" + ": keep-alive\n\n"
      + "event: update\nid: 42\nretry: 3000\ndata:  two spaces\n\n"
      + "foo: bar\nretry: 12x\ndata: after unknown\r\n\r\n" + "id\nevent\n\n"
      + ": first\n: second\ndata: c\n\n"
      + "event: error\ndata: {\"error\":\"boom\"}\n\n" + "retry: 7\n\n"
      + "data: [DONE]\n\n";

} // namespace

TEST(sse_parser, lf_delimited_events) {
  auto events = parse_one("data: a\n\ndata: b\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "a");
  EXPECT_EQ(events[1].data, "b");
}

TEST(sse_parser, crlf_delimited_events) {
  auto events = parse_one("data: a\r\n\r\ndata: b\r\n\r\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "a");
  EXPECT_EQ(events[1].data, "b");
}

TEST(sse_parser, cr_only_line_endings) {
  auto events = parse_one("data: a\rdata: b\r\rdata: c\r\r");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "a\nb");
  EXPECT_EQ(events[1].data, "c");
}

// Verifies that the LF half of a CRLF arriving in the next read is not
// mistaken for an empty line (which would split one event into two).
TEST(sse_parser, crlf_split_across_reads_is_one_terminator) {
  auto events = parse_chunks({"data: a\r", "\ndata: b\r", "\n\r", "\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a\nb");
  EXPECT_EQ(events[0].ts_ns, 2) << "completed by the CR of the empty line";
}

TEST(sse_parser, multi_line_data_is_joined_with_lf) {
  auto events = parse_one("data: one\ndata: two\ndata: three\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "one\ntwo\nthree");
  EXPECT_EQ(events[0].data_lines, 3u);
}

TEST(sse_parser, event_id_and_retry_fields) {
  auto events = parse_one("event: update\nid: 7\nretry: 2500\ndata: x\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "update");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].retry, 2500u);
  EXPECT_EQ(events[0].data, "x");
}

TEST(sse_parser, invalid_retry_is_ignored) {
  auto events = parse_one("retry: 12x\ndata: a\n\nretry:\ndata: b\n\n"
                          "retry: 99999999999999999999999\ndata: c\n\n");
  ASSERT_EQ(events.size(), 3u);
  for (const auto& e : events)
    EXPECT_FALSE(e.retry.has_value()) << e;
}

TEST(sse_parser, last_event_and_id_win_and_id_is_per_block) {
  auto events = parse_one("event: a\nevent: b\nid: 1\nid: 2\ndata: x\n\n"
                          "data: y\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "b");
  EXPECT_EQ(events[0].id, "2");
  EXPECT_EQ(events[1].id, "") << "id does not carry over to the next block";
}

TEST(sse_parser, id_with_nul_is_ignored) {
  auto events = parse_one(std::string{"id: a\0b\ndata: x\n\n", 18});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].id, "");
}

TEST(sse_parser, last_comment_line_is_exposed_without_colon_and_space) {
  auto events = parse_one(": t=1\n:t=2\ndata: a\n\n:  spaced\ndata: b\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].comment, "t=2");
  EXPECT_EQ(events[1].comment, " spaced") << "only one space is stripped";
}

TEST(sse_parser, stamp_events_comment_precedes_data) {
  auto events = parse_one(": t=1234567890\ndata: {\"x\":1}\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].comment, "t=1234567890");
  EXPECT_EQ(events[0].data, "{\"x\":1}");
}

// Documented choice: keep-alive blocks carry no event, so nothing is
// dispatched and their comment does not leak into the next event.
TEST(sse_parser, comment_only_block_is_not_dispatched) {
  auto events = parse_one(": ping\n\n: ping\n: pong\n\ndata: a\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a");
  EXPECT_EQ(events[0].comment, "");
}

TEST(sse_parser, unknown_fields_are_ignored) {
  auto events = parse_one("foo: bar\n\nfoo: bar\ndata: a\nbaz\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a");
}

TEST(sse_parser, data_without_space_or_colon) {
  auto events = parse_one("data:x\n\ndata:  x\n\ndata\n\n");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "x");
  EXPECT_EQ(events[1].data, " x") << "only one space is stripped";
  EXPECT_EQ(events[2].data, "");
  EXPECT_TRUE(events[2].data_lines == 1) << "a bare 'data' is an empty line";
}

TEST(sse_parser, empty_data_lines) {
  auto events = parse_one("data:\n\ndata:\ndata:\n\ndata: a\ndata:\n\n");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "");
  EXPECT_EQ(events[0].data_lines, 1u);
  EXPECT_EQ(events[1].data, "\n");
  EXPECT_EQ(events[2].data, "a\n");
}

// Documented deviation from WHATWG: a block without data but with event or
// id is dispatched so that a data-less `event: error` is not lost.
TEST(sse_parser, data_less_event_is_dispatched_without_data) {
  sse_parser parser;
  std::vector<bool> has_data;
  std::vector<bool> is_error;
  parser.feed("event: error\n\nretry: 5\n\n", 0, [&](const sse_event& e) {
    has_data.push_back(e.has_data());
    is_error.push_back(e.is_error());
  });
  ASSERT_EQ(has_data.size(), 2u);
  EXPECT_FALSE(has_data[0]);
  EXPECT_TRUE(is_error[0]);
  EXPECT_FALSE(is_error[1]);
}

TEST(sse_parser, error_event_with_data) {
  sse_parser parser;
  int errors = 0;
  std::string data;
  parser.feed("event: error\ndata: {\"message\":\"overloaded\"}\n\n", 0,
              [&](const sse_event& e) {
                errors += e.is_error() ? 1 : 0;
                data = e.data;
                EXPECT_TRUE(e.has_data());
                EXPECT_FALSE(e.is_done());
              });
  EXPECT_EQ(errors, 1);
  EXPECT_EQ(data, "{\"message\":\"overloaded\"}");
}

TEST(sse_parser, done_sentinel) {
  sse_parser parser;
  std::vector<bool> done;
  parser.feed("data: {}\n\ndata: [DONE]\n\ndata:[DONE]\n\ndata: [DONE] \n\n"
              "event: [DONE]\n\n",
              0, [&](const sse_event& e) { done.push_back(e.is_done()); });
  EXPECT_EQ(done, (std::vector<bool>{false, true, true, false, false}));
}

TEST(sse_parser, bom_at_stream_start_is_skipped) {
  auto events = parse_one("\xEF\xBB\xBF"
                          "data: a\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a");
  // Split across reads.
  events = parse_chunks({"\xEF", "\xBB",
                         "\xBF"
                         "data: b\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "b");
}

TEST(sse_parser, bom_only_at_stream_start) {
  // Later, the BOM bytes are part of a field name, which is then unknown.
  auto events = parse_one("data: a\n\n\xEF\xBB\xBF"
                          "data: b\n\ndata: c\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].data, "c");
}

// Verifies that bytes held while a BOM match was undecided are replayed.
TEST(sse_parser, partial_bom_is_ordinary_input) {
  auto events = parse_chunks({"\xEF\xBB", "x: y\ndata: z\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "z");
  events = parse_chunks({"\xEF", "\n\ndata: z\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "z");
}

TEST(sse_parser, events_in_one_read_share_its_timestamp) {
  sse_parser parser;
  std::vector<std::int64_t> ts;
  auto collect = [&](const sse_event& e) { ts.push_back(e.ts_ns); };
  parser.feed("data: a\n\ndata: b\n\ndata: c", 1000, collect);
  parser.feed("\n\n", 2000, collect);
  EXPECT_EQ(ts, (std::vector<std::int64_t>{1000, 1000, 2000}));
}

TEST(sse_parser, event_inside_one_read_is_a_view_into_it) {
  sse_parser parser;
  std::string read = "data: abc\n\nevent: x\ndata: d";
  const char* data_ptr = nullptr;
  parser.feed(read, 0, [&](const sse_event& e) { data_ptr = e.data.data(); });
  EXPECT_EQ(data_ptr, read.data() + 6) << "zero copy";
  std::string rest = "ef\n\n";
  std::string data;
  parser.feed(rest, 1, [&](const sse_event& e) {
    data = e.data;
    EXPECT_EQ(e.event, "x");
    EXPECT_FALSE(e.data.data() >= read.data()
                 && e.data.data() < read.data() + read.size())
        << "a straddling event must not point into an earlier read";
  });
  EXPECT_EQ(data, "def");
}

TEST(sse_parser, very_long_event) {
  const std::string payload(1 << 20, 'x');
  const std::string stream = "data: " + payload + "\n\ndata: tail\n\n";
  auto whole = parse_one(stream);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0].data, payload);
  // The same in 1.5 KiB reads: the event completes in the read holding its
  // empty line.
  std::vector<std::string> chunks;
  for (std::size_t i = 0; i < stream.size(); i += 1536)
    chunks.push_back(stream.substr(i, 1536));
  auto split = parse_chunks(chunks);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].data, payload);
  EXPECT_EQ(split[0].ts_ns,
            static_cast<std::int64_t>((6 + payload.size() + 1) / 1536));
  EXPECT_EQ(split[1].data, "tail");
}

TEST(sse_parser, finish_discards_unterminated_event_by_default) {
  sse_parser parser;
  int count = 0;
  auto on_event = [&](const sse_event&) { ++count; };
  parser.feed("data: a\n\ndata: [DONE]\n", 0, on_event);
  EXPECT_EQ(parser.finish(1, on_event), 13u) << "bytes dropped";
  EXPECT_EQ(count, 1);
  EXPECT_EQ(parser.buffered_bytes(), 0u);
  // A cleanly ended stream drops nothing.
  parser.feed("data: a\n\n", 0, on_event);
  EXPECT_EQ(parser.finish(1, on_event), 0u);
}

TEST(sse_parser, finish_can_dispatch_unterminated_event) {
  for (std::string tail : {"data: [DONE]", "data: [DONE]\r", "data: [DONE]\n",
                           "data: [DONE]\r\n"}) {
    sse_parser parser;
    std::vector<owned_event> events;
    auto on_event = [&](const sse_event& e) { events.push_back(own(e)); };
    parser.feed(tail, 0, on_event);
    EXPECT_EQ(parser.finish(5, on_event, eof_policy::dispatch), 0u);
    ASSERT_EQ(events.size(), 1u) << tail;
    EXPECT_EQ(events[0].data, "[DONE]");
    EXPECT_EQ(events[0].ts_ns, 5);
  }
}

TEST(sse_parser, reset_forgets_the_unfinished_event) {
  sse_parser parser;
  std::vector<owned_event> events;
  auto on_event = [&](const sse_event& e) { events.push_back(own(e)); };
  parser.feed("data: stale\r", 0, on_event);
  parser.reset();
  parser.feed("\ndata: fresh\n\n", 1, on_event);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "fresh");
}

TEST(sse_parser, oversized_event_fails_the_parser) {
  sse_parser parser{64};
  int count = 0;
  auto on_event = [&](const sse_event&) { ++count; };
  EXPECT_TRUE(parser.feed("data: " + std::string(40, 'a'), 0, on_event));
  EXPECT_FALSE(parser.feed(std::string(40, 'a'), 1, on_event));
  EXPECT_TRUE(parser.failed());
  EXPECT_FALSE(parser.feed("\n\ndata: b\n\n", 2, on_event));
  EXPECT_EQ(count, 0);
  parser.reset();
  EXPECT_TRUE(parser.feed("data: b\n\n", 3, on_event));
  EXPECT_EQ(count, 1);
  // Events inside one read are never limited: they are not buffered.
  EXPECT_TRUE(
      parser.feed("data: " + std::string(200, 'c') + "\n\n", 4, on_event));
  EXPECT_EQ(count, 2);
}

TEST(sse_parser, oracle_agrees_on_corpus_unsplit) {
  auto expected = reference_parse(corpus);
  ASSERT_EQ(expected.size(), 12u) << "corpus sanity";
  auto actual = parse_one(corpus);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    auto e = expected[i];
    e.ts_ns = 0;
    EXPECT_EQ(actual[i], e) << "event " << i;
  }
}

// Property: splitting the stream at any byte boundary yields exactly the
// same events, each stamped with the read that completed it.
TEST(sse_parser, every_two_way_split_gives_the_same_events) {
  const auto oracle = reference_parse(corpus);
  sse_parser parser; // reused across splits: also exercises finish/reset
  for (std::size_t k = 0; k <= corpus.size(); ++k) {
    std::vector<std::string> chunks{corpus.substr(0, k), corpus.substr(k)};
    auto actual = parse_chunks(parser, chunks);
    EXPECT_EQ(parser.finish(2, [](const sse_event&) {}), 0u);
    auto expected = expect_for_split(oracle, {0, k});
    ASSERT_EQ(actual, expected) << "split at " << k;
  }
}

TEST(sse_parser, every_three_way_split_gives_the_same_events) {
  const auto oracle = reference_parse(corpus);
  sse_parser parser;
  for (std::size_t a = 0; a <= corpus.size(); a += 3) {
    for (std::size_t b = a; b <= corpus.size(); b += 5) {
      std::vector<std::string> chunks{
          corpus.substr(0, a), corpus.substr(a, b - a), corpus.substr(b)};
      auto actual = parse_chunks(parser, chunks);
      parser.reset();
      ASSERT_EQ(actual, expect_for_split(oracle, {0, a, b}))
          << "split at " << a << ", " << b;
    }
  }
}

TEST(sse_parser, one_byte_reads_give_the_same_events) {
  std::vector<std::string> chunks;
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    chunks.emplace_back(1, corpus[i]);
    starts.push_back(i);
  }
  EXPECT_EQ(parse_chunks(chunks),
            expect_for_split(reference_parse(corpus), starts));
}

// Verifies the hot-path promise: once warm, neither events inside a read
// nor events straddling reads allocate.
TEST(sse_parser, no_allocation_per_event_once_warm) {
  std::string stream;
  for (int i = 0; i < 64; ++i)
    stream += ": t=" + std::to_string(i)
              + "\ndata: {\"choices\":[{\"delta\":{\"content\":\" w\"}}]}\n\n";
  stream += "data: a\ndata: b\n\ndata: [DONE]\n\n";
  sse_parser parser;
  std::size_t events = 0;
  auto on_event = [&](const sse_event&) { ++events; };
  auto run = [&] {
    for (std::size_t i = 0; i < stream.size(); i += 100)
      parser.feed(std::string_view{stream}.substr(i, 100), 0, on_event);
    parser.reset();
  };
  run(); // warm: buffers reach their capacity
  alloc_counter::start();
  run();
  run();
  EXPECT_EQ(alloc_counter::stop(), 0u);
  EXPECT_EQ(events, 3u * 66u);
}

TEST(sse_parser, random_many_way_splits_give_the_same_events) {
  const auto oracle = reference_parse(corpus);
  std::mt19937 rng{20261129};
  sse_parser parser;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::size_t> starts;
    auto chunks = random_split(corpus, 24, rng, starts);
    auto actual = parse_chunks(parser, chunks);
    parser.reset();
    ASSERT_EQ(actual, expect_for_split(oracle, starts)) << "round " << round;
  }
}

// The caller's shortcut takes some whole blocks itself: with it, random
// splits still give exactly the oracle's events, and it was really used.
TEST(sse_parser, shortcut_blocks_give_the_same_events) {
  // The corpus, then blocks the shortcut takes and look-alikes it must not.
  const std::string stream
    = corpus + "data: {\"n\":1}\n\ndata: {\"n\":2}\n\n"
      + "data: {\"n\":3}\ndata: {\"n\":4}\n\n" + "data: {\"n\":5}\r\n\r\n"
      + ": c\ndata: {\"n\":6}\n\n" + "data: {\"n\":7}\n\n";
  const auto oracle = reference_parse(stream);
  std::mt19937 rng{20261130};
  sse_parser parser;
  std::size_t taken = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::size_t> starts;
    auto chunks = random_split(stream, 48, rng, starts);
    std::vector<owned_event> actual;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      auto ts = static_cast<std::int64_t>(i);
      // Takes `data: {<no CR/LF>\n\n`, which is one event with that data.
      auto shortcut = [&](const char* first, const char* last) -> const char* {
        std::string_view rest{first, static_cast<std::size_t>(last - first)};
        if (!rest.starts_with("data: {"))
          return nullptr;
        auto eol = rest.find_first_of("\r\n");
        if (eol == std::string_view::npos || rest.substr(eol, 2) != "\n\n")
          return nullptr;
        actual.push_back(
          owned_event{std::string{rest.substr(6, eol - 6)}, "", "", "",
                      std::nullopt, 1, ts});
        ++taken;
        return first + eol + 2;
      };
      parser.feed(chunks[i], ts,
                  [&](const sse_event& e) { actual.push_back(own(e)); },
                  shortcut);
    }
    parser.reset();
    ASSERT_EQ(actual, expect_for_split(oracle, starts)) << "round " << round;
  }
  EXPECT_GT(taken, 100u);
}
