#include "tools/commands/error_categories.hpp"

#include "actors/benchmark/dataset/dataset.hpp"
#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/metrics/metric_options.hpp"
#include "actors/benchmark/remote/layout.hpp"
#include "actors/benchmark/timing/errc.hpp"
#include "actors/operator/harvest.hpp"
#include "config/profile/profile_config.hpp"
#include "k8s/client/config.hpp"
#include "k8s/errors/errors.hpp"
#include "k8s/manifests/manifests.hpp"
#include "k8s/sim/auth/tokens.hpp"
#include "k8s/sim/dns/dns.hpp"
#include "k8s/sim/sandbox/errors.hpp"
#include "k8s/sim/scheduler/scheduler.hpp"
#include "proto/benchmark_errors.hpp"
#include "proto/codec.hpp"
#include "runtime/http/errors.hpp"
#include "runtime/http_server/http_server.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/system/errc.hpp"
#include "runtime/time/skewed_clock.hpp"
#include "runtime/tokenizer/hf_tokenizer.hpp"
#include "runtime/zmq_bridge/settings.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

namespace aiperf::commands {

void add_error_categories(caf::actor_system_config& cfg) {
  add_error_category<proto::errc>(cfg);
  add_error_category<benchmark::errc>(cfg);
  add_error_category<config::errc>(cfg);
  add_error_category<op::errc>(cfg);
  add_error_category<io::errc>(cfg);
  add_error_category<http::errc>(cfg);
  add_error_category<http_server::errc>(cfg);
  add_error_category<zmq_bridge::errc>(cfg);
  add_error_category<system::errc>(cfg);
  add_error_category<time::errc>(cfg);
  add_error_category<tokenizer::errc>(cfg);
  add_error_category<dataset::errc>(cfg);
  add_error_category<timing::errc>(cfg);
  add_error_category<metrics::errc>(cfg);
  add_error_category<exporters::errc>(cfg);
  add_error_category<remote::errc>(cfg);
  add_error_category<mock_server::errc>(cfg);
  add_error_category<k8s::errc>(cfg);
  add_error_category<k8s::client::errc>(cfg);
  add_error_category<k8s::manifests::errc>(cfg);
  add_error_category<k8s::sim::auth::errc>(cfg);
  add_error_category<k8s::sim::sandbox::errc>(cfg);
  add_error_category<k8s::sim::dns::errc>(cfg);
  add_error_category<k8s::sim::scheduler::errc>(cfg);
}

} // namespace aiperf::commands
