// The worker against the real mock server on an ephemeral port: credits in,
// one record and one credit return out per credit; cancels give 499 records;
// due times hold requests back; with the actors on the I/O thread, a burst
// of completions larger than one drain slice all comes out.
#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "actors/benchmark/worker/worker.hpp"

#include "runtime/http/client.hpp"
#include "runtime/system/io_scheduler.hpp"
#include "tests/runtime/http/test_server.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

using namespace aiperf;
using namespace aiperf::proto;

namespace {

/// Forwards what a worker sends to the timing_manager to `to`.
timing_manager_actor::behavior_type fake_timing(caf::actor to) {
  return {
    [](configure_atom, const timing_config&,
       const std::vector<credit_sink_actor>&) { return caf::ok_atom::value; },
    [](start_atom) { return std::vector<phase_stats>{}; },
    [to](credit_return_batch& b) { caf::anon_send(to, std::move(b)); },
    [to](first_tok_atom a, std::uint64_t id) { caf::anon_send(to, a, id); },
    [](cancel_atom) {},
    [](lost_atom, std::uint32_t) { return credit_batch{}; },
    [](progress_atom) { return timing_progress{}; },
  };
}

/// Forwards record batches to `to`.
record_sink_actor::behavior_type fake_records(caf::actor to) {
  return {
    [to](request_record_batch& b) { caf::anon_send(to, std::move(b)); },
  };
}

struct worker_fixture : ::testing::Test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<mock_server::server> mock;
  std::unique_ptr<http::io_pool> io;
  std::unique_ptr<http::client> client;
  std::unique_ptr<caf::scoped_actor> self;
  credit_sink_actor worker;
  std::map<std::uint64_t, request_record> records;
  std::map<std::uint64_t, credit_return> returns;
  std::vector<std::uint64_t> first_tokens;
  bool export_raw = false; // records carry the body they sent
  bool actors_on_io_thread = false; // --scheduler-policy io-thread
  std::string url_userinfo;          // "user:password@" in the worker's URL
  std::vector<std::string> headers;  // the user's -H fields ("Name: value")

  void start(mock_server::options mo, bool streaming = true,
             std::int32_t max_tokens = 5) {
    mo.port = 0;
    mock = std::make_unique<mock_server::server>(mo);
    auto started = mock->start();
    ASSERT_TRUE(started) << error_message(started.error());
    start_worker(*started, streaming, max_tokens);
  }

  /// The worker alone, against whatever serves 127.0.0.1:`port`.
  void start_worker(std::uint16_t port, bool streaming = true,
                    std::int32_t max_tokens = 5) {
    io = std::make_unique<http::io_pool>(1);
    client = std::make_unique<http::client>(io->context(0));
    if (actors_on_io_thread)
      system::use_io_scheduler(cfg, io->context(0));
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
    auto data = std::make_shared<dataset::dataset>();
    for (int i = 0; i < 4; ++i) {
      dataset::conversation c;
      c.session_id = "s" + std::to_string(i);
      c.turns.push_back(dataset::turn{"hello world " + std::to_string(i), 3,
                                      max_tokens});
      data->conversations.push_back(std::move(c));
    }
    worker_config wc;
    wc.worker_index = 3;
    wc.worker_id = "worker_3";
    wc.run_id = "run";
    wc.urls = {"http://" + url_userinfo + "127.0.0.1:" + std::to_string(port)};
    wc.headers = headers;
    wc.endpoint_path = "/v1/chat/completions";
    wc.model = "m";
    wc.streaming = streaming;
    wc.include_usage = true;
    wc.notify_first_token = true;
    wc.export_raw = export_raw;
    worker::worker_deps deps;
    deps.io = &io->context(0);
    deps.client = client.get();
    deps.data = data;
    deps.timing = sys->spawn(fake_timing, caf::actor{*self});
    deps.records = sys->spawn(fake_records, caf::actor{*self});
    worker = worker::spawn_worker(*sys, wc, std::move(deps));
  }

  void TearDown() override {
    if (self) {
      (*self)->send_exit(worker, caf::exit_reason::user_shutdown);
      self.reset();
    }
    if (client)
      client->shutdown();
    if (io)
      io->stop();
    sys.reset();
    if (mock)
      mock->stop();
  }

