// Incremental Server-Sent-Events parser for the benchmark client's I/O thread.
//
// It runs for every byte of every streamed response, so it is built to cost
// a few hundred instructions per event: one `memchr` for CR per read, then an
// LF-only line loop with a `data:` shortcut; events that lie entirely inside
// one read are handed out as views into that read (no copy, no allocation);
// only an event that straddles reads is accumulated in a member buffer whose
// capacity is kept for the next one.
//
// Wire rules (WHATWG HTML "Server-sent events", §9.2.6), with the deviations
// marked [dev]:
// - lines end with "\r\n", "\n" or "\r" (a CRLF split across reads is one
//   terminator); an empty line ends the event block;
// - a UTF-8 BOM at the very start of the stream is skipped;
// - "name: value" (one leading space of the value stripped), "name" alone =
//   empty value, ":" starts a comment; unknown field names are ignored;
// - `data` lines are joined with "\n"; `event`, `id`: the last one wins;
//   `retry`: ASCII digits only, else ignored; an `id` containing NUL is
//   ignored;
// - [dev] `id` is per block: a block without `id` reports an empty id (the
//   browser's "last event id" persists; callers that need it keep it);
// - [dev] a block is dispatched when it holds at least one `data`, `event`,
//   `id` or valid `retry` field (WHATWG requires `data`): a data-less
//   `event: error` must not vanish from a benchmark. Blocks holding only
//   comments or unknown fields (keep-alives like ": ping") are not
//   dispatched;
// - the LAST comment line of a block is exposed as `comment`, without the
//   colon and one optional leading space (the mock server's `--stamp-events`
//   writes ": t=<ns>" in front of each `data:` line);
// - end of stream: by default an unterminated last block is discarded, as
//   WHATWG says (`finish` reports how many bytes were dropped, so a
//   truncated stream is visible); `eof_policy::dispatch` treats EOF as the
//   end of the line and of the block instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace aiperf::sse {

/// One dispatched event. All views are valid only during the handler call:
/// they point into the read that completed the event or into the parser's
/// accumulation buffers.
struct sse_event {
  /// `data` lines joined with "\n" (empty if there were none).
  std::string_view data;
  /// The `event` field ("" if absent).
  std::string_view event;
  /// The `id` field of this block ("" if absent).
  std::string_view id;
  /// The last comment line of the block, without ':' and one leading space.
  std::string_view comment;
  /// The `retry` field in milliseconds, when present and all digits.
  std::optional<std::uint64_t> retry;
  /// Monotonic timestamp of the read (`feed` call) that completed the event.
  std::int64_t ts_ns = 0;
  /// Number of `data` lines in the block.
  std::uint32_t data_lines = 0;

  /// Returns whether the block had at least one `data` line.
  [[nodiscard]] bool has_data() const noexcept { return data_lines != 0; }

  /// Returns whether this is the OpenAI stream terminator `data: [DONE]`.
  [[nodiscard]] bool is_done() const noexcept {
    return data_lines != 0 && data == "[DONE]";
  }

  /// Returns whether the server flagged the event as an error
  /// (`event: error`).
  [[nodiscard]] bool is_error() const noexcept { return event == "error"; }
};

/// What `finish` does with a last block that no empty line terminated.
enum class eof_policy : std::uint8_t {
  /// Drop it (WHATWG).
  discard,
  /// Treat end of stream as the end of its last line and of the block.
  dispatch,
};

/// Incremental SSE parser for one response stream (one per connection;
/// `reset()` between responses on a reused connection).
///
/// Not thread-safe: one instance belongs to one I/O thread. The handler must
/// not throw; if it does, call `reset()` before using the parser again.
class sse_parser {
public:
  /// Default bound on the bytes of one event that straddles reads.
  static constexpr std::size_t default_max_event_bytes = 64u << 20;

  /// `max_event_bytes` bounds memory when a server never sends an empty
  /// line: once an unfinished event would exceed it, the parser fails (see
  /// `feed`).
  explicit sse_parser(std::size_t max_event_bytes = default_max_event_bytes)
      : max_event_bytes_(max_event_bytes) {
    // nop
  }

