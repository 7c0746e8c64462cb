#include "proto/codec.hpp"

namespace aiperf::proto {

namespace {

template <class T>
T load(const char* p) noexcept {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

template <class T>
void store(char* p, T x) noexcept {
  std::memcpy(p, &x, sizeof(T));
}

template <class T>
caf::expected<any_message> decode_as(const frame_view& frame) {
  auto x = decode_payload<T>(frame);
  if (!x)
    return x.error();
  return any_message{std::in_place_type<T>, std::move(*x)};
}

} // namespace

const char* to_string(msg_type x) noexcept {
  switch (x) {
    case msg_type::credit:
      return "credit";
    case msg_type::credit_batch:
      return "credit_batch";
    case msg_type::credit_return:
      return "credit_return";
    case msg_type::credit_return_batch:
      return "credit_return_batch";
    case msg_type::request_record_batch:
      return "request_record_batch";
    case msg_type::metric_record_batch:
      return "metric_record_batch";
    case msg_type::timing_config:
      return "timing_config";
    case msg_type::phase_stats:
      return "phase_stats";
    case msg_type::register_service:
      return "register_service";
    case msg_type::registered:
      return "registered";
    case msg_type::heartbeat:
      return "heartbeat";
    case msg_type::time_ping:
      return "time_ping";
    case msg_type::time_pong:
      return "time_pong";
    case msg_type::command:
      return "command";
    case msg_type::ack:
      return "ack";
    case msg_type::shutdown:
      return "shutdown";
    case msg_type::worker_connected:
      return "worker_connected";
  }
  return "unknown";
}

std::optional<msg_type> to_msg_type(std::uint16_t id) noexcept {
  auto t = static_cast<msg_type>(id);
  if (std::string_view{to_string(t)} == "unknown")
    return std::nullopt;
  return t;
}

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::truncated:
      return "truncated";
    case errc::bad_magic:
      return "bad_magic";
    case errc::version_mismatch:
      return "version_mismatch";
    case errc::unknown_type:
      return "unknown_type";
    case errc::type_mismatch:
      return "type_mismatch";
    case errc::bad_value:
      return "bad_value";
    case errc::trailing_bytes:
      return "trailing_bytes";
    case errc::too_large:
      return "too_large";
  }
  return "unknown";
}

namespace detail {

void write_header(std::string& out, msg_type type, std::uint16_t flags,
                  std::string_view sender, std::uint32_t payload_size) {
  out.resize(frame_header_size);
  auto* p = out.data();
  store<std::uint32_t>(p, wire_magic);
  store<std::uint16_t>(p + 4, wire_version);
  store<std::uint16_t>(p + 6, static_cast<std::uint16_t>(type));
  store<std::uint16_t>(p + 8, flags);
  store<std::uint16_t>(p + 10, static_cast<std::uint16_t>(sender.size()));
  store<std::uint32_t>(p + 12, payload_size);
}

} // namespace detail

caf::expected<frame_view> parse_frame(std::string_view bytes) {
  // Magic and version first: a newer peer may lay out the rest differently.
  if (bytes.size() < 6)
    return make_error(errc::truncated,
                       "frame of " + std::to_string(bytes.size())
                         + " bytes is shorter than the "
                         + std::to_string(frame_header_size)
                         + "-byte header");
  if (load<std::uint32_t>(bytes.data()) != wire_magic)
    return make_error(errc::bad_magic,
                       "frame does not start with the aiperf-node magic "
                       "\"AIPN\": the peer is not an aiperf-node bridge");
  auto version = load<std::uint16_t>(bytes.data() + 4);
  if (version != wire_version)
    return make_error(errc::version_mismatch,
                       "peer speaks wire version " + std::to_string(version)
                         + ", this build speaks "
                         + std::to_string(wire_version)
                         + ": run the same aiperf-node version on the "
                           "controller and every worker");
  if (bytes.size() < frame_header_size)
    return make_error(errc::truncated,
                       "frame of " + std::to_string(bytes.size())
                         + " bytes is shorter than the "
                         + std::to_string(frame_header_size)
                         + "-byte header");
  auto raw_type = load<std::uint16_t>(bytes.data() + 6);
  auto type = to_msg_type(raw_type);
  if (!type)
    return make_error(errc::unknown_type,
                       "unknown message type id " + std::to_string(raw_type));
  frame_view result;
  result.header.version = version;
  result.header.type = *type;
  result.header.flags = load<std::uint16_t>(bytes.data() + 8);
  std::size_t sender_size = load<std::uint16_t>(bytes.data() + 10);
  std::size_t payload_size = load<std::uint32_t>(bytes.data() + 12);
  if (sender_size > max_sender_size)
    return make_error(errc::too_large,
                       "sender length " + std::to_string(sender_size)
                         + " exceeds " + std::to_string(max_sender_size));
  if (payload_size > max_payload_size)
    return make_error(errc::too_large,
                       "payload length " + std::to_string(payload_size)
                         + " exceeds " + std::to_string(max_payload_size));
  auto expected = frame_header_size + sender_size + payload_size;
  if (bytes.size() < expected)
    return make_error(errc::truncated,
                       std::string{to_string(*type)} + " frame has "
                         + std::to_string(bytes.size())
                         + " bytes, its header announces "
                         + std::to_string(expected));
  if (bytes.size() > expected)
    return make_error(errc::trailing_bytes,
                       std::string{to_string(*type)} + " frame has "
                         + std::to_string(bytes.size() - expected)
                         + " bytes after the announced payload");
  result.header.sender = bytes.substr(frame_header_size, sender_size);
  result.header.payload_size = static_cast<std::uint32_t>(payload_size);
  result.payload = bytes.substr(frame_header_size + sender_size);
  return result;
}

caf::expected<any_message> decode_any(const frame_view& frame) {
  switch (frame.header.type) {
    case msg_type::credit:
      return decode_as<credit>(frame);
    case msg_type::credit_batch:
      return decode_as<credit_batch>(frame);
    case msg_type::credit_return:
      return decode_as<credit_return>(frame);
    case msg_type::credit_return_batch:
      return decode_as<credit_return_batch>(frame);
    case msg_type::request_record_batch:
      return decode_as<request_record_batch>(frame);
    case msg_type::metric_record_batch:
      return decode_as<metric_record_batch>(frame);
    case msg_type::timing_config:
      return decode_as<timing_config>(frame);
    case msg_type::phase_stats:
      return decode_as<phase_stats>(frame);
    case msg_type::register_service:
      return decode_as<register_service>(frame);
    case msg_type::registered:
      return decode_as<registered>(frame);
    case msg_type::heartbeat:
      return decode_as<heartbeat>(frame);
    case msg_type::time_ping:
      return decode_as<time_ping>(frame);
    case msg_type::time_pong:
      return decode_as<time_pong>(frame);
    case msg_type::command:
      return decode_as<command>(frame);
    case msg_type::ack:
      return decode_as<ack>(frame);
    case msg_type::shutdown:
      return decode_as<shutdown>(frame);
    case msg_type::worker_connected:
      return decode_as<worker_connected>(frame);
  }
  return make_error(errc::unknown_type, "unknown message type");
}

} // namespace aiperf::proto