  credit make_credit(std::uint64_t id, std::int64_t due_ns = 0) {
    credit c;
    c.id = id;
    c.session_num = static_cast<std::uint32_t>(id);
    c.conversation = static_cast<std::uint32_t>(id % 4);
    c.issued_at_ns = http::now_ns();
    c.due_ns = due_ns;
    return c;
  }

  /// Waits (at most 10 s) until the mock's counter `name`, summed over its
  /// labels, reaches `n`.
  bool wait_for_mock(std::string_view name, std::uint64_t n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::uint64_t sum = 0;
      std::istringstream lines{mock->metrics_text()};
      for (std::string line; std::getline(lines, line);)
        if (line.starts_with(name))
          sum += std::stoull(line.substr(line.rfind(' ') + 1));
      if (sum >= n)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  /// Collects until `n` records and `n` returns arrived (bounded wait).
  void collect(std::size_t n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool timed_out = false;
    while ((records.size() < n || returns.size() < n) && !timed_out) {
      (*self)->receive(
        [&](request_record_batch& b) {
          for (auto& r : b.records)
            records.emplace(r.credit_id, std::move(r));
        },
        [&](credit_return_batch& b) {
          for (auto& r : b)
            returns.emplace(r.credit_id, r);
        },
        [&](first_tok_atom, std::uint64_t id) { first_tokens.push_back(id); },
        caf::after(std::chrono::milliseconds(100)) >> [] {});
      timed_out = std::chrono::steady_clock::now() > deadline;
    }
    ASSERT_EQ(records.size(), n);
    ASSERT_EQ(returns.size(), n);
  }
};

TEST_F(worker_fixture, streams_one_record_and_one_return_per_credit) {
  mock_server::options mo;
  mo.ttft_ms = 5;
  mo.itl_ms = 1;
  start(mo);
  credit_batch batch;
  for (std::uint64_t id = 1; id <= 8; ++id)
    batch.push_back(make_credit(id));
  caf::anon_send(worker, std::move(batch));
  collect(8);
  for (auto& [id, rec] : records) {
    SCOPED_TRACE(id);
    EXPECT_FALSE(rec.has_error) << rec.error.message;
    EXPECT_EQ(rec.http_status, 200);
    EXPECT_EQ(rec.worker_id, "worker_3");
    EXPECT_EQ(rec.x_request_id, "run-r" + std::to_string(id));
    EXPECT_EQ(rec.response_ts_ns.size(), 5u); // one content event per token
    EXPECT_FALSE(rec.output_text.empty());
    EXPECT_TRUE(rec.usage.present());
    EXPECT_EQ(rec.usage.completion_tokens, 5);
    EXPECT_LE(rec.request_start_ns, rec.request_ack_ns);
    EXPECT_LE(rec.response_ts_ns.front(), rec.response_ts_ns.back());
    EXPECT_LE(rec.response_ts_ns.back(), rec.request_end_ns);
    auto& ret = returns.at(id);
    EXPECT_EQ(ret.worker_index, 3u);
    EXPECT_EQ(ret.outcome, credit_outcome::ok);
    EXPECT_FALSE(ret.failed);
  }
  EXPECT_EQ(first_tokens.size(), 8u);
}

// 64 answers that complete in one I/O round, before the worker (on the same
// thread) can run: it takes them 16 at a time and must come back for the
// rest on its own, as nothing wakes it again (mutation-checked: without the
// self-sent wake-up only the first 16 come out).
TEST_F(worker_fixture, a_burst_larger_than_a_drain_slice_all_comes_out) {
  actors_on_io_thread = true;
  mock_server::options mo;
  mo.ttft_ms = 50; // every request is out before the first answer
  mo.itl_ms = 0;
  start(mo, /*streaming=*/false, /*max_tokens=*/1);
  credit_batch batch;
  for (std::uint64_t id = 1; id <= 64; ++id)
    batch.push_back(make_credit(id));
  caf::anon_send(worker, std::move(batch));
  // Hold the I/O thread (the worker's too) until the server has answered
  // every request, so the answers complete in one I/O round, not one by one.
  ASSERT_TRUE(wait_for_mock("aiperf_mock_requests_total", 64));
  std::promise<bool> answered;
  boost::asio::post(io->context(0), [&] {
    answered.set_value(wait_for_mock("aiperf_mock_responses_total", 64));
  });
  ASSERT_TRUE(answered.get_future().get());
  collect(64);
  for (auto& [id, rec] : records) {
    SCOPED_TRACE(id);
    EXPECT_FALSE(rec.has_error) << rec.error.message;
    EXPECT_EQ(returns.at(id).outcome, credit_outcome::ok);
  }
}

// A stream of content deltas of every length from 1 to 40 bytes, one of 300
// (past the text buffer's first growth), an empty one and one with escapes,
// first in one write (the template path, block after block) and then each
// event split across two writes: the record's output_text is exactly their
// concatenation, with one stamp per non-empty delta.
TEST_F(worker_fixture, output_text_is_every_delta_joined) {
  std::vector<std::string> wire; // JSON string bodies as sent
  std::string expected;
  for (int n = 1; n <= 40; ++n) {
    std::string d;
    for (int i = 0; i < n; ++i)
      d.push_back(static_cast<char>('a' + (n + i) % 26));
    wire.push_back(d);
    expected += d;
  }
  wire.push_back(std::string(300, 'z'));
  expected += std::string(300, 'z');
  wire.push_back(""); // no content: no stamp
  wire.push_back(R"(say \"hi\"\n)");
  expected += "say \"hi\"\n";
  auto event = [](const std::string& content) {
    return "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":"
           "{\"content\":\"" + content + "\"},\"finish_reason\":null}]}\n\n";
  };
  std::vector<std::string> body_writes;
  std::string together;
  for (std::size_t i = 0; i < wire.size() / 2; ++i)
    together += event(wire[i]);
  body_writes.push_back(together);
  for (std::size_t i = wire.size() / 2; i < wire.size(); ++i) {
    auto e = event(wire[i]);
    body_writes.push_back(e.substr(0, e.size() / 2 + 1));
    body_writes.push_back(e.substr(e.size() / 2 + 1));
  }
  body_writes.push_back("data: [DONE]\n\n");
  std::size_t length = 0;
  for (auto& w : body_writes)
    length += w.size();
  http::testing::test_server srv{[&](const http::testing::received_request&) {
    http::testing::scripted_reply reply;
    reply.writes.push_back("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
                           "\r\nContent-Length: "
                           + std::to_string(length) + "\r\n\r\n");
    for (auto& w : body_writes)
      reply.writes.push_back(w);
    return reply;
  }};
  actors_on_io_thread = true;
  start_worker(srv.port());
  caf::anon_send(worker, credit_batch{make_credit(1)});
  collect(1);
  auto& rec = records.at(1);
  ASSERT_FALSE(rec.has_error) << rec.error.message;
  EXPECT_EQ(rec.output_text, expected);
  EXPECT_EQ(rec.response_ts_ns.size(), wire.size() - 1);
}

// A server answering every request with one chat completion, keeping each
// request's header block in `heads`.
std::unique_ptr<http::testing::test_server> heads_recording_server(std::mutex& m,
                                                                   std::vector<std::string>& heads) {
  return std::make_unique<http::testing::test_server>(
      [&m, &heads](const http::testing::received_request& r) {
        {
          std::lock_guard lock{m};
          heads.push_back(r.head);
        }
        return http::testing::scripted_reply{
          {http::testing::test_server::content_length_response(
            R"({"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]})",
            "application/json")}};
      });
}

