#include "runtime/system/env.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace aiperf::system {

namespace {

constexpr std::string_view secret_prefix = "AIPERF_INJECTED_";

struct port_field {
  std::string_view name;
  std::string_view variable;
  std::uint16_t pod_ports::*member;
};

constexpr std::array<port_field, 6> port_fields{{
    {"api", "AIPERF_K8S_PORT_API", &pod_ports::api},
    {"health", "AIPERF_K8S_PORT_HEALTH", &pod_ports::health},
    {"control", "AIPERF_K8S_PORT_CONTROL", &pod_ports::control},
    {"credit", "AIPERF_K8S_PORT_CREDIT", &pod_ports::credit},
    {"credit_return", "AIPERF_K8S_PORT_CREDIT_RETURN",
     &pod_ports::credit_return},
    {"records", "AIPERF_K8S_PORT_RECORDS", &pod_ports::records},
}};

void add_error(std::vector<env_error>& errors, std::string_view variable,
               std::string message) {
  errors.push_back(env_error{std::string{variable}, std::move(message)});
}

// The bad_env error of `errors` (not empty): their messages joined with
// "; ", and the list itself.
caf::error env_errors(std::vector<env_error> errors) {
  std::string msg;
  for (const auto& e : errors) {
    if (!msg.empty())
      msg.append("; ");
    msg.append(e.message);
  }
  return make_error(errc::bad_env, std::move(msg), std::move(errors));
}

// Quotes a (non-secret) value for an error message.
std::string quoted(std::string_view v) {
  std::string out = "'";
  out.append(v.substr(0, 64));
  if (v.size() > 64)
    out.append("...");
  out.push_back('\'');
  return out;
}

bool all_digits(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

template <class T> std::optional<T> parse_unsigned(std::string_view s) {
  if (!all_digits(s))
    return std::nullopt;
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

bool valid_job_id(std::string_view s) {
  if (s.empty() || s.size() > 253 || s == "." || s == "..")
    return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok)
      return false;
  }
  return true;
}

bool valid_host(std::string_view s) {
  if (s.empty() || s.size() > 253)
    return false;
  for (char c : s)
    if (c <= ' ' || c == '/' || c == '\x7f')
      return false;
  return true;
}

bool valid_secret_name(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

// Parses a port; on error adds one env_error naming `variable`.
std::optional<std::uint16_t> port_value(std::string_view variable,
                                        std::string_view text,
                                        std::vector<env_error>& errors) {
  if (auto v = parse_unsigned<std::uint32_t>(text); v && *v <= 65535)
    return static_cast<std::uint16_t>(*v);
  add_error(errors, variable,
            std::string{variable} + "=" + quoted(text)
                + " is not a port: set it to an integer in 0..65535 (0 = "
                  "pick a free port) or unset it for the default");
  return std::nullopt;
}

} // namespace

env_lookup process_env() {
  return [](std::string_view name) -> std::optional<std::string> {
    std::string key{name};
    if (const char* v = std::getenv(key.c_str()))
      return std::string{v};
    return std::nullopt;
  };
}

env_lookup map_env(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](
             std::string_view name) -> std::optional<std::string> {
    if (auto i = vars.find(name); i != vars.end())
      return i->second;
    return std::nullopt;
  };
}

std::optional<std::string> port_variable(std::string_view field) {
  for (const auto& f : port_fields)
    if (f.name == field)
      return std::string{f.variable};
  return std::nullopt;
}

caf::expected<std::uint16_t> parse_port(std::string_view variable,
                                        std::string_view text) {
  std::vector<env_error> errors;
  if (auto port = port_value(variable, text, errors))
    return *port;
  return env_errors(std::move(errors));
}

