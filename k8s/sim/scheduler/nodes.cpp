// The simulated cluster's Nodes: the default one, and a file of them.
#include "k8s/sim/scheduler/scheduler.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace aiperf::k8s::sim {

namespace {

using scheduler::errc;

const char* arch() {
#if defined(__aarch64__)
  return "arm64";
#else
  return "amd64";
#endif
}

json default_resources() {
  return json{{"cpu", "64"},
              {"ephemeral-storage", "1Ti"},
              {"memory", "256Gi"},
              {"pods", "110"}};
}

json ready_condition() {
  return json{{"type", "Ready"},
              {"status", "True"},
              {"reason", "KubeletReady"},
              {"message", "kubelet is posting ready status"}};
}

// Fills what a kubelet registering the Node would: labels, allocatable,
// the Ready condition, nodeInfo and the Hostname address.
void complete(json& node) {
  auto name = node["metadata"]["name"].get<std::string>();
  auto& labels = node["metadata"]["labels"];
  if (!labels.is_object())
    labels = json::object();
  if (!labels.contains("kubernetes.io/hostname"))
    labels["kubernetes.io/hostname"] = name;
  if (!labels.contains("kubernetes.io/os"))
    labels["kubernetes.io/os"] = "linux";
  if (!labels.contains("kubernetes.io/arch"))
    labels["kubernetes.io/arch"] = arch();
  if (!node.contains("spec") || !node["spec"].is_object())
    node["spec"] = json::object();
  auto& status = node["status"];
  if (!status.is_object())
    status = json::object();
  if (!status["capacity"].is_object())
    status["capacity"] = status["allocatable"].is_object()
                             ? status["allocatable"]
                             : default_resources();
  if (!status["allocatable"].is_object())
    status["allocatable"] = status["capacity"];
  if (!status["conditions"].is_array())
    status["conditions"] = json::array({ready_condition()});
  if (!status["nodeInfo"].is_object())
    status["nodeInfo"] = json{{"architecture", arch()},
                              {"operatingSystem", "linux"},
                              {"kubeletVersion", "v1.32.0"},
                              {"containerRuntimeVersion", "aiperf-sim://1"}};
  if (!status["addresses"].is_array())
    status["addresses"]
        = json::array({json{{"type", "Hostname"}, {"address", name}}});
}

json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
  case YAML::NodeType::Map: {
    json out = json::object();
    for (const auto& kv : node)
      out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return out;
  }
  case YAML::NodeType::Sequence: {
    json out = json::array();
    for (const auto& item : node)
      out.push_back(yaml_to_json(item));
    return out;
  }
  case YAML::NodeType::Scalar: {
    const auto& text = node.Scalar();
    if (node.Tag() == "!") // quoted: a string
      return text;
    if (text == "true" || text == "false")
      return text == "true";
    if (text == "null" || text == "~")
      return nullptr;
    char* end = nullptr;
    auto n = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && end != nullptr && *end == '\0')
      return n;
    return text;
  }
  default:
    return nullptr;
  }
}

bool dns1123_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253)
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alnum = std::islower(static_cast<unsigned char>(c))
                 || std::isdigit(static_cast<unsigned char>(c));
    if (!alnum && c != '-' && c != '.')
      return false;
    if ((i == 0 || i + 1 == s.size()) && !alnum)
      return false;
  }
  return true;
}

caf::error invalid(const std::string& path, const std::string& field,
                   const std::string& what) {
  return make_error(errc::invalid, path + ": " + field + ": " + what);
}

} // namespace

std::optional<double> parse_quantity(const json& value) {
  if (value.is_number())
    return value.get<double>();
  if (!value.is_string())
    return std::nullopt;
  auto text = value.get<std::string>();
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-'))
    ++i;
  auto digits_start = i;
  while (
      i < text.size()
      && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == digits_start)
    return std::nullopt;
  double number = 0;
  try {
    number = std::stod(text.substr(0, i));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  auto suffix = text.substr(i);
  static const std::pair<const char*, double> suffixes[]
      = {{"", 1},
         {"n", 1e-9},
         {"u", 1e-6},
         {"m", 1e-3},
         {"k", 1e3},
         {"M", 1e6},
         {"G", 1e9},
         {"T", 1e12},
         {"P", 1e15},
         {"E", 1e18},
         {"Ki", 1024.0},
         {"Mi", 1048576.0},
         {"Gi", 1073741824.0},
         {"Ti", 1099511627776.0},
         {"Pi", 1125899906842624.0},
         {"Ei", 1152921504606846976.0}};
  for (const auto& [s, factor] : suffixes)
    if (suffix == s)
      return number * factor;
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::size_t j = 1;
    if (suffix[j] == '+' || suffix[j] == '-')
      ++j;
    if (j < suffix.size()
        && std::all_of(
            suffix.begin() + static_cast<std::ptrdiff_t>(j), suffix.end(),
            [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return number * std::pow(10.0, std::stod(suffix.substr(1)));
  }
  return std::nullopt;
}

std::vector<json> default_nodes() {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "sim-node-0"}}},
               {"spec", json::object()},
               {"status",
                {{"capacity", default_resources()},
                 {"allocatable", default_resources()}}}};
  complete(node);
  return {node};
}