// As aiohttp: a URL's user-info is HTTP Basic auth on every request; the
// credentials stay out of the raw export.
TEST_F(worker_fixture, url_user_info_is_sent_as_basic_auth) {
  std::mutex m;
  std::vector<std::string> heads;
  auto srv = heads_recording_server(m, heads);
  url_userinfo = "alice:p%40ss@";
  export_raw = true;
  start_worker(srv->port(), false);
  caf::anon_send(worker, credit_batch{make_credit(1), make_credit(2)});
  collect(2);
  std::lock_guard lock{m};
  ASSERT_EQ(heads.size(), 2u);
  for (const auto& h : heads)
    EXPECT_NE(h.find("\r\nAuthorization: Basic YWxpY2U6cEBzcw==\r\n"), std::string::npos) << h;
  for (const auto& [id, rec] : records) {
    std::string all;
    for (const auto& h : rec.request_headers)
      all += h + "\n";
    EXPECT_NE(all.find("Authorization: Basic <redacted>"), std::string::npos) << all;
    EXPECT_EQ(all.find("YWxpY2U6cEBzcw=="), std::string::npos) << all;
  }
}

TEST_F(worker_fixture, an_explicit_authorization_header_wins_over_user_info) {
  std::mutex m;
  std::vector<std::string> heads;
  auto srv = heads_recording_server(m, heads);
  url_userinfo = "alice:pw@";
  headers = {"authorization: Bearer tok"};
  start_worker(srv->port(), false);
  caf::anon_send(worker, credit_batch{make_credit(1)});
  collect(1);
  std::lock_guard lock{m};
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("authorization: Bearer tok"), std::string::npos) << heads[0];
  EXPECT_EQ(heads[0].find("Basic"), std::string::npos) << heads[0];
}

