// The one binary wire format between aiperf-node processes (the ZMQ bridge's
// frames). Hand-written fixed-width little-endian encoding driven by the
// same 0.17-style inspect() functions the in-process contracts already have,
// so a field added to a contract travels without codec changes. We do not
// use caf::binary_serializer: it packs doubles lossily (NaN does not
// survive), has no length checks we control, and is slower for our shapes.
//
// Frame layout (all integers little-endian):
//
//   offset size field
//   0      4    magic "AIPN"
//   4      2    version (wire_version; a mismatch is rejected before
//               anything else is read, so later versions may change the rest)
//   6      2    message type (msg_type)
//   8      2    flags (reserved, passed through)
//   10     2    sender length S (<= max_sender_size)
//   12     4    payload length P (<= max_payload_size)
//   16     S    sender: the service id of the sending service
//   16+S   P    payload
//
// Payload encoding: integers and enums fixed width (enum = underlying type),
// bool one byte (0/1), double/float raw IEEE bits, std::string and
// std::vector u32 count + elements, std::array its N elements, structs their
// inspect() fields in order. Decoding never reads past the frame and
// reports the first problem with the field position.
#pragma once

#include "proto/credits.hpp"
#include "proto/records.hpp"
#include "proto/timing.hpp"
#include "proto/error.hpp"

#include <caf/meta/annotation.hpp>
#include <caf/meta/type_name.hpp>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace aiperf::proto {

static_assert(std::endian::native == std::endian::little,
              "the wire codec copies integers in host order: little-endian only");

// -- control messages (control channel unless noted) --------------------------

/// A service announces itself to the controller (service -> controller).
struct register_service {
  std::string service_id;
  /// "worker", "record_processor", "worker_group_manager", ...
  std::string service_type;
  /// Pod or host name of the process, for diagnostics.
  std::string node;
  std::uint32_t pid = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, register_service& x) {
  return f(caf::meta::type_name("aiperf::proto::register_service"),
           x.service_id, x.service_type, x.node, x.pid);
}

/// The controller's answer to register_service.
struct registered {
  std::string service_id;
  bool accepted = true;
  /// Why the registration was refused (empty when accepted).
  std::string reason;
  /// Refused because the pod's place in the run is gone (it was declared
  /// lost, the run is under way): retrying cannot succeed, so the process
  /// ends with exit code 0 and a restarting container does not use up its
  /// Job's backoffLimit (a failed worker Job would fail the JobSet and the
  /// controller's results with it).
  bool final = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, registered& x) {
  return f(caf::meta::type_name("aiperf::proto::registered"), x.service_id,
           x.accepted, x.reason, x.final);
}

/// Liveness and lifecycle state of a service (service -> controller; the
/// controller's own heartbeat to its pods leaves the clock fields at their
/// defaults).
struct heartbeat {
  std::string service_id;
  /// Lifecycle state name ("initializing", "running", ...).
  std::string state;
  /// Sender's epoch clock when sent.
  std::int64_t sent_wall_ns = 0;
  /// A pod's current clock offset estimate (clock_offset_tracker; the
  /// record contract: controller_time = worker_time - clock_offset_ns).
  std::int64_t clock_offset_ns = 0;
  /// One-way credit samples behind the estimate (0 = none yet).
  std::uint32_t clock_one_way_samples = 0;
  /// Smallest ping round trip seen; -1 = none yet.
  std::int64_t clock_min_rtt_ns = -1;
  /// The pod runs on the controller's host: the offset is pinned to 0.
  bool clock_local = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, heartbeat& x) {
  return f(caf::meta::type_name("aiperf::proto::heartbeat"), x.service_id,
           x.state, x.sent_wall_ns, x.clock_offset_ns,
           x.clock_one_way_samples, x.clock_min_rtt_ns, x.clock_local);
}

/// Clock probe on the credit channel (worker -> controller). The controller
/// answers with time_pong at once, so the worker measures the round trip on
/// its own clock.
struct time_ping {
  std::uint64_t seq = 0;
  /// Worker's epoch clock when sent.
  std::int64_t send_wall_ns = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, time_ping& x) {
  return f(caf::meta::type_name("aiperf::proto::time_ping"), x.seq,
           x.send_wall_ns);
}

