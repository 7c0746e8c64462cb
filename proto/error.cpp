#include "proto/error.hpp"

namespace aiperf {

std::string error_message(const caf::error& err) {
  if (!err)
    return "no error";
  const auto& ctx = err.context();
  if (!ctx.empty() && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  return to_string(err);
}

} // namespace aiperf
