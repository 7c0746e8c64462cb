#include "k8s/client/metrics.hpp"

namespace aiperf::k8s::client {

namespace {

void append_label_value(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
}

} // namespace

void request_metrics::count(std::string_view verb, std::string_view resource,
                            std::string_view code) {
  std::lock_guard guard{mtx_};
  ++counts_[{std::string{verb}, std::string{resource}, std::string{code}}];
}

std::uint64_t request_metrics::value(std::string_view verb,
                                     std::string_view resource,
                                     std::string_view code) const {
  std::lock_guard guard{mtx_};
  auto i = counts_.find(
      {std::string{verb}, std::string{resource}, std::string{code}});
  return i == counts_.end() ? 0 : i->second;
}

std::string request_metrics::prometheus_text() const {
  std::string out = "# HELP ";
  out += requests_metric;
  out += " Kubernetes API requests sent, by verb, resource and HTTP status "
         "code.\n# TYPE ";
  out += requests_metric;
  out += " counter\n";
  std::lock_guard guard{mtx_};
  for (const auto& [labels, n] : counts_) {
    out += requests_metric;
    out += "{verb=\"";
    append_label_value(out, std::get<0>(labels));
    out += "\",resource=\"";
    append_label_value(out, std::get<1>(labels));
    out += "\",code=\"";
    append_label_value(out, std::get<2>(labels));
    out += "\"} ";
    out += std::to_string(n);
    out += '\n';
  }
  return out;
}

} // namespace aiperf::k8s::client