/// Echo of a time_ping (controller -> worker) with the controller's stamps.
struct time_pong {
  std::uint64_t seq = 0;
  /// The ping's send_wall_ns, echoed verbatim.
  std::int64_t ping_send_wall_ns = 0;
  /// Controller's epoch clock when the ping arrived / the pong left.
  std::int64_t recv_wall_ns = 0;
  std::int64_t send_wall_ns = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, time_pong& x) {
  return f(caf::meta::type_name("aiperf::proto::time_pong"), x.seq,
           x.ping_send_wall_ns, x.recv_wall_ns, x.send_wall_ns);
}

/// A command for a service (controller -> service); answered with ack.
struct command {
  std::uint64_t command_id = 0;
  /// Command name ("configure", "start_profiling", "cancel", ...).
  std::string name;
  /// Command arguments; JSON by convention (not a hot path).
  std::string body;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, command& x) {
  return f(caf::meta::type_name("aiperf::proto::command"), x.command_id,
           x.name, x.body);
}

/// Outcome of a command (service -> controller).
struct ack {
  std::uint64_t command_id = 0;
  bool ok = true;
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ack& x) {
  return f(caf::meta::type_name("aiperf::proto::ack"), x.command_id, x.ok,
           x.error);
}

/// Tells every service to stop (controller broadcast).
struct shutdown {
  std::string reason;
  /// Exit code the process should report.
  std::int32_t exit_code = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shutdown& x) {
  return f(caf::meta::type_name("aiperf::proto::shutdown"), x.reason,
           x.exit_code);
}

/// A worker's return path is connected (credit-return channel). Also the
/// readiness probe frame: idempotent, so the controller may see it more
/// than once.
struct worker_connected {
  std::string worker_id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_connected& x) {
  return f(caf::meta::type_name("aiperf::proto::worker_connected"),
           x.worker_id);
}

// -- message type ids ----------------------------------------------------------

/// Wire ids of the message types. Part of the wire format: never renumber
/// or reuse a value; bump wire_version when a payload layout changes.
enum class msg_type : std::uint16_t {
  credit = 1,
  credit_batch = 2,
  credit_return = 3,
  credit_return_batch = 4,
  request_record_batch = 5,
  metric_record_batch = 6,
  timing_config = 7,
  phase_stats = 8,
  register_service = 16,
  registered = 17,
  heartbeat = 18,
  time_ping = 19,
  time_pong = 20,
  command = 21,
  ack = 22,
  shutdown = 23,
  worker_connected = 24,
};

/// Returns the snake_case name of `x`, or "unknown".
[[nodiscard]] const char* to_string(msg_type x) noexcept;

/// Returns the msg_type with wire id `id`, or nullopt for an unknown id.
[[nodiscard]] std::optional<msg_type> to_msg_type(std::uint16_t id) noexcept;

/// Maps a C++ message type to its wire id.
template <class T>
struct wire_type;

#define AIPERF_PROTO_WIRE_TYPE(cpp_type, id)                                   \
  template <>                                                                  \
  struct wire_type<cpp_type> {                                                 \
    static constexpr msg_type value = msg_type::id;                            \
  };
AIPERF_PROTO_WIRE_TYPE(credit, credit)
AIPERF_PROTO_WIRE_TYPE(credit_batch, credit_batch)
AIPERF_PROTO_WIRE_TYPE(credit_return, credit_return)
AIPERF_PROTO_WIRE_TYPE(credit_return_batch, credit_return_batch)
AIPERF_PROTO_WIRE_TYPE(request_record_batch, request_record_batch)
AIPERF_PROTO_WIRE_TYPE(metric_record_batch, metric_record_batch)
AIPERF_PROTO_WIRE_TYPE(timing_config, timing_config)
AIPERF_PROTO_WIRE_TYPE(phase_stats, phase_stats)
AIPERF_PROTO_WIRE_TYPE(register_service, register_service)
AIPERF_PROTO_WIRE_TYPE(registered, registered)
AIPERF_PROTO_WIRE_TYPE(heartbeat, heartbeat)
AIPERF_PROTO_WIRE_TYPE(time_ping, time_ping)
AIPERF_PROTO_WIRE_TYPE(time_pong, time_pong)
AIPERF_PROTO_WIRE_TYPE(command, command)
AIPERF_PROTO_WIRE_TYPE(ack, ack)
AIPERF_PROTO_WIRE_TYPE(shutdown, shutdown)
AIPERF_PROTO_WIRE_TYPE(worker_connected, worker_connected)
#undef AIPERF_PROTO_WIRE_TYPE

