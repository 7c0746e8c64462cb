// clang-format off
#include <utility> // first: Boost 1.74 needs std::exchange (g++ 12)
// clang-format on

#include "tools/commands/sim_cluster_command.hpp"

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"
#include "k8s/object/wire.hpp"
#include "k8s/sim/apps/apps.hpp"
#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/dns/dns.hpp"
#include "k8s/sim/endpoints/endpoints.hpp"
#include "k8s/sim/http/front.hpp"
#include "k8s/sim/http/tls.hpp"
#include "k8s/sim/jobs/jobs.hpp"
#include "k8s/sim/kubelet/kubelet.hpp"
#include "k8s/sim/sandbox/sandbox.hpp"
#include "k8s/sim/scheduler/scheduler.hpp"
#include "k8s/sim/store/store.hpp"
#include "runtime/http_server/http_server.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"
#include "tools/commands/error_categories.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <CLI/CLI.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace aiperf::sim_cluster_command {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

struct options {
  std::uint16_t port = 0;
  bool tls = false;
  std::string kubeconfig;
  std::string audit_log;
  std::string state_dir;
  // --workloads
  bool workloads = false;
  std::string nodes_file;
  std::string aiperf_node;
  std::vector<std::string> image_map;
  std::string pod_cidr = "10.244.0.0/16";
  double backoff_scale = 1.0;
  std::int64_t token_expiration_seconds = 3607;
};

std::string base64(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3), '\0');
  auto n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                           reinterpret_cast<const unsigned char*>(data.data()),
                           static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string random_token() {
  unsigned char bytes[24];
  RAND_bytes(bytes, sizeof bytes);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

/// The kubeconfig of a running simulator (see the header comment).
std::string kubeconfig_text(const std::string& server,
                            const std::string& ca_pem,
                            const std::string& token) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "v1";
  y << YAML::Key << "kind" << YAML::Value << "Config";
  y << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq
    << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "sim";
  y << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "server" << YAML::Value << server;
  if (!ca_pem.empty())
    y << YAML::Key << "certificate-authority-data" << YAML::Value
      << base64(ca_pem);
  y << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  y << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "admin";
  y << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  if (!token.empty())
    y << YAML::Key << "token" << YAML::Value << token;
  y << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  y << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq
    << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "sim";
  y << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "cluster" << YAML::Value << "sim";
  y << YAML::Key << "user" << YAML::Value << "admin";
  y << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  y << YAML::Key << "current-context" << YAML::Value << "sim";
  y << YAML::Key << "preferences" << YAML::Value << YAML::BeginMap
    << YAML::EndMap;
  y << YAML::EndMap;
  return std::string{y.c_str()} + "\n";
}