  /// Parses the next bytes of the stream; every event completed by them is
  /// passed to `on_event(const sse_event&)` with `ts_ns = read_ts_ns`.
  /// Returns false once the parser has failed (an unfinished event grew past
  /// `max_event_bytes`); a failed parser ignores input until `reset()`.
  template <class Handler>
  bool feed(std::string_view bytes, std::int64_t read_ts_ns,
            Handler&& on_event) {
    return feed(bytes, read_ts_ns, on_event, no_shortcut{});
  }

  /// As `feed`, with the caller's shortcut for blocks whose exact bytes it
  /// knows (a stream's chunks mostly differ in one string): at each block
  /// start, `try_block(first, last)` either returns nullptr, leaving the
  /// block to the parser, or consumes one whole block at the start of
  /// [first, last), does itself what `on_event` would have done with it,
  /// and returns the end of the block (after its blank line). It may only
  /// take blocks without CR that parse into one event; the parser then
  /// skips the line loop (and the CR search) over them.
  template <class Handler, class Shortcut>
  bool feed(std::string_view bytes, std::int64_t read_ts_ns,
            Handler&& on_event, Shortcut&& try_block) {
    if (failed_)
      return false;
    if (bytes.empty())
      return true;
    if (!bom_checked_) [[unlikely]] {
      bytes = skip_bom(bytes);
      if (bytes.empty())
        return true;
    }
    if (skip_lf_) {
      // The previous read ended with a CR; its LF half is redundant.
      skip_lf_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        if (bytes.empty())
          return true;
      }
    }
    if (!pending_.empty()) [[unlikely]] {
      auto end = complete_pending(bytes);
      if (failed_)
        return false;
      if (end == npos)
        return true;
      // `pending_` may end with the CR that closed the block; whether an LF
      // follows is known only from `bytes`, so keep complete_pending's view.
      bool skip_lf = skip_lf_;
      scan_all(pending_, read_ts_ns, on_event, try_block);
      skip_lf_ = skip_lf;
      pending_.clear();
      bytes.remove_prefix(end);
      if (bytes.empty())
        return true;
    }
    auto tail = scan_all(bytes, read_ts_ns, on_event, try_block);
    if (tail != bytes.size())
      return keep_tail(bytes.substr(tail));
    return true;
  }

  /// Ends the stream. Returns the number of bytes of an unterminated last
  /// block that were dropped (0 for a cleanly ended stream, and always 0
  /// with `eof_policy::dispatch`, which hands that block to `on_event`
  /// instead). Leaves the parser reset for the next stream.
  template <class Handler>
  std::size_t finish(std::int64_t read_ts_ns, Handler&& on_event,
                     eof_policy policy = eof_policy::discard) {
    std::size_t dropped = 0;
    if (!failed_) {
      if (!bom_checked_ && bom_matched_ > 0)
        pending_.assign(bom_bytes, bom_matched_);
      if (policy == eof_policy::dispatch && !pending_.empty()) {
        // A blank line closes whatever is open: "x" -> "x\n\n",
        // "x\r" -> "x\r\n\n" (CRLF then LF), "x\n" -> "x\n\n\n".
        pending_.append("\n\n");
        no_shortcut none;
        scan_all(pending_, read_ts_ns, on_event, none);
      } else {
        dropped = pending_.size();
      }
    }
    reset();
    return dropped;
  }

  /// Forgets all stream state (for the next response on a reused
  /// connection); buffer capacity is kept.
  void reset() noexcept {
    pending_.clear();
    data_buf_.clear();
    clear_block();
    skip_lf_ = false;
    bom_checked_ = false;
    bom_matched_ = 0;
    failed_ = false;
  }

  /// Returns the bytes of the unfinished event held between reads.
  [[nodiscard]] std::size_t buffered_bytes() const noexcept {
    return pending_.size();
  }

  /// Returns whether the parser has failed (see `feed`).
  [[nodiscard]] bool failed() const noexcept { return failed_; }