template <class T>
inline constexpr msg_type msg_type_v = wire_type<T>::value;

/// Any decoded message; alternatives in msg_type order.
using any_message
  = std::variant<credit, credit_batch, credit_return, credit_return_batch,
                 request_record_batch, metric_record_batch, timing_config,
                 phase_stats, register_service, registered, heartbeat,
                 time_ping, time_pong, command, ack, shutdown,
                 worker_connected>;

// -- frame constants -----------------------------------------------------------

/// "AIPN" as the first four bytes of a frame.
inline constexpr std::uint32_t wire_magic = 0x4E504941;
/// Bump when any header or payload layout changes.
inline constexpr std::uint16_t wire_version = 4;
inline constexpr std::size_t frame_header_size = 16;
inline constexpr std::size_t max_sender_size = 255;
/// Far above any batch we send; guards against a corrupt length field.
inline constexpr std::size_t max_payload_size = std::size_t{256} << 20;

// -- errors --------------------------------------------------------------------

enum class errc : std::uint8_t {
  truncated = 1,    // fewer bytes than the header or a field needs
  bad_magic,        // not an aiperf-node frame
  version_mismatch, // peer runs another wire version
  unknown_type,     // message type id this build does not know
  type_mismatch,    // decode_payload<T> on a frame of another type
  bad_value,        // a field holds an impossible value (bool 7, enum 200)
  trailing_bytes,   // bytes left after the last field
  too_large,        // sender or payload above its limit
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::proto

// Codec errors: a proto::errc and a message naming the field or header part
// and, where there is one, the fix.
AIPERF_ERROR_ENUM(aiperf::proto::errc, "codec")

namespace aiperf::proto {

// -- frames --------------------------------------------------------------------

/// A parsed frame header; `sender` points into the frame's bytes.
struct frame_header {
  std::uint16_t version = wire_version;
  msg_type type = msg_type::credit;
  std::uint16_t flags = 0;
  std::string_view sender;
  std::uint32_t payload_size = 0;
};

/// A frame whose header is valid; views into the caller's bytes.
struct frame_view {
  frame_header header;
  std::string_view payload;
};

/// Validates the header of `bytes` (magic, version, type, lengths; the
/// total size must match exactly). Does not decode the payload.
[[nodiscard]] caf::expected<frame_view> parse_frame(std::string_view bytes);

namespace detail {

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

/// Largest valid value of the enums that travel; others accept any value.
template <class E>
constexpr std::optional<std::uint64_t> enum_max() {
  if constexpr (std::is_same_v<E, phase> || std::is_same_v<E, benchmark_phase>)
    return 1;
  else if constexpr (std::is_same_v<E, credit_outcome>)
    return 2;
  else if constexpr (std::is_same_v<E, timing_mode>)
    return 3;
  else if constexpr (std::is_same_v<E, arrival_pattern>)
    return 2;
  else if constexpr (std::is_same_v<E, record_metric>)
    return record_metric_count - 1;
  else
    return std::nullopt;
}

/// Inspector that appends the wire encoding of inspected fields to a string.
class wire_writer {
public:
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;

  explicit wire_writer(std::string& out) noexcept : out_(out) {}

  template <class... Ts>
  void operator()(Ts&&... xs) {
    (put(xs), ...);
  }

