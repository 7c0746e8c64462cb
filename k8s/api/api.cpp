#include "k8s/api/api.hpp"

namespace aiperf::k8s {

const char* to_string(verb v) noexcept {
  switch (v) {
  case verb::get:
    return "get";
  case verb::list:
    return "list";
  case verb::watch:
    return "watch";
  case verb::create:
    return "create";
  case verb::update:
    return "update";
  case verb::patch:
    return "patch";
  case verb::remove:
    return "delete";
  case verb::remove_collection:
    return "deletecollection";
  }
  return "unknown";
}

user_info admin_user() {
  return user_info{
      "system:admin", "", {"system:masters", "system:authenticated"}, {}};
}

} // namespace aiperf::k8s
