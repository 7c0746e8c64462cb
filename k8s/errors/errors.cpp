#include "k8s/errors/errors.hpp"

namespace aiperf::k8s {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::not_found:
      return "not_found";
    case errc::already_exists:
      return "already_exists";
    case errc::conflict:
      return "conflict";
    case errc::invalid:
      return "invalid";
    case errc::forbidden:
      return "forbidden";
    case errc::unsupported_media_type:
      return "unsupported_media_type";
    case errc::gone:
      return "gone";
    case errc::too_many_requests:
      return "too_many_requests";
    case errc::unavailable:
      return "unavailable";
    case errc::timeout:
      return "timeout";
    case errc::transport:
      return "transport";
  }
  return "unknown";
}

errc errc_of(std::int32_t http_code, std::string_view reason) noexcept {
  switch (http_code) {
    case 400:
    case 422:
      return errc::invalid;
    case 401:
    case 403:
      return errc::forbidden;
    case 404:
      return errc::not_found;
    case 409:
      return reason == "AlreadyExists" ? errc::already_exists : errc::conflict;
    case 410:
      return errc::gone;
    case 415:
      return errc::unsupported_media_type;
    case 429:
      return errc::too_many_requests;
    case 504:
      return errc::timeout;
    case 0:
      return errc::transport;
    default:
      return http_code >= 500 ? errc::unavailable : errc::invalid;
  }
}

caf::error make_status_error(std::string_view what, status st) {
  auto code = errc_of(st.code, st.reason);
  std::string message{what};
  if (!st.message.empty()) {
    message += ": ";
    message += st.message;
  }
  return make_error(code, std::move(message), std::move(st));
}

} // namespace aiperf::k8s