// Redirects are not followed: the error record says where to and what to
// pass instead of an empty message.
TEST_F(worker_fixture, a_redirect_names_its_location) {
  http::testing::test_server srv{[&](const http::testing::received_request&) {
    return http::testing::scripted_reply{
      {"HTTP/1.1 301 Moved Permanently\r\nLocation: https://example.test/v1/"
       "chat/completions\r\nContent-Length: 0\r\n\r\n"}};
  }};
  start_worker(srv.port());
  caf::anon_send(worker, credit_batch{make_credit(1)});
  collect(1);
  auto& rec = records.at(1);
  ASSERT_TRUE(rec.has_error);
  EXPECT_EQ(rec.error.code, 301);
  EXPECT_EQ(rec.error.message,
            "redirect to https://example.test/v1/chat/completions not "
            "followed: pass that URL (without the endpoint path) as --url");
}

// A server that ignores "stream": true answers one JSON body: a success
// (TTFT = latency), flagged stream_ignored. A real stream is not flagged.
TEST_F(worker_fixture, a_json_answer_to_a_streaming_request_is_flagged) {
  std::string body = R"({"id":"c","choices":[{"index":0,"message":)"
                     R"({"role":"assistant","content":"hello there"},)"
                     R"("finish_reason":"stop"}]})";
  http::testing::test_server srv{[&](const http::testing::received_request&) {
    return http::testing::scripted_reply{
      {http::testing::test_server::content_length_response(body,
                                                           "application/json")}};
  }};
  start_worker(srv.port());
  caf::anon_send(worker, credit_batch{make_credit(1)});
  collect(1);
  auto& rec = records.at(1);
  ASSERT_FALSE(rec.has_error) << rec.error.message;
  EXPECT_TRUE(rec.stream_ignored);
  EXPECT_EQ(rec.response_ts_ns.size(), 1u);
}

TEST_F(worker_fixture, a_real_stream_is_not_flagged) {
  mock_server::options mo;
  mo.fast = true;
  start(mo);
  caf::anon_send(worker, credit_batch{make_credit(1)});
  collect(1);
  ASSERT_FALSE(records.at(1).has_error);
  EXPECT_FALSE(records.at(1).stream_ignored);
}

TEST_F(worker_fixture, non_streaming_reads_the_whole_body) {
  mock_server::options mo;
  mo.fast = true;
  start(mo, false, 7);
  caf::anon_send(worker, credit_batch{make_credit(1)});
  collect(1);
  auto& rec = records.at(1);
  EXPECT_FALSE(rec.has_error) << rec.error.message;
  EXPECT_EQ(rec.response_ts_ns.size(), 1u);
  EXPECT_EQ(rec.usage.completion_tokens, 7);
  EXPECT_FALSE(rec.output_text.empty());
  EXPECT_FALSE(rec.stream_ignored) << "streaming was not asked for";
}