/// Waits until the store answers for the built-in namespace `default`: the
/// line on stdout promises that it exists.
caf::expected<void> await_builtins(caf::actor_system& sys,
                                   const k8s::sim::store_actor& store) {
  caf::scoped_actor self{sys};
  caf::error last;
  for (int attempt = 0; attempt < 100; ++attempt) {
    k8s::request req;
    req.verb = k8s::verb::get;
    req.ref = {"", "v1", "namespaces", "", "default", ""};
    bool ok = false;
    self->request(store, std::chrono::seconds(10), req)
        .receive([&](const k8s::response&) { ok = true; },
                 [&](const caf::error& err) { last = err; });
    if (ok)
      return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return make_error(
      k8s::errc::unavailable,
      "the simulated store did not answer for namespace \"default\": "
          + error_message(last));
}

/// One request as the administrator, waited for (setup only).
caf::expected<k8s::response> admin_call(caf::actor_system& sys,
                                        const k8s::sim::store_actor& store,
                                        k8s::request req) {
  caf::scoped_actor self{sys};
  caf::expected<k8s::response> out = caf::error{};
  self->request(store, std::chrono::seconds(30), std::move(req))
      .receive([&](k8s::response& r) { out = std::move(r); },
               [&](caf::error& err) { out = std::move(err); });
  return out;
}

/// Creates `object` at `ref` (a collection); one that exists already (a
/// replayed --state-dir) is kept.
caf::expected<void> create_or_keep(caf::actor_system& sys,
                                   const k8s::sim::store_actor& store,
                                   k8s::resource_ref ref,
                                   const k8s::json& object) {
  k8s::request req;
  req.verb = k8s::verb::create;
  req.ref = std::move(ref);
  req.body = object.dump();
  auto created = admin_call(sys, store, std::move(req));
  if (created)
    return {};
  if (const auto* st = k8s::status_of(created.error());
      st != nullptr && st->reason == "AlreadyExists")
    return {};
  return created.error();
}

/// The JobSet CRD, installed and Established (the line on stdout promises
/// that JobSets can be created).
caf::expected<void> install_jobset_crd(caf::actor_system& sys,
                                       const k8s::sim::store_actor& store) {
  const auto crd = k8s::sim::jobset_crd();
  const std::string name = crd["metadata"]["name"].get<std::string>();
  if (auto made = create_or_keep(sys, store,
                                 {"apiextensions.k8s.io", "v1",
                                  "customresourcedefinitions", "", "", ""},
                                 crd);
      !made)
    return made.error();
  for (int attempt = 0; attempt < 100; ++attempt) {
    k8s::request get;
    get.ref = {"apiextensions.k8s.io",
               "v1",
               "customresourcedefinitions",
               "",
               name,
               ""};
    if (auto got = admin_call(sys, store, get)) {
      auto doc = k8s::json::parse(got->body, nullptr, false);
      if (doc.is_object())
        for (const auto& c : doc.value("status", k8s::json::object())
                                 .value("conditions", k8s::json::array()))
          if (c.value("type", "") == "Established"
              && c.value("status", "") == "True")
            return {};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return make_error(k8s::errc::unavailable,
                    "the JobSet CRD " + name
                        + " did not become Established within 10 s");
}

/// The `kubernetes` Service of `default` and its endpoints. There are no
/// virtual IPs in the simulated cluster, so the Service has no selector
/// and its Endpoints/EndpointSlice name the API server's listener on the
/// gateway itself, which is also what KUBERNETES_SERVICE_HOST/PORT say.
caf::expected<void> publish_kubernetes_service(
    caf::actor_system& sys, const k8s::sim::store_actor& store,
    const std::string& gateway, std::uint16_t port, bool tls) {
  const std::string port_name = tls ? "https" : "http";
  const k8s::json labels
      = {{"component", "apiserver"}, {"provider", "kubernetes"}};
  k8s::json svc = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", "kubernetes"}, {"namespace", "default"}, {"labels", labels}}},
      {"spec",
       {{"type", "ClusterIP"},
        {"sessionAffinity", "None"},
        {"ports", k8s::json::array({{{"name", port_name},
                                     {"port", 443},
                                     {"protocol", "TCP"},
                                     {"targetPort", port}}})}}}};
  if (auto made = create_or_keep(
          sys, store, {"", "v1", "services", "default", "", ""}, svc);
      !made)
    return made.error();
  k8s::json eps
      = {{"apiVersion", "v1"},
         {"kind", "Endpoints"},
         {"metadata",
          {{"name", "kubernetes"},
           {"namespace", "default"},
           {"labels", {{"endpointslice.kubernetes.io/skip-mirror", "true"}}}}},
         {"subsets",
          k8s::json::array(
              {{{"addresses", k8s::json::array({{{"ip", gateway}}})},
                {"ports", k8s::json::array({{{"name", port_name},
                                             {"port", port},
                                             {"protocol", "TCP"}}})}}})}};
  if (auto made = create_or_keep(
          sys, store, {"", "v1", "endpoints", "default", "", ""}, eps);
      !made)
    return made.error();
  k8s::json slice
      = {{"apiVersion", "discovery.k8s.io/v1"},
         {"kind", "EndpointSlice"},
         {"metadata",
          {{"name", "kubernetes"},
           {"namespace", "default"},
           {"labels", {{"kubernetes.io/service-name", "kubernetes"}}}}},
         {"addressType", "IPv4"},
         {"endpoints",
          k8s::json::array({{{"addresses", k8s::json::array({gateway})},
                             {"conditions", {{"ready", true}}}}})},
         {"ports",
          k8s::json::array(
              {{{"name", port_name}, {"port", port}, {"protocol", "TCP"}}})}};
  return create_or_keep(
      sys, store,
      {"discovery.k8s.io", "v1", "endpointslices", "default", "", ""}, slice);
}

/// A socket of the pod network bound on `address:port`; TCP ones listen.
caf::expected<int> bound_in_cluster(const k8s::sim::sandbox::cluster& c,
                                    const std::string& address,
                                    std::uint16_t port, int type) {
  auto fd = c.open_socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (!fd)
    return fd.error();
  int one = 1;
  ::setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  ::inet_pton(AF_INET, address.c_str(), &sa.sin_addr);
  if (::bind(*fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0
      || (type == SOCK_STREAM && ::listen(*fd, SOMAXCONN) != 0)) {
    const int err = errno;
    ::close(*fd);
    return make_error(http_server::errc::bind_failed,
                      "cannot listen on " + address + ":" + std::to_string(port)
                          + " in the pod network: " + std::strerror(err));
  }
  return *fd;
}

/// readlink of /proc/self/exe: the aiperf-node serving the simulator.
std::string own_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string{"/proc/self/exe"} : p.string();
}

/// What --workloads runs besides the API server.
struct workloads {
  std::shared_ptr<k8s::sim::sandbox::cluster> cluster;
  std::string work_dir;
  bool remove_work_dir = false;
  std::vector<caf::actor> actors; // controllers, scheduler, kubelet, runtime
  k8s::sim::sandbox::runtime_actor runtime;
  std::unique_ptr<k8s::sim::dns::dns_server> dns;
};

/// Parses --image-map IMAGE=PATH entries.
caf::expected<std::map<std::string, std::string>>
image_map_of(const std::vector<std::string>& entries) {
  std::map<std::string, std::string> out;
  for (const auto& e : entries) {
    auto eq = e.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == e.size())
      return make_error(k8s::errc::invalid,
                        "--image-map wants IMAGE=PATH (e.g. "
                        "test-image:1=/bin/sh), got '"
                            + e + "'");
    auto path = e.substr(eq + 1);
    if (::access(path.c_str(), X_OK) != 0)
      return make_error(k8s::errc::invalid, "--image-map " + e + ": " + path
                                                + " is not an executable file");
    out[e.substr(0, eq)] = path;
  }
  return out;
}

int run(const options& opts) {
  auto logger = log::get("sim_cluster");
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto fail = [](const caf::error& err) {
    std::fprintf(stderr, "sim-cluster: %s\n", error_message(err).c_str());
    return 1;
  };

  // The pod network first: its gateway goes into the certificate, and its
  // init is forked from this (the main) thread, which lives as long as it.
  workloads wl;
  std::map<std::string, std::string> images;
  std::vector<k8s::json> nodes;
  if (opts.workloads) {
    auto mapped = image_map_of(opts.image_map);
    if (!mapped) {
      fail(mapped.error());
      return 2; // a usage error
    }
    images = std::move(*mapped);
    if (opts.nodes_file.empty()) {
      nodes = k8s::sim::default_nodes();
    } else {
      auto loaded = k8s::sim::load_nodes(opts.nodes_file);
      if (!loaded)
        return fail(loaded.error());
      nodes = std::move(*loaded);
    }
    if (!opts.state_dir.empty()) {
      wl.work_dir = opts.state_dir + "/workloads";
      std::error_code ec;
      std::filesystem::create_directories(wl.work_dir, ec);
      if (ec)
        return fail(make_error(io::errc::system, "cannot create " + wl.work_dir
                                                     + ": " + ec.message()
                                                     + "; check --state-dir"));
    } else {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl
          = std::string{tmp != nullptr && *tmp != '\0' ? tmp : "/tmp"}
            + "/aiperf-sim-cluster-XXXXXX";
      if (::mkdtemp(tmpl.data()) == nullptr)
        return fail(
            make_error(io::errc::system, "cannot create the work folder " + tmpl
                                             + ": " + std::strerror(errno)
                                             + "; set TMPDIR or --state-dir"));
      wl.work_dir = tmpl;
      wl.remove_work_dir = true;
    }
    k8s::sim::sandbox::cluster_options copts;
    copts.pod_cidr = opts.pod_cidr;
    copts.work_dir = wl.work_dir;
    copts.init_executable = own_executable();
    auto started = k8s::sim::sandbox::cluster::start(copts);
    if (!started) {
      if (wl.remove_work_dir) {
        std::error_code ec;
        std::filesystem::remove_all(wl.work_dir, ec);
      }
      std::fprintf(stderr, "sim-cluster: --workloads: %s\n",
                   error_message(started.error()).c_str());
      return 1;
    }
    wl.cluster = std::move(*started);
  }
  auto remove_work_dir = [&wl] {
    if (wl.remove_work_dir) {
      std::error_code ec;
      std::filesystem::remove_all(wl.work_dir, ec);
    }
  };

  std::optional<k8s::sim::http::tls_identity> identity;
  std::string token;
  if (opts.tls) {
    std::vector<std::string> sans;
    if (wl.cluster)
      sans = {wl.cluster->gateway(), "kubernetes", "kubernetes.default",
              "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"};
    auto made = k8s::sim::http::make_tls_identity(sans);
    if (!made) {
      wl.cluster.reset();
      remove_work_dir();
      return fail(made.error());
    }
    identity = std::move(*made);
    token = random_token();
  }

  caf::actor_system_config cfg;
  commands::add_error_categories(cfg);
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.console", caf::atom("none"));
  caf::actor_system sys{cfg};

  k8s::sim::store_config store_cfg;
  store_cfg.admin_token = token;
  store_cfg.state_dir = opts.state_dir;
  if (identity)
    store_cfg.root_ca_pem = identity->ca_cert_pem;
  auto store = k8s::sim::spawn_store(sys, store_cfg);
  if (!store) {
    wl.cluster.reset();
    remove_work_dir();
    return fail(store.error());
  }
  if (auto ready = await_builtins(sys, *store); !ready) {
    caf::anon_send_exit(*store, caf::exit_reason::user_shutdown);
    wl.cluster.reset();
    remove_work_dir();
    return fail(ready.error());
  }

  // kube-controller-manager's part of the API's semantics: owner
  // references and namespace deletion.
  k8s::api_actor api = *store;
  auto gc = k8s::sim::spawn_garbage_collector(sys, api);
  auto ns_controller = k8s::sim::spawn_namespace_controller(sys, api);
  auto stop_actors = [&] {
    for (auto& a : wl.actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(gc, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(ns_controller, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(*store, caf::exit_reason::user_shutdown);
  };

  k8s::sim::http::front_options fopts;
  fopts.port = opts.port;
  fopts.tls = identity;
  fopts.admin_token = token;
  fopts.audit_log_path = opts.audit_log;
  k8s::sim::http::front front{sys, *store, fopts};
  // Whatever fails from here on stops what runs and exits 1.
  auto abort_with = [&](const caf::error& err) {
    front.stop();
    front.set_pod_network({});
    wl.dns.reset();
    stop_actors();
    wl.actors.clear();
    wl.runtime = k8s::sim::sandbox::runtime_actor{};
    wl.cluster.reset();
    remove_work_dir();
    return fail(err);
  };
  auto port = front.start();
  if (!port)
    return abort_with(port.error());
  const std::string server = std::string{opts.tls ? "https" : "http"}
                             + "://127.0.0.1:" + std::to_string(*port);

  std::uint16_t gateway_port = 0;
  if (wl.cluster) {
    // The API server on the pod network: the same port as on 127.0.0.1 if
    // it is free there, any otherwise (the restart fault reopens it on the
    // port it got).
    auto chosen = std::make_shared<std::uint16_t>(*port);
    auto c = wl.cluster;
    auto gw = front.add_listener([c, chosen]() -> caf::expected<int> {
      auto fd = bound_in_cluster(*c, c->gateway(), *chosen, SOCK_STREAM);
      if (!fd && *chosen != 0) {
        fd = bound_in_cluster(*c, c->gateway(), 0, SOCK_STREAM);
      }
      if (fd) {
        sockaddr_in sa{};
        socklen_t len = sizeof sa;
        ::getsockname(*fd, reinterpret_cast<sockaddr*>(&sa), &len);
        *chosen = ntohs(sa.sin_port);
      }
      return fd;
    });
    if (!gw)
      return abort_with(gw.error());
    gateway_port = *gw;

    for (const auto& node : nodes)
      if (auto made
          = create_or_keep(sys, *store, {"", "v1", "nodes", "", "", ""}, node);
          !made)
        return abort_with(made.error());
    if (auto crd = install_jobset_crd(sys, *store); !crd)
      return abort_with(crd.error());
    if (auto sc = create_or_keep(
            sys, *store, {"storage.k8s.io", "v1", "storageclasses", "", "", ""},
            k8s::sim::default_storage_class());
        !sc)
      return abort_with(sc.error());
    if (auto svc = publish_kubernetes_service(
            sys, *store, wl.cluster->gateway(), gateway_port, opts.tls);
        !svc)
      return abort_with(svc.error());

    const std::string pv_dir
        = (opts.state_dir.empty() ? wl.work_dir : opts.state_dir) + "/pv";
    std::error_code ec;
    std::filesystem::create_directories(pv_dir, ec);
    auto keep = [&wl](auto handle) {
      wl.actors.push_back(caf::actor_cast<caf::actor>(handle));
    };
    keep(k8s::sim::spawn_job_controller(sys, api));
    keep(k8s::sim::spawn_jobset_controller(sys, api));
    keep(k8s::sim::spawn_ttl_after_finished_controller(sys, api));
    keep(k8s::sim::spawn_deployment_controller(sys, api));
    keep(k8s::sim::spawn_replicaset_controller(sys, api));
    keep(k8s::sim::spawn_volume_provisioner(sys, api, pv_dir));
    keep(k8s::sim::spawn_endpoints_controller(sys, api));
    keep(k8s::sim::spawn_endpointslice_controller(sys, api));
    keep(k8s::sim::spawn_serviceaccount_controller(
        sys, api, identity ? identity->ca_cert_pem : ""));
    auto scheduler = k8s::sim::spawn_scheduler(sys, api);
    keep(scheduler);
    wl.runtime = k8s::sim::sandbox::spawn_runtime(sys, wl.cluster);
    keep(wl.runtime);
    k8s::sim::kubelet::kubelet_config kcfg;
    kcfg.nodes.clear();
    for (const auto& node : nodes)
      kcfg.nodes.push_back(node["metadata"]["name"].get<std::string>());
    kcfg.aiperf_node_path
        = opts.aiperf_node.empty() ? own_executable() : opts.aiperf_node;
    kcfg.image_map = images;
    kcfg.work_dir = wl.work_dir;
    kcfg.pv_dir = pv_dir;
    kcfg.dns_server = wl.cluster->gateway();
    kcfg.api_host = wl.cluster->gateway();
    kcfg.api_port = gateway_port;
    kcfg.host_ip = wl.cluster->gateway();
    kcfg.backoff_scale = opts.backoff_scale;
    kcfg.token_expiration_seconds = opts.token_expiration_seconds;
    auto kubelet = k8s::sim::kubelet::spawn_kubelet(sys, api, wl.runtime, kcfg);
    keep(kubelet);

    auto udp
        = bound_in_cluster(*wl.cluster, wl.cluster->gateway(), 53, SOCK_DGRAM);
    if (!udp)
      return abort_with(udp.error());
    auto tcp_fd
        = bound_in_cluster(*wl.cluster, wl.cluster->gateway(), 53, SOCK_STREAM);
    if (!tcp_fd) {
      ::close(*udp);
      return abort_with(tcp_fd.error());
    }
    k8s::sim::dns::dns_config dcfg;
    dcfg.udp_fd = *udp;
    dcfg.tcp_fd = *tcp_fd;
    dcfg.cluster_domain = "cluster.local";
    dcfg.api_server_address = wl.cluster->gateway();
    auto dns = k8s::sim::dns::start_dns(sys, api, dcfg);
    if (!dns) {
      ::close(*udp);
      ::close(*tcp_fd);
      return abort_with(dns.error());
    }
    wl.dns = std::move(*dns);

    k8s::sim::http::pod_network net;
    net.cluster = wl.cluster;
    net.kubelet = kubelet;
    net.unschedulable_fault
        = [&sys, scheduler](std::string ns, std::string selector,
                            std::int32_t count,
                            std::function<void(caf::error)> done) {
            sys.spawn([=](caf::event_based_actor* self) {
              self->request(scheduler, std::chrono::seconds(30),
                            k8s::sim::scheduler_fault_atom::value, ns, selector,
                            count)
                  .then([done]() { done(caf::error{}); },
                        [done](caf::error& err) { done(std::move(err)); });
            });
          };
    front.set_pod_network(std::move(net));
  }

  if (!opts.kubeconfig.empty()) {
    auto text
        = kubeconfig_text(server, identity ? identity->ca_cert_pem : "", token);
    if (auto written = io::atomic_write_file(opts.kubeconfig, text); !written)
      return abort_with(written.error());
  } else if (opts.tls) {
    logger->warn(
        "no --kubeconfig: clients cannot learn the admin token or the CA of {}",
        server);
  }
  std::printf("listening on %s\n", server.c_str());
  if (wl.cluster)
    std::printf("pod network %s gateway %s\n", wl.cluster->cidr().c_str(),
                wl.cluster->gateway().c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  logger->info("signal {}: stopping", sig);
  front.stop(); // flushes and closes the audit log
  front.set_pod_network({});
  // Whatever an actor still holds must not keep a stopped simulator alive.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    std::fflush(nullptr);
    std::_Exit(0);
  }).detach();
  wl.dns.reset();
  if (wl.cluster) {
    // The pods go with the cluster: once the runtime (which shares it) is
    // gone, its destructor kills them and init.
    caf::scoped_actor self{sys};
    auto runtime = caf::actor_cast<caf::actor>(wl.runtime);
    self->monitor(runtime);
    stop_actors();
    self->receive_while([&] { return runtime != nullptr; })(
        [&](caf::down_msg&) { runtime = nullptr; },
        caf::after(std::chrono::seconds(3)) >> [&] { runtime = nullptr; });
    // The actor system waits for detached actors' threads, which end only
    // once no handle is left.
    wl.actors.clear();
    wl.runtime = k8s::sim::sandbox::runtime_actor{};
    wl.cluster.reset();
    remove_work_dir();
    return 0;
  }
  stop_actors();
  return 0;
}

// --- ctl -------------------------------------------------------------------

struct target {
  std::string host;
  std::string port;
  bool tls = false;
  std::string ca_pem;
  std::string token;
};

std::string base64_decode(const std::string& in) {
  std::string out(3 * in.size() / 4 + 3, '\0');
  auto n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                           reinterpret_cast<const unsigned char*>(in.data()),
                           static_cast<int>(in.size()));
  if (n < 0)
    return {};
  out.resize(static_cast<std::size_t>(n));
  while (!in.empty() && in.back() == '=' && !out.empty()
         && out.back() == '\0') {
    out.pop_back();
    break;
  }
  return out;
}

caf::expected<target> read_kubeconfig(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return make_error(k8s::errc::invalid,
                      "cannot use kubeconfig " + path + ": " + why
                          + "; pass the file sim-cluster --kubeconfig wrote");
  };
  try {
    YAML::Node doc = YAML::LoadFile(path);
    auto ctx_name = doc["current-context"].as<std::string>("");
    YAML::Node ctx;
    for (const auto& c : doc["contexts"])
      if (c["name"].as<std::string>("") == ctx_name)
        ctx = c["context"];
    if (!ctx)
      return bad("no context \"" + ctx_name + "\"");
    auto cluster_name = ctx["cluster"].as<std::string>("");
    auto user_name = ctx["user"].as<std::string>("");
    target t;
    std::string server;
    for (const auto& c : doc["clusters"])
      if (c["name"].as<std::string>("") == cluster_name) {
        server = c["cluster"]["server"].as<std::string>("");
        t.ca_pem = base64_decode(
            c["cluster"]["certificate-authority-data"].as<std::string>(""));
      }
    for (const auto& u : doc["users"])
      if (u["name"].as<std::string>("") == user_name)
        t.token = u["user"]["token"].as<std::string>("");
    std::string rest;
    if (server.starts_with("https://")) {
      t.tls = true;
      rest = server.substr(8);
    } else if (server.starts_with("http://")) {
      rest = server.substr(7);
    } else {
      return bad("cluster \"" + cluster_name + "\" has no http(s) server");
    }
    rest = rest.substr(0, rest.find('/'));
    auto colon = rest.rfind(':');
    if (colon == std::string::npos)
      return bad("server " + server + " has no port");
    t.host = rest.substr(0, colon);
    t.port = rest.substr(colon + 1);
    return t;
  } catch (const std::exception& e) {
    return bad(e.what());
  }
}

template <class Stream>
caf::expected<std::pair<unsigned, std::string>>
exchange(Stream& stream, const target& t, bhttp::verb method,
         const std::string& path, const std::string& body) {
  bhttp::request<bhttp::string_body> req{method, path, 11};
  req.set(bhttp::field::host, t.host);
  req.set(bhttp::field::user_agent, "aiperf-node sim-cluster ctl");
  if (!t.token.empty())
    req.set(bhttp::field::authorization, "Bearer " + t.token);
  if (!body.empty())
    req.set(bhttp::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  bhttp::write(stream, req);
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(stream, buffer, res);
  return std::pair<unsigned, std::string>{res.result_int(), res.body()};
}

caf::expected<std::pair<unsigned, std::string>> call(const target& t,
                                                     bhttp::verb method,
                                                     const std::string& path,
                                                     const std::string& body) {
  try {
    asio::io_context ioc;
    tcp::resolver resolver{ioc};
    auto endpoints = resolver.resolve(t.host, t.port);
    if (!t.tls) {
      tcp::socket sock{ioc};
      asio::connect(sock, endpoints);
      return exchange(sock, t, method, path, body);
    }
    asio::ssl::context ctx{asio::ssl::context::tls_client};
    ctx.add_certificate_authority(asio::buffer(t.ca_pem));
    ctx.set_verify_mode(asio::ssl::verify_peer);
    asio::ssl::stream<tcp::socket> stream{ioc, ctx};
    stream.set_verify_callback(asio::ssl::host_name_verification(t.host));
    asio::connect(stream.next_layer(), endpoints);
    stream.handshake(asio::ssl::stream_base::client);
    return exchange(stream, t, method, path, body);
  } catch (const std::exception& e) {
    return make_error(k8s::errc::transport,
                      "cannot reach the simulator at " + t.host + ":" + t.port
                          + ": " + e.what()
                          + "; is aiperf-node sim-cluster running?");
  }
}

int run_ctl(const std::string& kubeconfig, bhttp::verb method,
            const std::string& path, const std::string& body) {
  auto t = read_kubeconfig(kubeconfig);
  if (!t) {
    std::fprintf(stderr, "error: %s\n", error_message(t.error()).c_str());
    return 2;
  }
  auto answer = call(*t, method, path, body);
  if (!answer) {
    std::fprintf(stderr, "error: %s\n", error_message(answer.error()).c_str());
    return 1;
  }
  if (answer->first >= 200 && answer->first < 300) {
    std::printf("%s\n", answer->second.c_str());
    return 0;
  }
  std::string message = answer->second;
  auto st = k8s::json::parse(answer->second, nullptr, false);
  if (st.is_object() && st.contains("message") && st["message"].is_string())
    message = st["message"].get<std::string>();
  std::fprintf(stderr, "error: %u: %s\n", answer->first, message.c_str());
  return 1;
}

void add_ctl(CLI::App& parent, int& exit_code) {
  auto* ctl = parent.add_subcommand(
      "ctl", "drive a running simulator's faults (/sim/v1)");
  auto kubeconfig = std::make_shared<std::string>();
  if (const char* env = std::getenv("KUBECONFIG"))
    *kubeconfig = env;
  ctl->add_option("--kubeconfig", *kubeconfig,
                  "kubeconfig that sim-cluster wrote (default: $KUBECONFIG)");
  ctl->require_subcommand(1);

  auto* faults
      = ctl->add_subcommand("faults", "add or delete an injected fault");
  faults->require_subcommand(1);
  auto* add = faults->add_subcommand(
      "add", "add a fault, e.g. "
             "'{\"match\":{\"verb\":\"get\"},\"count\":2,\"code\":503}'; "
             "prints {\"id\":...}");
  auto spec = std::make_shared<std::string>();
  add->add_option("fault", *spec, "the fault as JSON")->required();
  add->callback([&exit_code, kubeconfig, spec] {
    exit_code
        = run_ctl(*kubeconfig, bhttp::verb::post, "/sim/v1/faults", *spec);
  });
  auto* del = faults->add_subcommand("delete", "delete a fault by its id");
  auto id = std::make_shared<std::string>();
  del->add_option("id", *id, "the id faults add printed")->required();
  del->callback([&exit_code, kubeconfig, id] {
    exit_code = run_ctl(*kubeconfig, bhttp::verb::delete_,
                        "/sim/v1/faults/" + *id, "");
  });

  auto* watches = ctl->add_subcommand("watches", "end open watch streams");
  watches->require_subcommand(1);
  auto* drop = watches->add_subcommand(
      "drop", "drop watches as a lost connection would");
  auto resource = std::make_shared<std::string>();
  drop->add_option("--resource", *resource,
                   "only watches of this resource (plural)");
  drop->callback([&exit_code, kubeconfig, resource] {
    k8s::json body = k8s::json::object();
    if (!resource->empty())
      body["resource"] = *resource;
    exit_code = run_ctl(*kubeconfig, bhttp::verb::post, "/sim/v1/watches:drop",
                        body.dump());
  });

  auto* restart
      = ctl->add_subcommand("restart", "restart the API server: listener down, "
                                       "connections reset, store reset");
  auto down = std::make_shared<std::int64_t>(3);
  auto keep = std::make_shared<bool>(false);
  restart
      ->add_option("--down-seconds", *down,
                   "seconds the listener stays closed (0-3600)")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  restart->add_flag("--keep-state", *keep,
                    "keep every object (default: start empty)");
  restart->callback([&exit_code, kubeconfig, down, keep] {
    k8s::json body = {{"downSeconds", *down}, {"keepState", *keep}};
    exit_code = run_ctl(*kubeconfig, bhttp::verb::post,
                        "/sim/v1/apiserver:restart", body.dump());
  });

  auto* podfaults = ctl->add_subcommand(
      "podfaults", "make the next matching pods fail (--workloads)");
  podfaults->require_subcommand(1);
  auto* pf_add = podfaults->add_subcommand(
      "add", "add a pod fault, e.g. '{\"namespace\":\"bench\","
             "\"labelSelector\":\"app=w\",\"state\":\"ImagePullBackOff\","
             "\"count\":1}' (states: ImagePullBackOff, ErrImagePull, "
             "CreateContainerConfigError, Unschedulable, CrashLoop)");
  auto pf_spec = std::make_shared<std::string>();
  pf_add->add_option("fault", *pf_spec, "the pod fault as JSON")->required();
  pf_add->callback([&exit_code, kubeconfig, pf_spec] {
    exit_code = run_ctl(*kubeconfig, bhttp::verb::post, "/sim/v1/podfaults",
                        *pf_spec);
  });

  auto* pods = ctl->add_subcommand(
      "pods", "act on a running pod's processes (--workloads)");
  pods->require_subcommand(1);
  auto ns = std::make_shared<std::string>("default");
  auto pod = std::make_shared<std::string>();
  auto pod_path = [ns, pod] {
    return "/sim/v1/namespaces/" + k8s::url_encode(*ns) + "/pods/"
           + k8s::url_encode(*pod);
  };
  auto pod_args = [&](CLI::App* sub) {
    sub->add_option("-n,--namespace", *ns, "the pod's namespace")
        ->capture_default_str();
    sub->add_option("pod", *pod, "the pod's name")->required();
  };
  auto* kill = pods->add_subcommand(
      "kill", "signal every container of the pod (as a crash or OOM kill)");
  pod_args(kill);
  auto signal_name = std::make_shared<std::string>("KILL");
  kill->add_option("--signal", *signal_name,
                   "signal name: KILL, TERM, INT, HUP, USR1, ...")
      ->capture_default_str();
  kill->callback([&exit_code, kubeconfig, pod_path, signal_name] {
    exit_code = run_ctl(*kubeconfig, bhttp::verb::post, pod_path() + ":kill",
                        k8s::json{{"signal", *signal_name}}.dump());
  });
  auto* partition = pods->add_subcommand(
      "partition", "take the pod's network link down for a while");
  pod_args(partition);
  auto seconds = std::make_shared<std::int64_t>(20);
  partition->add_option("--seconds", *seconds, "how long the link stays down")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  partition->callback([&exit_code, kubeconfig, pod_path, seconds] {
    exit_code
        = run_ctl(*kubeconfig, bhttp::verb::post, pod_path() + ":partition",
                  k8s::json{{"seconds", *seconds}}.dump());
  });
  auto* info = pods->add_subcommand(
      "info", "print the pod's processes: pid, podIP, netns, containers");
  pod_args(info);
  info->callback([&exit_code, kubeconfig, pod_path] {
    exit_code = run_ctl(*kubeconfig, bhttp::verb::get, pod_path(), "");
  });
}

} // namespace

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("sim-cluster",
                                 "simulated Kubernetes API server for kubectl, "
                                 "python3-kubernetes and tests");
  auto opts = std::make_shared<options>();
  sub->add_option("--port", opts->port,
                  "port to listen on (0 = ephemeral; printed)")
      ->capture_default_str();
  sub->add_flag("--tls", opts->tls,
                "serve HTTPS with a fresh CA; the kubeconfig gets the CA "
                "and an admin bearer token");
  sub->add_option("--kubeconfig", opts->kubeconfig,
                  "write a kubeconfig for the simulator to this file");
  sub->add_option("--audit-log", opts->audit_log,
                  "append one audit.k8s.io/v1 Event per request to this file");
  sub->add_option(
      "--state-dir", opts->state_dir,
      "keep every acknowledged write in this folder (survives SIGKILL)");
  auto* workloads = sub->add_flag(
      "--workloads", opts->workloads,
      "run pods as real processes in a pod network (needs root and network "
      "namespaces): scheduler, kubelet, Job, JobSet, Deployment, "
      "Endpoints controllers and DNS");
  sub->add_option("--nodes", opts->nodes_file,
                  "JSON or YAML list of Node objects (default: one Node "
                  "sim-node-0, 64 cpu, 256Gi)")
      ->needs(workloads);
  sub->add_option("--aiperf-node", opts->aiperf_node,
                  "what images named *aiperf-node* run (default: this "
                  "executable)")
      ->needs(workloads);
  sub->add_option("--image-map", opts->image_map,
                  "IMAGE=PATH: pods of IMAGE run the local executable PATH "
                  "(repeatable); other images fail to pull")
      ->needs(workloads);
  sub->add_option("--pod-cidr", opts->pod_cidr,
                  "the pod network (IPv4 /8-/28); the gateway is its first "
                  "address")
      ->capture_default_str()
      ->needs(workloads);
  sub->add_option("--backoff-scale", opts->backoff_scale,
                  "multiply the kubelet's back-offs (CrashLoopBackOff, image "
                  "pull) by this factor")
      ->check(CLI::Range(0.001, 1000.0))
      ->capture_default_str()
      ->needs(workloads);
  sub->add_option("--token-expiration-seconds", opts->token_expiration_seconds,
                  "lifetime of projected service-account tokens (the kubelet "
                  "renews them at 80 %)")
      ->check(CLI::Range(std::int64_t{60}, std::int64_t{1} << 32))
      ->capture_default_str()
      ->needs(workloads);
  sub->require_subcommand(0, 1);
  add_ctl(*sub, exit_code);
  sub->callback([sub, opts, &exit_code] {
    if (!sub->get_subcommands().empty())
      return; // ctl ran
    exit_code = run(*opts);
  });
}

} // namespace aiperf::sim_cluster_command
