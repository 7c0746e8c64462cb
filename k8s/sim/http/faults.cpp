#include "k8s/sim/http/faults.hpp"

#include "k8s/errors/errors.hpp"

namespace aiperf::k8s::sim::http {

namespace {

caf::error bad_fault(std::string message) {
  status st{"BadRequest", 400, message, {}};
  return make_status_error("POST /sim/v1/faults", std::move(st));
}

caf::expected<std::string> string_field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null())
    return std::string{};
  if (!it->is_string()) {
    std::string message = "fault field match.";
    message.append(key).append(" must be a string");
    return bad_fault(std::move(message));
  }
  return it->get<std::string>();
}

} // namespace

caf::expected<std::string> fault_table::add(const json& spec) {
  if (!spec.is_object())
    return bad_fault("a fault must be a JSON object like "
                     "{\"match\":{\"verb\":\"get\"},\"count\":1,\"code\":503}");
  fault f;
  if (auto m = spec.find("match"); m != spec.end() && !m->is_null()) {
    if (!m->is_object())
      return bad_fault("fault field match must be an object");
    static constexpr const char* known[]
        = {"verb", "resource", "subresource", "namespace", "user"};
    for (const auto& [key, value] : m->items()) {
      bool ok = false;
      for (const char* k : known)
        ok = ok || key == k;
      if (!ok)
        return bad_fault(
            "unknown fault field match." + key
            + "; known: verb, resource, subresource, namespace, user");
    }
    std::string* targets[]
        = {&f.match.verb, &f.match.resource, &f.match.subresource,
           &f.match.namespace_name, &f.match.user};
    for (std::size_t i = 0; i < 5; ++i) {
      auto v = string_field(*m, known[i]);
      if (!v)
        return v.error();
      *targets[i] = std::move(*v);
    }
  }
  if (auto c = spec.find("count"); c != spec.end()) {
    if (!c->is_number_integer() || c->get<std::int64_t>() == 0
        || c->get<std::int64_t>() < -1)
      return bad_fault(
          "fault field count must be a positive integer or -1 (until deleted)");
    f.count = c->get<std::int64_t>();
  }
  if (auto c = spec.find("code"); c != spec.end()) {
    if (c->is_string() && c->get<std::string>() == "reset") {
      f.reset = true;
    } else if (c->is_number_integer()) {
      auto code = c->get<std::int64_t>();
      if (code != 409 && code != 429 && code != 500 && code != 503
          && code != 504)
        return bad_fault("fault field code must be 409, 429, 500, 503, 504 or "
                         "\"reset\", got "
                         + std::to_string(code));
      f.code = static_cast<std::int32_t>(code);
    } else {
      return bad_fault(
          "fault field code must be 409, 429, 500, 503, 504 or \"reset\"");
    }
  }
  if (auto r = spec.find("retryAfterSeconds"); r != spec.end()) {
    if (!r->is_number_integer() || r->get<std::int64_t>() < 0
        || r->get<std::int64_t>() > 3600)
      return bad_fault(
          "fault field retryAfterSeconds must be an integer in [0, 3600]");
    f.retry_after_seconds = r->get<std::int32_t>();
  }
  if (auto d = spec.find("delayMs"); d != spec.end()) {
    if (!d->is_number_integer() || d->get<std::int64_t>() < 0
        || d->get<std::int64_t>() > 600'000)
      return bad_fault("fault field delayMs must be an integer in [0, 600000]");
    f.delay_ms = d->get<std::int64_t>();
  }
  if (f.code == 0 && !f.reset && f.delay_ms == 0)
    return bad_fault(
        "a fault needs \"code\" (409, 429, 500, 503, 504, \"reset\") or "
        "\"delayMs\"");
  std::lock_guard guard{mutex_};
  f.id = std::to_string(next_id_++);
  f.id.insert(f.id.begin(), 'f');
  faults_.push_back(f);
  return f.id;
}

bool fault_table::remove(const std::string& id) {
  std::lock_guard guard{mutex_};
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->id == id) {
      faults_.erase(it);
      return true;
    }
  }
  return false;
}

std::optional<fault> fault_table::take(std::string_view verb,
                                       std::string_view resource,
                                       std::string_view subresource,
                                       std::string_view namespace_name,
                                       std::string_view user) {
  std::lock_guard guard{mutex_};
  if (faults_.empty())
    return std::nullopt;
  auto matches = [](const std::string& want, std::string_view have) {
    return want.empty() || want == have;
  };
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    const auto& m = it->match;
    if (matches(m.verb, verb) && matches(m.resource, resource)
        && matches(m.subresource, subresource)
        && matches(m.namespace_name, namespace_name) && matches(m.user, user)) {
      fault hit = *it;
      if (it->count > 0 && --it->count == 0)
        faults_.erase(it);
      return hit;
    }
  }
  return std::nullopt;
}

void fault_table::clear() {
  std::lock_guard guard{mutex_};
  faults_.clear();
}

} // namespace aiperf::k8s::sim::http