  template <class T>
  void put(const T& x) {
    if constexpr (std::is_base_of_v<caf::meta::annotation, T>) {
      // annotations carry no data
    } else if constexpr (std::is_same_v<T, bool>) {
      out_.push_back(x ? '\1' : '\0');
    } else if constexpr (std::is_enum_v<T>) {
      put(static_cast<std::underlying_type_t<T>>(x));
    } else if constexpr (std::is_arithmetic_v<T>) {
      char buf[sizeof(T)];
      std::memcpy(buf, &x, sizeof(T));
      out_.append(buf, sizeof(T));
    } else if constexpr (std::is_same_v<T, std::string>) {
      put(static_cast<std::uint32_t>(x.size()));
      out_.append(x);
    } else if constexpr (is_vector<T>::value) {
      put(static_cast<std::uint32_t>(x.size()));
      if constexpr (std::is_arithmetic_v<typename T::value_type>
                    && !std::is_same_v<typename T::value_type, bool>) {
        out_.append(reinterpret_cast<const char*>(x.data()),
                    x.size() * sizeof(typename T::value_type));
      } else {
        for (const auto& e : x)
          put(e);
      }
    } else if constexpr (is_std_array<T>::value) {
      for (const auto& e : x)
        put(e);
    } else {
      // inspect() takes a mutable reference; a writer never modifies.
      inspect(*this, const_cast<T&>(x));
    }
  }

private:
  std::string& out_;
};

/// Inspector that decodes fields from a byte range. Stops at the first
/// error (later fields are left default) and remembers it.
class wire_reader {
public:
  using result_type = void;
  static constexpr bool reads_state = false;
  static constexpr bool writes_state = true;

  explicit wire_reader(std::string_view in) noexcept : in_(in) {}

  template <class... Ts>
  void operator()(Ts&&... xs) {
    (get(xs), ...);
  }

  [[nodiscard]] bool failed() const noexcept { return static_cast<bool>(err_); }
  [[nodiscard]] std::size_t remaining() const noexcept {
    return in_.size() - pos_;
  }
  [[nodiscard]] std::size_t position() const noexcept { return pos_; }
  [[nodiscard]] caf::error& error() noexcept { return err_; }

  void fail(errc code, std::string what) {
    if (!err_)
      err_ = make_error(code, std::move(what) + " at payload byte "
                                + std::to_string(pos_));
  }