private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  static constexpr const char* bom_bytes = "\xEF\xBB\xBF";

  /// The shortcut of plain `feed`: takes no block.
  struct no_shortcut {
    const char* operator()(const char*, const char*) const noexcept {
      return nullptr;
    }
  };

  /// Dispatches every block that ends inside `bytes` and returns the offset
  /// where the unfinished last block starts (`bytes.size()` if none). Blocks
  /// the shortcut takes at the start need no CR search; one CR search over
  /// the rest picks the LF-only loop for the common case.
  template <class Handler, class Shortcut>
  std::size_t scan_all(std::string_view bytes, std::int64_t ts,
                       Handler& on_event, Shortcut& try_block) {
    const char* first = bytes.data();
    const char* last = first + bytes.size();
    const char* pos = first;
    while (pos != last) {
      const char* end = try_block(pos, last);
      if (end == nullptr)
        break;
      pos = end;
    }
    if (pos == last)
      return bytes.size();
    auto* cr = static_cast<const char*>(std::memchr(pos, '\r', last - pos));
    const char* tail
      = cr == nullptr ? scan<false>(pos, last, last, ts, on_event, try_block)
                      : scan<true>(pos, last, cr, ts, on_event, try_block);
    return static_cast<std::size_t>(tail - first);
  }

  /// Scans [first, last), dispatching every block that ends inside it, and
  /// returns where the unfinished last block starts (`last` if none).
  /// `cr` is the first CR at or after `first` (`last` if none); with
  /// `HasCr == false` the range must contain no CR.
  template <bool HasCr, class Handler, class Shortcut>
  const char* scan(const char* first, const char* last, const char* cr,
                   std::int64_t ts, Handler& on_event, Shortcut& try_block) {
    const char* pos = first;
    const char* block = first;
    while (pos != last) {
      if (pos == block) {
        // A taken block holds no CR: `cr` stays ahead of it.
        if (const char* end = try_block(pos, last)) {
          pos = block = end;
          continue;
        }
      }
      const char* eol;
      if constexpr (HasCr) {
        if (cr < pos) {
          cr = static_cast<const char*>(std::memchr(pos, '\r', last - pos));
          if (cr == nullptr)
            cr = last;
        }
        auto* lf = static_cast<const char*>(std::memchr(pos, '\n', cr - pos));
        eol = lf != nullptr ? lf : cr;
        if (eol == last)
          break;
      } else {
        // The blank line after each event needs no search.
        eol = *pos == '\n' ? pos
                           : static_cast<const char*>(
                               std::memchr(pos, '\n', last - pos));
        if (eol == nullptr)
          break;
      }
      const char* next = eol + 1;
      if constexpr (HasCr) {
        if (*eol == '\r') {
          if (next == last)
            skip_lf_ = true;
          else if (*next == '\n')
            ++next;
        }
      }
      if (eol == pos) {
        if (dispatchable_) {
          event_.ts_ns = ts;
          on_event(std::as_const(event_));
        }
        clear_block();
        block = next;
      } else {
        on_line(pos, eol);
      }
      pos = next;
    }
    // Views into an unfinished block die with this read; `pending_` keeps its
    // raw bytes and is parsed again once the block is complete.
    if (block != last)
      clear_block();
    return block;
  }

  /// Handles one non-empty line [first, last) without its terminator.
  void on_line(const char* first, const char* last) {
    auto len = static_cast<std::size_t>(last - first);
    if (len >= 5 && std::memcmp(first, "data:", 5) == 0) [[likely]] {
      const char* value = first + 5;
      if (value != last && *value == ' ')
        ++value;
      add_data(std::string_view{value, static_cast<std::size_t>(last - value)});
      return;
    }
    on_other_line(std::string_view{first, len});
  }

  void add_data(std::string_view value) {
    dispatchable_ = true;
    if (event_.data_lines++ == 0) [[likely]]
      event_.data = value;
    else
      append_data_line(value);
  }

  void clear_block() noexcept {
    event_.data = {};
    event_.event = {};
    event_.id = {};
    event_.comment = {};
    event_.retry.reset();
    event_.data_lines = 0;
    dispatchable_ = false;
  }

  // Slow paths, out of line (sse_parser.cpp).
  void on_other_line(std::string_view line);
  void append_data_line(std::string_view value);
  std::string_view skip_bom(std::string_view bytes);
  std::size_t complete_pending(std::string_view bytes);
  bool keep_tail(std::string_view tail);

  sse_event event_;
  bool dispatchable_ = false;
  // The last read ended with a CR, so a leading LF of the next is its pair.
  bool skip_lf_ = false;
  bool bom_checked_ = false;
  std::uint8_t bom_matched_ = 0;
  bool failed_ = false;
  std::size_t max_event_bytes_;
  // Raw bytes of the unfinished block that straddles reads; starts at a
  // block boundary, never with an empty line.
  std::string pending_;
  // Joined multi-line `data`.
  std::string data_buf_;
};

} // namespace aiperf::sse
