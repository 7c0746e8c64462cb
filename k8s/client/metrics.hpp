// Every request the client sends, counted per verb, resource and response
// code: the API traffic an operator causes, in Prometheus' text format
// (client-go counts the same as rest_client_requests_total).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

namespace aiperf::k8s::client {

/// The counter's name in the exposition.
inline constexpr std::string_view requests_metric
    = "aiperf_k8s_client_requests_total";

/// A Prometheus counter with labels verb, resource, code. Shared by the
/// client (which counts) and whoever serves /metrics (which reads), from
/// any thread.
class request_metrics {
public:
  /// One attempt: `verb` as Kubernetes spells it ("get", "watch",
  /// "delete"), `resource` the plural with "/subresource" when there is one,
  /// `code` the HTTP status ("200", "429") or "<error>" when no response
  /// arrived.
  void count(std::string_view verb, std::string_view resource,
             std::string_view code);

  /// The count for one label set (0 if never counted).
  [[nodiscard]] std::uint64_t value(std::string_view verb,
                                    std::string_view resource,
                                    std::string_view code) const;

  /// HELP, TYPE and one sample per label set, sorted.
  [[nodiscard]] std::string prometheus_text() const;

private:
  mutable std::mutex mtx_;
  std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t>
      counts_;
};

} // namespace aiperf::k8s::client