TEST_F(worker_fixture, cancel_in_flight_gives_a_499_record) {
  mock_server::options mo;
  mo.ttft_ms = 60'000; // never answers within the test
  start(mo);
  caf::anon_send(worker, credit_batch{make_credit(1), make_credit(2)});
  caf::anon_send(worker, cancel_atom::value, std::vector<std::uint64_t>{1});
  // Credit 2 is still in flight: only 1 comes back.
  collect(1);
  auto& rec = records.at(1);
  EXPECT_TRUE(rec.was_cancelled);
  EXPECT_TRUE(rec.has_error);
  EXPECT_EQ(rec.error.code, 499);
  EXPECT_EQ(returns.at(1).outcome, credit_outcome::cancelled);
  EXPECT_EQ(records.count(2), 0u);
  // Cancel-all takes the rest.
  caf::anon_send(worker, cancel_atom::value, std::vector<std::uint64_t>{});
  collect(2);
  EXPECT_EQ(records.at(2).error.code, 499);
}

TEST_F(worker_fixture, holds_requests_until_their_due_time) {
  mock_server::options mo;
  mo.fast = true;
  start(mo);
  auto due = http::now_ns() + 150'000'000; // 150 ms ahead
  caf::anon_send(worker, credit_batch{make_credit(1, due)});
  collect(1);
  auto& rec = records.at(1);
  EXPECT_FALSE(rec.has_error) << rec.error.message;
  EXPECT_EQ(rec.intended_send_ns, due);
  EXPECT_GE(rec.request_start_ns, due); // never sent early
}

TEST_F(worker_fixture, cancel_before_the_due_time_never_sends) {
  mock_server::options mo;
  mo.fast = true;
  start(mo);
  auto due = http::now_ns() + 60'000'000'000; // a minute ahead
  caf::anon_send(worker, credit_batch{make_credit(1, due)});
  caf::anon_send(worker, cancel_atom::value, std::vector<std::uint64_t>{1});
  collect(1);
  auto& rec = records.at(1);
  EXPECT_TRUE(rec.was_cancelled);
  EXPECT_EQ(rec.error.code, 499);
  // Never sent: it starts and ends when it was cancelled (before its due
  // time), on the same timeline as every other record.
  EXPECT_NE(rec.request_start_ns, 0);
  EXPECT_EQ(rec.request_start_ns, rec.request_end_ns);
  EXPECT_LT(rec.request_start_ns, due);
  EXPECT_NE(rec.request_start_wall_ns, 0);
  EXPECT_EQ(client->connections_opened(), 0u);
}

TEST_F(worker_fixture, server_errors_become_error_records) {
  mock_server::options mo;
  mo.fast = true;
  mo.error_rate = 100;
  start(mo);
  caf::anon_send(worker, credit_batch{make_credit(1)});
  collect(1);
  auto& rec = records.at(1);
  EXPECT_TRUE(rec.has_error);
  EXPECT_NE(rec.http_status, 200);
  EXPECT_TRUE(returns.at(1).failed);
  EXPECT_EQ(returns.at(1).outcome, credit_outcome::ok);
}

TEST_F(worker_fixture, a_turn_the_dataset_lacks_is_an_error_record) {
  mock_server::options mo;
  mo.fast = true;
  start(mo);
  auto c = make_credit(1);
  c.turn_index = 9;
  caf::anon_send(worker, credit_batch{c});
  collect(1);
  EXPECT_EQ(records.at(1).error.type, "InternalError");
  EXPECT_TRUE(returns.at(1).failed);
}

} // namespace

// A conversation sent again gets the very body of its first send (first
// turns are built once per conversation and reused).
TEST_F(worker_fixture, a_conversation_sent_again_sends_the_same_body) {
  export_raw = true;
  mock_server::options mo;
  mo.fast = true;
  start(mo);
  credit_batch batch;
  for (std::uint64_t id = 1; id <= 12; ++id) // conversations 1,2,3,0 ×3
    batch.push_back(make_credit(id));
  caf::anon_send(worker, std::move(batch));
  collect(12);
  for (std::uint64_t id = 1; id <= 12; ++id) {
    SCOPED_TRACE(id);
    const auto& rec = records.at(id);
    EXPECT_FALSE(rec.has_error) << rec.error.message;
    EXPECT_NE(rec.payload.find("hello world " + std::to_string(id % 4)),
              std::string::npos)
      << rec.payload;
    if (id > 4) {
      EXPECT_EQ(rec.payload, records.at(id - 4).payload);
    }
  }
  EXPECT_NE(records.at(1).payload, records.at(2).payload);
}
