// clang-format off
#include <utility> // first: Boost 1.74 needs std::exchange (g++ 12)
// clang-format on

#include "tools/commands/sim_cluster_command.hpp"

#include "tools/commands/error_categories.hpp"

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"
#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/http/front.hpp"
#include "k8s/sim/http/tls.hpp"
#include "k8s/sim/store/store.hpp"
#include "runtime/http_server/http_server.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
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

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
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

int run(const options& opts) {
  auto logger = log::get("sim_cluster");
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::optional<k8s::sim::http::tls_identity> identity;
  std::string token;
  if (opts.tls) {
    auto made = k8s::sim::http::make_tls_identity();
    if (!made) {
      std::fprintf(stderr, "sim-cluster: %s\n",
                   error_message(made.error()).c_str());
      return 1;
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
    std::fprintf(stderr, "sim-cluster: %s\n",
                 error_message(store.error()).c_str());
    return 1;
  }
  if (auto ready = await_builtins(sys, *store); !ready) {
    std::fprintf(stderr, "sim-cluster: %s\n",
                 error_message(ready.error()).c_str());
    caf::anon_send_exit(*store, caf::exit_reason::user_shutdown);
    return 1;
  }

  // kube-controller-manager's part of the API's semantics: owner
  // references and namespace deletion.
  k8s::api_actor api = *store;
  auto gc = k8s::sim::spawn_garbage_collector(sys, api);
  auto ns_controller = k8s::sim::spawn_namespace_controller(sys, api);
  auto stop_actors = [&] {
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
  auto port = front.start();
  if (!port) {
    std::fprintf(stderr, "sim-cluster: %s\n",
                 error_message(port.error()).c_str());
    stop_actors();
    return 1;
  }
  const std::string server = std::string{opts.tls ? "https" : "http"}
                             + "://127.0.0.1:" + std::to_string(*port);
  if (!opts.kubeconfig.empty()) {
    auto text
        = kubeconfig_text(server, identity ? identity->ca_cert_pem : "", token);
    if (auto written = io::atomic_write_file(opts.kubeconfig, text); !written) {
      std::fprintf(stderr, "sim-cluster: %s\n",
                   error_message(written.error()).c_str());
      front.stop();
      stop_actors();
      return 1;
    }
  } else if (opts.tls) {
    logger->warn(
        "no --kubeconfig: clients cannot learn the admin token or the CA of {}",
        server);
  }
  std::printf("listening on %s\n", server.c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  logger->info("signal {}: stopping", sig);
  front.stop(); // flushes and closes the audit log
  // Whatever an actor still holds must not keep a stopped simulator alive.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    std::fflush(nullptr);
    std::_Exit(0);
  }).detach();
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
  sub->require_subcommand(0, 1);
  add_ctl(*sub, exit_code);
  sub->callback([sub, opts, &exit_code] {
    if (!sub->get_subcommands().empty())
      return; // ctl ran
    exit_code = run(*opts);
  });
}

} // namespace aiperf::sim_cluster_command