caf::expected<pod_env> read_pod_env(const env_lookup& env) {
  std::vector<env_error> errors;
  pod_env out;

  for (const auto& f : port_fields) {
    auto text = env(f.variable);
    if (!text)
      continue;
    if (auto port = port_value(f.variable, *text, errors))
      out.ports.*f.member = *port;
  }
  // Two listeners on one port fail at bind time with a less helpful message.
  for (size_t i = 0; i < port_fields.size(); ++i)
    for (size_t j = i + 1; j < port_fields.size(); ++j) {
      auto a = out.ports.*port_fields[i].member;
      auto b = out.ports.*port_fields[j].member;
      if (a != 0 && a == b)
        add_error(errors, port_fields[j].variable,
                  std::string{port_fields[j].variable} + " and "
                      + std::string{port_fields[i].variable} + " are both "
                      + std::to_string(a)
                      + ": give each port its own number (or 0 for a free "
                        "one)");
    }

  if (auto host = env("AIPERF_K8S_ZMQ_CONTROLLER_HOST")) {
    if (valid_host(*host))
      out.controller_host = *host;
    else
      add_error(errors, "AIPERF_K8S_ZMQ_CONTROLLER_HOST",
                "AIPERF_K8S_ZMQ_CONTROLLER_HOST=" + quoted(*host)
                    + " is not a host: set it to a DNS name or IP address "
                      "without scheme, path or spaces (e.g. "
                      "job-controller-0-0.job.ns.svc.cluster.local)");
  }

  if (auto index = env("AIPERF_POD_INDEX")) {
    if (auto v = parse_unsigned<std::uint32_t>(*index))
      out.pod_index = *v;
    else
      add_error(errors, "AIPERF_POD_INDEX",
                "AIPERF_POD_INDEX=" + quoted(*index)
                    + " is not a pod index: set it to a non-negative integer "
                      "(the JobSet completion index)");
  }

  if (auto id = env("AIPERF_JOB_ID")) {
    if (valid_job_id(*id))
      out.job_id = *id;
    else
      add_error(
          errors, "AIPERF_JOB_ID",
          "AIPERF_JOB_ID=" + quoted(*id)
              + " is not a job id: use 1-253 characters of [A-Za-z0-9._-] "
                "(it names files and labels)");
  }

  if (auto pct = env("AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT")) {
    double v = 0;
    const char* first = pct->data();
    const char* last = first + pct->size();
    auto [end, ec] = std::from_chars(first, last, v);
    if (pct->empty() || ec != std::errc{} || end != last || !std::isfinite(v)
        || v < 0 || v > 100)
      add_error(errors, "AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT",
                "AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT=" + quoted(*pct)
                    + " is not a percentage: set it to a number in 0..100 (0 = "
                      "abort on the first failed pod)");
    else
      out.pod_failure_abort_threshold_percent = v;
  }

  if (!errors.empty())
    return env_errors(std::move(errors));
  return out;
}

std::string secret_variable(std::string_view name) {
  std::string out{secret_prefix};
  out.append(name);
  return out;
}

caf::expected<injected_secrets>
read_secrets(std::span<const std::string> declared, const env_lookup& env) {
  std::vector<env_error> errors;
  injected_secrets out;
  for (const auto& name : declared) {
    auto variable = secret_variable(name);
    if (!valid_secret_name(name)) {
      add_error(errors, variable,
                "declared secret " + quoted(name)
                    + " is not a valid name: use [A-Z0-9_]+ (it becomes the "
                      "variable AIPERF_INJECTED_<NAME>)");
      continue;
    }
    auto value = env(variable);
    if (!value) {
      add_error(errors, variable,
                variable + " is not set: the run file declares secret " + name
                    + "; inject it into the pod (e.g. env valueFrom "
                      "secretKeyRef) or remove it from the run's secrets");
      continue;
    }
    if (value->empty()) {
      add_error(errors, variable,
                variable + " is set but empty: the run file declares secret "
                    + name + "; check the Kubernetes Secret it comes from");
      continue;
    }
    out.values[name] = std::move(*value);
  }
  if (!errors.empty())
    return env_errors(std::move(errors));
  return out;
}

} // namespace aiperf::system