caf::expected<std::vector<json>> load_nodes(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    return make_error(errc::unreadable,
                      path
                          + ": cannot be read; pass --nodes a JSON or YAML "
                            "file of Node objects");
  std::stringstream buf;
  buf << in.rdbuf();
  auto text = buf.str();
  json doc;
  auto first = text.find_first_not_of(" \t\r\n");
  try {
    if (first != std::string::npos
        && (text[first] == '{' || text[first] == '['))
      doc = json::parse(text);
    else
      doc = yaml_to_json(YAML::Load(text));
  } catch (const std::exception& e) {
    return make_error(errc::unreadable,
                      path + ": not JSON or YAML: " + std::string{e.what()});
  }
  json items;
  std::string prefix;
  if (doc.is_array()) {
    items = doc;
  } else if (doc.is_object() && doc.contains("items")) {
    items = doc["items"];
    prefix = "items";
  } else if (doc.is_object() && doc.value("kind", "") == "Node") {
    items = json::array({doc});
  } else {
    return make_error(errc::invalid,
                      path
                          + ": expected a list of Node objects, a List with "
                            "items, or one Node");
  }
  if (!items.is_array() || items.empty())
    return invalid(path, prefix.empty() ? "(top level)" : prefix,
                   "no Node objects");
  std::vector<json> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto at = (prefix.empty() ? std::string{"["} : prefix + "[")
              + std::to_string(i) + "]";
    json node = items[i];
    if (!node.is_object())
      return invalid(path, at, "not an object");
    if (node.contains("kind") && node["kind"] != "Node")
      return invalid(path, at + ".kind",
                     "must be \"Node\", not " + node["kind"].dump());
    node["apiVersion"] = "v1";
    node["kind"] = "Node";
    if (!node.contains("metadata") || !node["metadata"].is_object()
        || !node["metadata"].contains("name")
        || !node["metadata"]["name"].is_string())
      return invalid(path, at + ".metadata.name", "required");
    auto name = node["metadata"]["name"].get<std::string>();
    if (!dns1123_subdomain(name))
      return invalid(path, at + ".metadata.name",
                     "\"" + name + "\" is not a lowercase RFC 1123 subdomain");
    if (!names.insert(name).second)
      return invalid(path, at + ".metadata.name",
                     "\"" + name + "\" appears twice");
    if (node.contains("status") && node["status"].is_object())
      for (const char* list : {"capacity", "allocatable"}) {
        if (!node["status"].contains(list))
          continue;
        const auto& resources = node["status"][list];
        if (!resources.is_object())
          return invalid(path, at + ".status." + list, "must be an object");
        for (const auto& [k, v] : resources.items()) {
          auto q = parse_quantity(v);
          if (!q || *q < 0)
            return invalid(path, at + ".status." + list + "." + k,
                           v.dump() + " is not a quantity");
        }
      }
    if (node.contains("spec") && node["spec"].is_object()
        && node["spec"].contains("taints")) {
      const auto& taints = node["spec"]["taints"];
      if (!taints.is_array())
        return invalid(path, at + ".spec.taints", "must be a list");
      for (std::size_t t = 0; t < taints.size(); ++t) {
        auto tat = at + ".spec.taints[" + std::to_string(t) + "]";
        if (!taints[t].is_object() || taints[t].value("key", "").empty())
          return invalid(path, tat + ".key", "required");
        auto effect = taints[t].value("effect", "");
        if (effect != "NoSchedule" && effect != "PreferNoSchedule"
            && effect != "NoExecute")
          return invalid(path, tat + ".effect",
                         "\"" + effect
                             + "\" is not one of NoSchedule, "
                               "PreferNoSchedule, NoExecute");
      }
    }
    complete(node);
    out.push_back(std::move(node));
  }
  return out;
}

} // namespace aiperf::k8s::sim

namespace aiperf::k8s::sim::scheduler {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::unreadable:
      return "unreadable";
    case errc::invalid:
      return "invalid";
  }
  return "unknown";
}

} // namespace aiperf::k8s::sim::scheduler