  template <class T>
  void get(T& x) {
    if (err_)
      return;
    if constexpr (std::is_base_of_v<caf::meta::annotation, T>) {
      // annotations carry no data
    } else if constexpr (std::is_same_v<T, bool>) {
      std::uint8_t b = 0;
      get(b);
      if (err_)
        return;
      if (b > 1)
        return fail(errc::bad_value,
                    "bool field holds " + std::to_string(b));
      x = b == 1;
    } else if constexpr (std::is_enum_v<T>) {
      std::underlying_type_t<T> raw{};
      get(raw);
      if (err_)
        return;
      if constexpr (enum_max<T>().has_value()) {
        if (static_cast<std::uint64_t>(raw) > *enum_max<T>())
          return fail(errc::bad_value,
                      "enum field holds out-of-range value "
                        + std::to_string(static_cast<std::uint64_t>(raw)));
      }
      x = static_cast<T>(raw);
    } else if constexpr (std::is_arithmetic_v<T>) {
      if (remaining() < sizeof(T))
        return fail(errc::truncated,
                    "need " + std::to_string(sizeof(T)) + " bytes for a field");
      std::memcpy(&x, in_.data() + pos_, sizeof(T));
      pos_ += sizeof(T);
    } else if constexpr (std::is_same_v<T, std::string>) {
      std::uint32_t n = 0;
      get(n);
      if (err_)
        return;
      if (remaining() < n)
        return fail(errc::truncated,
                    "string of " + std::to_string(n) + " bytes");
      x.assign(in_.data() + pos_, n);
      pos_ += n;
    } else if constexpr (is_vector<T>::value) {
      using value_type = typename T::value_type;
      std::uint32_t n = 0;
      get(n);
      if (err_)
        return;
      // Every element takes at least one byte: a count above the bytes left
      // is corrupt, and checking first keeps a bad count from allocating.
      if (remaining() < n)
        return fail(errc::truncated,
                    "list of " + std::to_string(n) + " elements");
      if constexpr (std::is_arithmetic_v<value_type>
                    && !std::is_same_v<value_type, bool>) {
        if (remaining() / sizeof(value_type) < n)
          return fail(errc::truncated,
                      "list of " + std::to_string(n) + " numbers");
        x.resize(n);
        std::memcpy(x.data(), in_.data() + pos_, n * sizeof(value_type));
        pos_ += n * sizeof(value_type);
      } else {
        x.clear();
        x.reserve(n);
        for (std::uint32_t i = 0; i < n && !err_; ++i)
          get(x.emplace_back());
      }
    } else if constexpr (is_std_array<T>::value) {
      for (auto& e : x)
        get(e);
    } else {
      inspect(*this, x);
    }
  }

private:
  std::string_view in_;
  std::size_t pos_ = 0;
  caf::error err_;
};

void write_header(std::string& out, msg_type type, std::uint16_t flags,
                  std::string_view sender, std::uint32_t payload_size);

} // namespace detail

/// Replaces the contents of `out` with the frame of `msg` sent by service
/// `sender`. Reuse `out` across calls to avoid allocations. Returns an
/// error (and leaves `out` empty) when the sender id or payload is too long.
template <class T>
[[nodiscard]] caf::expected<void>
encode_frame_into(std::string& out, const T& msg, std::string_view sender,
                  std::uint16_t flags = 0) {
  out.clear();
  if (sender.size() > max_sender_size)
    return make_error(errc::too_large,
                       "sender id has " + std::to_string(sender.size())
                         + " bytes, the limit is "
                         + std::to_string(max_sender_size)
                         + ": use a shorter service id");
  out.resize(frame_header_size);
  out.append(sender);
  auto payload_at = out.size();
  detail::wire_writer w{out};
  w.put(msg);
  auto payload_size = out.size() - payload_at;
  if (payload_size > max_payload_size) {
    out.clear();
    return make_error(errc::too_large,
                       std::string{"payload of "} + to_string(msg_type_v<T>)
                         + " has " + std::to_string(payload_size)
                         + " bytes, the limit is "
                         + std::to_string(max_payload_size)
                         + ": send smaller batches");
  }
  std::string header;
  detail::write_header(header, msg_type_v<T>, flags, sender,
                       static_cast<std::uint32_t>(payload_size));
  out.replace(0, frame_header_size, header);
  return caf::unit;
}

/// Returns the frame of `msg` sent by service `sender`.
template <class T>
[[nodiscard]] caf::expected<std::string>
encode_frame(const T& msg, std::string_view sender, std::uint16_t flags = 0) {
  std::string out;
  if (auto done = encode_frame_into(out, msg, sender, flags); !done)
    return std::move(done.error());
  return out;
}

/// Decodes the payload of `frame` as a T; the frame's type must be T's.
template <class T>
[[nodiscard]] caf::expected<T> decode_payload(const frame_view& frame) {
  if (frame.header.type != msg_type_v<T>)
    return make_error(errc::type_mismatch,
                       std::string{"frame holds "} + to_string(frame.header.type)
                         + ", expected " + to_string(msg_type_v<T>));
  T result{};
  detail::wire_reader r{frame.payload};
  r.get(result);
  if (r.failed()) {
    auto& err = r.error();
    return make_error(error_code(err, errc::bad_value),
                      std::string{to_string(msg_type_v<T>)} + ": " + error_message(err));
  }
  if (r.remaining() != 0)
    return make_error(errc::trailing_bytes,
                       std::string{to_string(msg_type_v<T>)} + ": "
                         + std::to_string(r.remaining())
                         + " bytes after the last field");
  return result;
}

/// Parses and decodes a whole frame as a T.
template <class T>
[[nodiscard]] caf::expected<T> decode_frame(std::string_view bytes) {
  auto frame = parse_frame(bytes);
  if (!frame)
    return frame.error();
  return decode_payload<T>(*frame);
}

/// Decodes the payload of `frame` as whatever type its header names.
[[nodiscard]] caf::expected<any_message> decode_any(const frame_view& frame);

} // namespace aiperf::proto
