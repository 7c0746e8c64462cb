#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "actors/benchmark/worker/worker.hpp"
#include "proto/benchmark_errors.hpp"

#include "actors/benchmark/worker/connect_backoff.hpp"

#include "actors/benchmark/dataset/payload.hpp"
#include "actors/benchmark/timing/cancellation.hpp"
#include "actors/benchmark/worker/response_parser.hpp"
#include "runtime/http/client.hpp"
#include "runtime/http/url.hpp"
#include "runtime/log/log.hpp"
#include "runtime/sse/sse_parser.hpp"
#include "runtime/tokenizer/resolve.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <caf/all.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace aiperf::worker {

using namespace proto;

std::int64_t monotonic_to_epoch(std::int64_t mono_ns) noexcept {
  static const std::int64_t offset = [] {
    timespec mono{};
    timespec real{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    return (real.tv_sec - mono.tv_sec) * 1'000'000'000LL
           + (real.tv_nsec - mono.tv_nsec);
  }();
  return mono_ns + offset;
}

namespace {

/// Sends the records the worker holds back (its own delayed message).
using flush_records_atom = caf::atom_constant<caf::atom("wflushrec")>;

/// The worker's interface plus the wake-up its I/O thread sends and its
/// own record flush.
using worker_impl_actor
  = credit_sink_actor::extend<caf::reacts_to<done_atom>,
                              caf::reacts_to<flush_records_atom>>;

/// Records are sent to the processor in batches of this many, or sooner
/// when the worker has nothing in flight, or after record_flush_delay: each
/// message wakes the processor (and then the records manager), which costs
/// context switches when actors have threads of their own. With the actors
/// on the I/O thread (`--scheduler-policy io-thread`) a batch is handled in
/// one go while sends wait, so it stays small: the records manager takes
/// ~2.6 µs per record, and 64 records held sends back for ~170 µs
/// (benchmark 3's p99 send lag 110-190 µs against 77-85 µs with 16).
/// Credit returns are never held back.
constexpr std::size_t record_batch_size = 16;
constexpr auto record_flush_delay = std::chrono::milliseconds{20};

/// Finished requests a worker takes per turn: a burst of completions (64
/// streams ending in the same millisecond) is handled in slices, so with
/// the actors on the I/O thread its reads and timers run in between.
constexpr std::size_t drain_slice = 16;

/// Finished request contexts a worker keeps for reuse, at most.
constexpr std::size_t max_free_contexts = 4096;
/// First-turn bodies kept per worker (bytes), and the conversations that
/// may have one (a large trace sends each entry once: nothing to gain).
constexpr std::size_t body_cache_limit = 8u << 20;
constexpr std::size_t max_cached_conversations = 65536;

/// Events (and text bytes per event) reserved up front per record, at most:
/// a huge --osl must not make every record allocate megabytes.
constexpr std::size_t max_reserved_events = 4096;

/// Requests run this close to their due time are started at once.
constexpr std::int64_t min_timer_wait_ns = 20'000;

struct request_context;

/// memcpy for the few bytes of one content delta, inline: two overlapping
/// loads and stores instead of a library call per event. Touches only
/// [src, src + n) and [dst, dst + n).
inline void copy_short(char* dst, const char* src, std::size_t n) noexcept {
  auto copy_ends = [&](auto word) {
    decltype(word) head;
    decltype(word) tail;
    std::memcpy(&head, src, sizeof head);
    std::memcpy(&tail, src + n - sizeof tail, sizeof tail);
    std::memcpy(dst, &head, sizeof head);
    std::memcpy(dst + n - sizeof tail, &tail, sizeof tail);
  };
  if (n > 16)
    std::memcpy(dst, src, n);
  else if (n >= 8)
    copy_ends(std::uint64_t{});
  else if (n >= 4)
    copy_ends(std::uint32_t{});
  else if (n > 0) {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

/// Finished requests handed from the I/O thread to the actor. The only
/// state both sides touch; guarded by `mtx`.
struct completion_queue {
  std::mutex mtx;
  std::vector<std::unique_ptr<request_context>> done;
  std::vector<std::uint64_t> first_tokens;
  caf::weak_actor_ptr owner;

  /// Adds under the lock; returns whether the queue was empty before, i.e.
  /// whether the actor needs a wake-up (it drains everything per wake-up).
  template <class F>
  [[nodiscard]] bool push(F&& add) {
    std::lock_guard<std::mutex> guard{mtx};
    bool was_empty = done.empty() && first_tokens.empty();
    add();
    return was_empty;
  }

  void wake() {
    if (auto ptr = owner.lock())
      caf::anon_send(caf::actor_cast<worker_impl_actor>(ptr),
                     done_atom::value);
  }
};

/// State owned by the I/O thread (never touched by the actor).
struct io_side {
  boost::asio::io_context* io = nullptr;
  http::client* client = nullptr;
  std::shared_ptr<completion_queue> queue;
  std::unordered_map<std::uint64_t, request_context*> live;
  /// A wake-up is posted (or timed) and has not run yet.
  bool wake_pending = false;
  /// The actor runs on this thread too (`--scheduler-policy io-thread`):
  /// a wake-up is then a message between neighbours, cheaper than the
  /// timer that would hold it back (see schedule_wake).
  bool actor_here = false;
  /// When the actor was last woken, and the timer that holds a wake-up
  /// back until min_wake_gap_ns after it.
  std::int64_t last_wake_ns = 0;
  std::optional<boost::asio::steady_timer> wake_timer;
  /// How early due-time timers are armed: a running average of how late
  /// this thread wakes after a timer expires (tens of µs on a busy VM). A
  /// timer that fires before the due time spins the rest of the way, so
  /// sends land on their due time instead of one wake-up latency after it.
  std::int64_t wake_margin_ns = 0;
};

/// Least time between two wake-ups of the actor by its I/O thread when the
/// actor runs on a thread of its own; bounds how long a finished request
/// waits before the actor sees it.
constexpr std::int64_t min_wake_gap_ns = 50'000;

/// Upper bound of io_side::wake_margin_ns, i.e. of one spin.
constexpr std::int64_t max_wake_margin_ns = 100'000;

/// On the I/O thread: wakes the actor after the handlers already queued on
/// this thread (the rest of this epoll round) have run, so requests that
/// complete together cost one message, one scheduling of the actor and one
/// batch downstream instead of one each. An actor on a thread of its own
/// is woken at most every min_wake_gap_ns (each wake-up costs futex calls
/// there); one on this thread at the end of every round: the timer would
/// cost more (a timerfd_settime per wake-up, ~5 µs on a VM, and a timer
/// interrupt) than the message it saves, and it delays every turn-around
/// (benchmark 1: 0.95x the CPU per request, 58-60 instead of 51-58 of
/// 64 requests in flight).
void schedule_wake(const std::shared_ptr<io_side>& side) {
  if (!side->io->get_executor().running_in_this_thread()) {
    // Completed off the I/O thread (client shutdown after the pool
    // stopped): nothing would run a posted wake-up.
    side->queue->wake();
    return;
  }
  if (side->wake_pending)
    return;
  side->wake_pending = true;
  auto wake = [side] {
    side->wake_pending = false;
    if (!side->actor_here) // the gap is only kept for an actor elsewhere
      side->last_wake_ns = http::now_ns();
    side->queue->wake();
  };
  auto due = side->last_wake_ns + min_wake_gap_ns;
  if (side->actor_here || http::now_ns() >= due) {
    boost::asio::post(*side->io, std::move(wake));
    return;
  }
  // Completions keep coming: collect them a little longer, so a busy run
  // pays one actor wake-up (futex calls, context switches) per few
  // requests rather than per one or two.
  if (!side->wake_timer)
    side->wake_timer.emplace(*side->io);
  side->wake_timer->expires_at(
    std::chrono::steady_clock::time_point{std::chrono::nanoseconds{due}});
  side->wake_timer->async_wait(
    [wake = std::move(wake)](const boost::system::error_code&) { wake(); });
}

/// One request on its way: the HTTP sink, the SSE parser, the record.
/// Created by the actor, owned by the I/O thread while in flight, then
/// handed back through the completion queue.
struct request_context final : http::response_sink {
  request_record record;
  std::shared_ptr<io_side> io;
  endpoint_kind kind = endpoint_kind::chat;
  bool export_raw = false;
  bool notify_first_token = false;
  std::int64_t due_ns = 0;
  std::uint32_t num_turns = 1;
  /// --request-cancellation-rate picked this request: cancelled this long
  /// after it is sent (-1: never), by cancel_timer.
  std::int64_t cancel_after_ns = -1;
  bool cancel_injected = false;
  http::request_id id = 0;
  bool submitted = false;
  bool event_stream = false;
  /// The connection backoff of this request's destination, shared with
  /// every worker of the process that sends there (a dead endpoint is
  /// probed by one request per wait instead of by every worker at the rate
  /// credits return), and whether this request was admitted as its probe.
  std::shared_ptr<destination_backoff> backoff;
  bool backoff_probe = false;
  /// A 3xx response's Location (redirects are not followed).
  std::string location;
  std::int64_t last_read_ns = 0;
  /// The request, lent to the client until on_complete (its strings keep
  /// their capacity from credit to credit).
  http::request req;
  /// The content deltas so far, joined into record.output_text once the
  /// response has ended: a per-event append to a plain buffer is a copy,
  /// not a std::string::append call (~25 instructions per event less).
  std::unique_ptr<char[]> text;
  std::size_t text_size = 0;
  std::size_t text_capacity = 0;
  std::string body;
  sse::sse_parser parser;
  response_parser fields_parser;
  message_fields fields;
  std::optional<boost::asio::steady_timer> timer;
  std::optional<boost::asio::steady_timer> cancel_timer;

  /// Makes a finished (record moved out) context ready for the next credit,
  /// keeping the capacity of its buffers and the parsers' scratch.
  void reset() {
    record = request_record{};
    io.reset();
    id = 0;
    submitted = false;
    event_stream = false;
    last_read_ns = 0;
    text_size = 0;
    body.clear();
    parser.reset();
    fields = message_fields{};
    timer.reset();
    cancel_timer.reset();
    cancel_after_ns = -1;
    cancel_injected = false;
  }

  void set_error(std::int32_t code, std::string type, std::string message) {
    if (record.has_error)
      return; // the first error is the cause
    record.has_error = true;
    record.error = error_details{code, std::move(type), std::move(message)};
  }

  [[gnu::noinline]] void grow_text(std::size_t more) {
    auto capacity = std::max(text_capacity * 2, text_size + more + 256);
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
    if (text_size > 0)
      std::memcpy(bigger.get(), text.get(), text_size);
    text = std::move(bigger);
    text_capacity = capacity;
  }

  // Inlined into the per-event path (the compiler would not by itself).
  [[gnu::always_inline]] void add_content(std::string_view content,
                                          std::string_view reasoning,
                                          std::int64_t ts) {
    if (content.empty() && reasoning.empty())
      return;
    bool first = record.response_ts_ns.empty();
    record.response_ts_ns.push_back(ts);
    record.response_is_reasoning.push_back(content.empty() ? 1 : 0);
    if (!content.empty()) {
      if (text_size + content.size() > text_capacity)
        grow_text(content.size());
      copy_short(text.get() + text_size, content.data(), content.size());
      text_size += content.size();
    }
    if (!reasoning.empty())
      record.reasoning_text.append(reasoning);
    if (first && notify_first_token) {
      auto credit = record.credit_id;
      if (io->queue->push([&] { io->queue->first_tokens.push_back(credit); }))
        schedule_wake(io);
    }
  }

  void on_message(std::string_view data, std::int64_t ts) {
    if (!fields_parser.parse(data, kind, fields)) {
      set_error(502, "InvalidResponse",
                "response is not valid JSON: "
                  + std::string{data.substr(0, 200)});
      return;
    }
    if (fields.is_error) {
      set_error(502, "ServerError",
                fields.error_message.empty()
                  ? std::string{data.substr(0, 200)}
                  : std::string{fields.error_message});
      return;
    }
    if (fields.has_usage)
      record.usage = fields.usage;
    if (fields.has_embedding) {
      record.response_ts_ns.push_back(ts);
      record.response_is_reasoning.push_back(0);
      return;
    }
    add_content(fields.content, fields.reasoning, ts);
  }

  void on_send(std::int64_t ts_ns) override {
    record.request_start_ns = ts_ns;
    record.request_start_wall_ns = monotonic_to_epoch(ts_ns);
  }

  void on_headers(const http::response_head& head, std::int64_t ts) override {
    record.http_status = head.status;
    record.request_ack_ns = ts;
    event_stream = head.content_type.starts_with("text/event-stream");
    if (head.status / 100 == 3)
      location.assign(head.find("location"));
    if (export_raw)
      for (auto& f : head.fields)
        record.response_headers.push_back(std::string{f.name} + ": "
                                          + std::string{f.value});
  }

  void on_body(std::string_view bytes, std::int64_t ts) override {
    last_read_ns = ts;
    if (!event_stream || record.http_status / 100 != 2) {
      body.append(bytes);
      return;
    }
    auto on_event = [this](const sse::sse_event& ev) {
      if (export_raw)
        record.raw_responses.push_back(raw_response{
          ev.ts_ns, std::string{ev.data}, std::string{ev.comment}});
      if (ev.is_error()) {
        set_error(502, "SSEError",
                  ev.data.empty() ? "event: error" : std::string{ev.data});
        return;
      }
      if (!ev.has_data() || ev.is_done() || ev.data.empty())
        return;
      on_message(ev.data, ev.ts_ns);
    };
    if (export_raw) {
      parser.feed(bytes, ts, on_event);
      return;
    }
    // A block that matches the parser's template is what on_event would
    // reach on_message with: its content goes straight to the record.
    parser.feed(bytes, ts, on_event,
                [this, ts](const char* first, const char* last)
                  __attribute__((always_inline)) {
                  std::string_view content;
                  auto* end = fields_parser.match_data_block(first, last, kind,
                                                             content);
                  if (end != nullptr)
                    add_content(content, {}, ts);
                  return end;
                });
  }

  void on_complete(const http::error_info& err, std::int64_t ts) override {
    record.request_end_ns = ts;
    // Never sent (refused connection, TLS failure, cancelled while waiting):
    // the attempt started when it was due, or when the credit arrived, so
    // its times stay on the same timeline as every other record's.
    if (record.request_start_ns == 0) {
      auto start = record.intended_send_ns != 0 ? record.intended_send_ns
                   : record.credit_received_ns != 0 ? record.credit_received_ns
                                                    : ts;
      on_send(std::min(start, ts));
    }
    if (!err.ok()) {
      switch (err.category) {
        case http::error_category::cancelled:
          record.was_cancelled = true;
          record.cancellation_time_ns = ts; // monotonic, like every stamp
          // One message for all, so the error summary groups them; the
          // injected ones in AIPerf's words (aiperf/workers/worker.py).
          if (cancel_injected) {
            char text[96];
            std::snprintf(text, sizeof text,
                          "Request was cancelled after %.3f seconds",
                          static_cast<double>(cancel_after_ns) / 1e9);
            set_error(499, "RequestCancellationError", text);
          } else {
            set_error(499, "RequestCancellationError",
                      "request cancelled by the benchmark (interrupt or end "
                      "of the grace period)");
          }
          break;
        case http::error_category::timeout:
          set_error(408, "RequestTimeoutError", err.message);
          break;
        case http::error_category::connect:
          set_error(503, "ConnectionError", err.message);
          break;
        case http::error_category::tls:
          set_error(525, "TLSError", err.message);
          break;
        case http::error_category::protocol:
          set_error(502, "ProtocolError", err.message);
          break;
        default:
          set_error(502, "TransportError", err.message);
          break;
      }
    } else if (record.http_status / 100 != 2) {
      std::string message = body.substr(0, 500);
      if (fields_parser.parse(body, kind, fields) && fields.is_error
          && !fields.error_message.empty())
        message = std::string{fields.error_message};
      if (record.http_status / 100 == 3)
        message = location.empty()
                    ? "redirect without a Location not followed: check --url"
                    : "redirect to " + location
                        + " not followed: pass that URL (without the "
                          "endpoint path) as --url";
      set_error(record.http_status, "HTTPError", message);
    } else if (event_stream) {
      auto dropped = parser.finish(ts, [](const sse::sse_event&) {});
      if (dropped > 0 && record.response_ts_ns.empty())
        set_error(502, "InvalidResponse",
                  "stream ended inside an SSE event");
    } else if (!body.empty()) {
      // Asked for a stream, got one JSON body: still a success, flagged.
      record.stream_ignored = record.streaming;
      if (export_raw)
        record.raw_responses.push_back(raw_response{last_read_ns, body, {}});
      on_message(body, last_read_ns);
    }
    if (backoff) {
      if (!err.ok() && err.category == http::error_category::connect)
        backoff->refused(ts, backoff_probe);
      else if (!err.ok() && err.category == http::error_category::cancelled)
        backoff->abandoned(backoff_probe);
      else
        backoff->reached(); // connected: every worker sends at once again
      backoff_probe = false;
    }
    if (text_size > 0)
      record.output_text.assign(text.get(), text_size);
    timer.reset();
    cancel_timer.reset();
    auto self = std::unique_ptr<request_context>{this};
    auto side = io; // keeps the queue alive past this object
    side->live.erase(record.credit_id);
    if (side->queue->push(
          [&] { side->queue->done.push_back(std::move(self)); }))
      schedule_wake(side);
  }
};

void arm_due_timer(request_context* ctx);

/// On the I/O thread, just before ctx is sent: a timer that cancels it
/// cancel_after_ns after the send (AIPerf's wait_for around the send). The
/// handler finds the request by credit id, not through ctx: the request may
/// have completed, and ctx been handed back, before the timer fires.
void arm_cancel_timer(request_context* ctx) {
  auto side = ctx->io;
  ctx->cancel_timer.emplace(*side->io);
  ctx->cancel_timer->expires_after(
    std::chrono::nanoseconds{ctx->cancel_after_ns});
  ctx->cancel_timer->async_wait(
    [side, credit = ctx->record.credit_id](const boost::system::error_code& ec) {
      if (ec)
        return; // completed first: on_complete dropped the timer
      auto it = side->live.find(credit);
      if (it == side->live.end() || !it->second->submitted)
        return;
      it->second->cancel_injected = true;
      side->client->cancel(it->second->id);
    });
}

/// On the I/O thread, when ctx is due: sends it, unless its destination
/// backs off and another request probes it; then it waits for the time
/// the backoff names (a timer like a due time's, cancellable the same way)
/// and asks again.
void send_when_admitted(request_context* ctx) {
  if (ctx->backoff && ctx->backoff->backing_off()) {
    auto admitted = ctx->backoff->admit(http::now_ns());
    if (admitted.retry_at_ns != 0) {
      ctx->due_ns = admitted.retry_at_ns;
      arm_due_timer(ctx);
      return;
    }
    ctx->backoff_probe = admitted.probe;
  }
  if (ctx->cancel_after_ns >= 0)
    arm_cancel_timer(ctx);
  // submit_here: written now, not after the rest of this thread's queue;
  // ctx may already be completed (and handed back) when it returns.
  ctx->submitted = true;
  ctx->io->client->submit_here(ctx->req, *ctx, ctx->id);
}

/// On the I/O thread: sends ctx->req now or arms a timer for the due time.
void start_on_io(request_context* ctx) {
  auto& side = *ctx->io;
  side.live.emplace(ctx->record.credit_id, ctx);
  ctx->backoff_probe = false;
  // Due at once (0: closed loop) needs no clock read.
  if (ctx->due_ns == 0 || ctx->due_ns - http::now_ns() <= min_timer_wait_ns) {
    send_when_admitted(ctx);
    return;
  }
  arm_due_timer(ctx);
}

/// On the I/O thread: a timer for ctx's due time, then send_when_admitted.
void arm_due_timer(request_context* ctx) {
  auto& side = *ctx->io;
  auto armed = ctx->due_ns - side.wake_margin_ns;
  ctx->timer.emplace(*side.io);
  ctx->timer->expires_at(
    std::chrono::steady_clock::time_point{std::chrono::nanoseconds{armed}});
  ctx->timer->async_wait(
    [ctx, armed](const boost::system::error_code& ec) {
      if (ec) {
        // Cancelled while waiting for its due time: never sent.
        ctx->on_complete(http::error_info{http::error_category::cancelled, 0,
                                          "cancelled before it was sent"},
                         http::now_ns());
        return;
      }
      auto& side = *ctx->io;
      auto now = http::now_ns();
      // EWMA (1/16) of the wake-up latency, bounded so a stall (a
      // preempted thread) cannot turn into long spins later.
      auto late = std::clamp<std::int64_t>(now - armed, 0, max_wake_margin_ns);
      side.wake_margin_ns += (late - side.wake_margin_ns) / 16;
      while (now < ctx->due_ns) // at most the margin armed with
        now = http::now_ns();
      send_when_admitted(ctx);
    });
}

/// On the I/O thread: cancels the given credits (all when `ids` is empty).
void cancel_on_io(io_side& side, const std::vector<std::uint64_t>& ids) {
  std::vector<request_context*> targets;
  if (ids.empty()) {
    for (auto& [id, ctx] : side.live)
      targets.push_back(ctx);
  } else {
    for (auto id : ids)
      if (auto it = side.live.find(id); it != side.live.end())
        targets.push_back(it->second);
  }
  for (auto* ctx : targets) {
    if (ctx->submitted)
      side.client->cancel(ctx->id);
    else if (ctx->timer)
      ctx->timer->cancel();
  }
}

struct worker_state {
  static inline const char* name = "worker";
  worker_config cfg;
  worker_deps deps;
  std::shared_ptr<io_side> io;
  std::optional<dataset::payload_builder> payloads;
  /// Per URL: where to connect and the request target (the URL's base
  /// path and the endpoint path).
  struct destination {
    http::endpoint ep;
    std::string target;
    std::shared_ptr<destination_backoff> backoff;
    /// `Basic ...` from the URL's user-info, "" when it has none or the
    /// user's own Authorization header wins (explicit beats implicit).
    std::string authorization;
  };
  std::vector<destination> destinations;
  /// Content-Type and the user's fields, built once and shared by every
  /// request (only the ids are per request).
  std::shared_ptr<const std::vector<std::pair<std::string, std::string>>>
    headers;
  /// Finished contexts kept for reuse (their buffers keep their capacity).
  std::vector<std::unique_ptr<request_context>> free_contexts;
  /// Events of the last finished response, to reserve the next record's
  /// stamps once instead of growing them event by event.
  std::size_t last_events = 0;
  /// Live assistant replies per session, for multi-turn payloads.
  std::map<std::pair<std::uint8_t, std::uint32_t>, std::vector<std::string>>
    history;
  /// Bodies of first turns (which carry no replies) by conversation, built
  /// once: a dataset is usually much smaller than the run, so its entries
  /// are sent many times. Bounded by body_cache_limit bytes.
  std::vector<std::string> first_turn_bodies;
  std::size_t body_cache_bytes = 0;
  std::uint64_t requests = 0;
  /// Requests handed to the I/O thread and not drained yet.
  std::size_t in_flight = 0;
  /// Finished records not sent yet (see record_batch_size).
  request_record_batch pending_records;
  /// What a wake-up took from the completion queue: swapped with the
  /// queue's vectors, so both keep their capacity from wake-up to wake-up.
  std::vector<std::unique_ptr<request_context>> drained;
  std::vector<std::uint64_t> drained_first_tokens;
  bool flush_armed = false;
};

using actor_ptr = worker_impl_actor::stateful_pointer<worker_state>;

/// Sets `out` to `<run_id><tag><n>` (the request and correlation ids) in
/// one allocation at most: built for every credit. (Written in place, not
/// appended: another std::string::append call site in this file makes the
/// compiler stop inlining the per-event one in add_content.)
void assign_id(std::string& out, std::string_view run_id, std::string_view tag,
               std::uint64_t n) {
  char digits[20];
  const auto count = static_cast<std::size_t>(
    std::to_chars(digits, digits + sizeof(digits), n).ptr - digits);
  out.assign(run_id.size() + tag.size() + count, '\0');
  char* p = out.data();
  std::memcpy(p, run_id.data(), run_id.size());
  std::memcpy(p + run_id.size(), tag.data(), tag.size());
  std::memcpy(p + run_id.size() + tag.size(), digits, count);
}

/// The body of turn `turn_index` of `conv` (conversation `index`); the
/// view lives until the next call.
std::string_view body_of(worker_state& st, std::size_t index,
                         const dataset::conversation& conv,
                         std::size_t turn_index,
                         const std::vector<std::string>& replies) {
  if (turn_index != 0 || index >= max_cached_conversations)
    return st.payloads->build(conv, turn_index, replies);
  auto& cache = st.first_turn_bodies;
  if (index < cache.size() && !cache[index].empty())
    return cache[index];
  auto body = st.payloads->build(conv, 0, replies);
  if (st.body_cache_bytes + body.size() <= body_cache_limit) {
    if (cache.size() <= index)
      cache.resize(index + 1);
    cache[index] = body;
    st.body_cache_bytes += body.size();
  }
  return body;
}

/// Sets `header` to (name, value), keeping the strings' capacity.
void set_header(std::pair<std::string, std::string>& header,
                std::string_view name, std::string_view value) {
  header.first.assign(name);
  header.second.assign(value);
}

/// Fills `req` with the request of credit `c` (refilled in place: no
/// allocation once its strings have grown), or fills `rec`'s error and
/// returns false when it cannot.
bool make_request(worker_state& st, const credit& c, request_record& rec,
                  http::request& req) {
  const auto& data = *st.deps.data;
  if (c.conversation >= data.conversations.size()
      || c.turn_index >= data.conversations[c.conversation].turns.size()) {
    rec.has_error = true;
    rec.error = {0, "InternalError", "credit names a turn the dataset lacks"};
    return false;
  }
  const auto& conv = data.conversations[c.conversation];
  const auto& turn = conv.turns[c.turn_index];
  rec.conversation_id = conv.session_id;
  rec.requested_output_tokens = turn.max_output_tokens;
  // Looked up, not inserted: single-turn runs keep no history at all.
  static const std::vector<std::string> no_replies;
  auto hit = st.history.find({static_cast<std::uint8_t>(c.phase),
                              c.session_num});
  const auto& replies = hit != st.history.end() ? hit->second : no_replies;
  // ISL counts what the request carries (AIPerf: every turn of the session
  // so far, joined with " "): the earlier user turns and the live replies
  // too, except for embeddings, which send the current turn only.
  rec.input_tokens = turn.input_tokens;
  if (st.cfg.endpoint != endpoint_kind::embeddings) {
    for (std::size_t i = 0; i < c.turn_index; ++i)
      rec.input_tokens += conv.turns[i].input_tokens;
    for (std::size_t i = 0; i < replies.size() && i < c.turn_index; ++i)
      if (!replies[i].empty())
        rec.input_tokens
          += static_cast<std::int64_t>(tokenizer::count_for_metrics(replies[i]));
  }
  const auto& to = st.destinations[c.url_index % st.destinations.size()];
  req.ep = to.ep;
  req.method.assign("POST");
  req.target.assign(to.target);
  req.body.assign(body_of(st, c.conversation, conv, c.turn_index, replies));
  if (req.shared_headers != st.headers)
    req.shared_headers = st.headers;
  req.headers.resize(to.authorization.empty() ? 2 : 3);
  set_header(req.headers[0], "X-Request-ID", rec.x_request_id);
  set_header(req.headers[1], "X-Correlation-ID", rec.x_correlation_id);
  if (!to.authorization.empty())
    set_header(req.headers[2], "Authorization", to.authorization);
  req.timeout_ms = st.cfg.timeout_ms;
  if (st.cfg.export_raw) {
    rec.payload = req.body;
    for (auto& [k, v] : *st.headers)
      rec.request_headers.push_back(k + ": " + v);
    // The URL's credentials stay out of the raw export, as out of every
    // other output: headers[2], when there is one, is their Basic auth.
    for (std::size_t i = 0; i < req.headers.size(); ++i)
      rec.request_headers.push_back(req.headers[i].first + ": "
                                    + (i == 2 ? std::string{"Basic <redacted>"}
                                              : req.headers[i].second));
  }
  return true;
}

void flush_records(actor_ptr self) {
  auto& st = self->state;
  if (st.pending_records.records.empty())
    return;
  self->send(st.deps.records, std::move(st.pending_records));
  st.pending_records = request_record_batch{};
  st.pending_records.records.reserve(record_batch_size);
}

/// Sends the held records now when the batch is full or nothing is in
/// flight (so the last records of a phase leave with its last returns),
/// else makes sure a delayed flush is coming.
void maybe_flush_records(actor_ptr self) {
  auto& st = self->state;
  if (st.pending_records.records.empty())
    return;
  if (st.pending_records.records.size() >= record_batch_size
      || st.in_flight == 0) {
    flush_records(self);
    return;
  }
  if (!st.flush_armed) {
    st.flush_armed = true;
    self->delayed_send(self, record_flush_delay, flush_records_atom::value);
  }
}

void drain_completions(actor_ptr self) {
  auto& st = self->state;
  auto& done = st.drained;
  auto& first_tokens = st.drained_first_tokens;
  done.clear();
  first_tokens.clear();
  bool more = false;
  {
    std::lock_guard<std::mutex> guard{st.io->queue->mtx};
    auto& queued = st.io->queue->done;
    if (queued.size() <= drain_slice) {
      done.swap(queued);
    } else {
      auto end = queued.begin() + static_cast<std::ptrdiff_t>(drain_slice);
      done.assign(std::make_move_iterator(queued.begin()),
                  std::make_move_iterator(end));
      queued.erase(queued.begin(), end);
      more = true;
    }
    first_tokens.swap(st.io->queue->first_tokens);
  }
  // The rest in a later turn, so I/O handlers run in between (the queue is
  // not empty, so the I/O thread sends no wake-up for it).
  if (more)
    self->send(self, done_atom::value);
  for (auto id : first_tokens)
    self->send(st.deps.timing, first_tok_atom::value, id);
  if (done.empty())
    return;
  credit_return_batch returns;
  auto& records = st.pending_records;
  returns.reserve(done.size());
  st.in_flight -= std::min(st.in_flight, done.size());
  for (auto& ctx : done) {
    auto& rec = ctx->record;
    auto outcome = rec.was_cancelled ? credit_outcome::cancelled
                                     : credit_outcome::ok;
    returns.push_back({rec.credit_id, st.cfg.worker_index, outcome,
                       rec.has_error});
    std::pair<std::uint8_t, std::uint32_t> key{
      static_cast<std::uint8_t>(rec.phase), rec.session_num};
    if (rec.was_cancelled || rec.turn_index + 1 >= ctx->num_turns) {
      if (ctx->num_turns > 1)
        st.history.erase(key);
    } else {
      st.history[key].push_back(rec.output_text);
    }
    if (!rec.has_error && !rec.response_ts_ns.empty())
      st.last_events = rec.response_ts_ns.size();
    records.records.push_back(std::move(rec));
  }
  for (auto& ctx : done)
    if (st.free_contexts.size() < max_free_contexts) {
      ctx->reset();
      st.free_contexts.push_back(std::move(ctx));
    }
  done.clear(); // the contexts not kept
  // Records first: a processor sees a phase's records before the timing
  // manager can report the phase complete.
  maybe_flush_records(self);
  self->send(st.deps.timing, std::move(returns));
}

worker_impl_actor::behavior_type worker_impl(actor_ptr self,
                                             worker_config cfg,
                                             worker_deps deps) {
  auto logger = log::get("worker");
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.deps = std::move(deps);
  st.io = std::make_shared<io_side>();
  st.io->io = st.deps.io;
  st.io->client = st.deps.client;
  st.io->queue = std::make_shared<completion_queue>();
  st.io->queue->owner = caf::actor_cast<caf::weak_actor_ptr>(self);
  dataset::payload_options popts;
  popts.endpoint = static_cast<dataset::endpoint_type>(st.cfg.endpoint);
  popts.model = st.cfg.model;
  popts.streaming = st.cfg.streaming;
  popts.use_legacy_max_tokens = st.cfg.use_legacy_max_tokens;
  popts.include_usage = st.cfg.include_usage;
  popts.extra_inputs_json = st.cfg.extra_inputs_json;
  st.payloads.emplace(std::move(popts));
  bool explicit_authorization = std::any_of(
      st.cfg.headers.begin(), st.cfg.headers.end(), [](const std::string& h) {
        auto name = h.substr(0, h.find(':'));
        return name.size() == 13
               && std::equal(name.begin(), name.end(), "authorization",
                             [](char a, char b) {
                               return std::tolower(static_cast<unsigned char>(a)) == b;
                             });
      });
  for (auto& u : st.cfg.urls) {
    // URLs were validated with the configuration; a bad one here is a bug.
    auto parsed = http::parse_url(u);
    if (!parsed) {
      logger->error("worker {}: {}", st.cfg.worker_id, error_message(parsed.error()));
      self->quit(std::move(parsed.error()));
      continue;
    }
    auto backoffs
        = st.deps.backoffs ? st.deps.backoffs : backoff_registry::process();
    st.destinations.push_back({parsed->ep,
                               parsed->base_path + st.cfg.endpoint_path,
                               backoffs->of(parsed->ep.host, parsed->ep.port),
                               explicit_authorization
                                 ? std::string{}
                                 : http::basic_authorization(*parsed)});
  }
  std::vector<std::pair<std::string, std::string>> headers;
  headers.emplace_back("Content-Type", "application/json");
  for (auto& h : st.cfg.headers) {
    auto colon = h.find(':');
    auto value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ')
      value.erase(0, 1);
    headers.emplace_back(h.substr(0, colon), value);
  }
  st.headers = std::make_shared<
    const std::vector<std::pair<std::string, std::string>>>(std::move(headers));
  self->attach_functor([side = st.io] {
    // Nothing may stay in flight for a worker that is gone.
    boost::asio::post(*side->io, [side] { cancel_on_io(*side, {}); });
  });
  return {
    [=](credit_batch& batch) {
      auto& st = self->state;
      auto received = http::now_ns();
      std::vector<request_context*> starts;
      starts.reserve(batch.size());
      credit_return_batch failed;
      request_record_batch failed_records;
      for (auto& c : batch) {
        std::unique_ptr<request_context> ctx;
        if (st.free_contexts.empty()) {
          ctx = std::make_unique<request_context>();
        } else {
          ctx = std::move(st.free_contexts.back());
          st.free_contexts.pop_back();
        }
        auto& rec = ctx->record;
        rec.credit_id = c.id;
        rec.session_num = c.session_num;
        rec.turn_index = c.turn_index;
        rec.phase = c.phase == phase::warmup ? benchmark_phase::warmup
                                             : benchmark_phase::profiling;
        rec.worker_id = st.cfg.worker_id;
        assign_id(rec.x_correlation_id, st.cfg.run_id,
                  c.phase == phase::warmup ? "-w" : "-s", c.session_num);
        assign_id(rec.x_request_id, st.cfg.run_id, "-r", c.id);
        rec.credit_issued_ns = monotonic_to_epoch(c.issued_at_ns);
        rec.credit_received_ns = received;
        rec.intended_send_ns = c.due_ns;
        rec.streaming = st.cfg.streaming;
        if (!make_request(st, c, rec, ctx->req)) {
          failed.push_back({c.id, st.cfg.worker_index, credit_outcome::ok,
                            true});
          failed_records.records.push_back(std::move(rec));
          continue;
        }
        // The record leaves with its stamps: size them once, from the last
        // response and the requested length.
        auto events = std::min(
          std::max<std::size_t>(
            st.last_events,
            rec.requested_output_tokens > 0
              ? static_cast<std::size_t>(rec.requested_output_tokens) + 1
              : 0),
          max_reserved_events);
        rec.response_ts_ns.reserve(events);
        rec.response_is_reasoning.reserve(events);
        ctx->io = st.io;
        ctx->kind = st.cfg.endpoint;
        ctx->export_raw = st.cfg.export_raw;
        ctx->notify_first_token = st.cfg.notify_first_token;
        ctx->due_ns = c.due_ns;
        ctx->num_turns = c.num_turns;
        if (timing::should_cancel(st.cfg.cancel_share, st.cfg.cancel_seed,
                                  static_cast<std::uint8_t>(c.phase),
                                  c.session_num, c.turn_index)) [[unlikely]]
          ctx->cancel_after_ns = st.cfg.cancel_delay_ns;
        if (const auto& to
            = st.destinations[c.url_index % st.destinations.size()];
            ctx->backoff != to.backoff)
          ctx->backoff = to.backoff;
        starts.push_back(ctx.release());
        ++st.requests;
      }
      st.in_flight += starts.size();
      // On the I/O thread already (io-thread scheduling): sent now, not
      // after a turn of the loop.
      if (!starts.empty()) {
        // The contexts keep the side alive until this runs.
        bool here = st.io->io->get_executor().running_in_this_thread();
        boost::asio::dispatch(
          *st.io->io,
          [side = st.io.get(), here, starts = std::move(starts)]() mutable {
            side->actor_here = here;
            for (auto* ctx : starts)
              start_on_io(ctx);
          });
      }
      if (!failed.empty()) {
        for (auto& r : failed_records.records)
          st.pending_records.records.push_back(std::move(r));
        maybe_flush_records(self);
        self->send(st.deps.timing, std::move(failed));
      }
    },
    [=](cancel_atom, std::vector<std::uint64_t>& ids) {
      auto side = self->state.io;
      boost::asio::post(*side->io, [side, ids = std::move(ids)] {
        cancel_on_io(*side, ids);
      });
    },
    [=](done_atom) { drain_completions(self); },
    [=](flush_records_atom) {
      self->state.flush_armed = false;
      flush_records(self);
    },
  };
}

} // namespace

credit_sink_actor spawn_worker(caf::actor_system& sys, worker_config cfg,
                               worker_deps deps) {
  return caf::actor_cast<credit_sink_actor>(
    sys.spawn(worker_impl, std::move(cfg), std::move(deps)));
}

credit_sink_actor spawn_worker_linked(caf::local_actor* parent,
                                      worker_config cfg, worker_deps deps) {
  return caf::actor_cast<credit_sink_actor>(parent->spawn<caf::linked>(
    worker_impl, std::move(cfg), std::move(deps)));
}

} // namespace aiperf::worker
