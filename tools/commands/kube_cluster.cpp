#include "tools/commands/kube_cluster.hpp"

#include "k8s/client/client.hpp"
#include "k8s/object/wire.hpp"
#include "runtime/io/durable_file.hpp"
#include "tools/commands/error_categories.hpp"

#include <CLI/CLI.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace aiperf::kube_command {

namespace fs = std::filesystem;

void add_cluster_flags(CLI::App& app, cluster_flags& flags) {
  app.add_option("-n,--namespace", flags.namespace_name,
                 "Kubernetes namespace (default: the kubeconfig context's, "
                 "else default); never created");
  app.add_option("--kubeconfig", flags.kubeconfig,
                 "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)");
  app.add_option("--kube-context", flags.context,
                 "kubeconfig context (default: the current context)");
}

std::string resolve_namespace(const cluster_flags& flags,
                              const k8s::client::config_selection& sel,
                              const k8s::client::environment& env) {
  if (!flags.namespace_name.empty())
    return flags.namespace_name;
  auto cfg = k8s::client::load_config(sel, env);
  if (cfg && !cfg->namespace_name.empty())
    return cfg->namespace_name;
  return "default";
}

fs::path last_benchmark_path(const k8s::client::environment& env) {
  auto home = env.getenv ? env.getenv("HOME") : std::nullopt;
  fs::path base = home && !home->empty() ? fs::path{*home} : fs::path{"."};
  return base / ".aiperf" / "last_kube_benchmark.json";
}

std::string to_json_text(const last_benchmark& x) {
  nlohmann::ordered_json j;
  j["name"] = x.name;
  j["namespace"] = x.namespace_name;
  j["mode"] = x.mode;
  return j.dump(2) + "\n";
}

caf::expected<last_benchmark> parse_last_benchmark(std::string_view text,
                                                   const fs::path& from) {
  auto where = from.string();
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(config::errc::invalid,
                      where
                          + ": not a JSON object; name the benchmark on the "
                            "command line or run kube profile again");
  last_benchmark out;
  for (auto [key, field] :
       {std::pair{"name", &out.name},
        std::pair{"namespace", &out.namespace_name},
        std::pair{"mode", &out.mode}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
      return make_error(config::errc::invalid,
                        where + ": \"" + key
                            + "\" is missing or not a string; name the "
                              "benchmark on the command line");
    *field = it->get<std::string>();
  }
  return out;
}

caf::expected<void> write_last_benchmark(const fs::path& path,
                                         const last_benchmark& x) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    return make_error(io::errc::system,
                      "cannot create " + path.parent_path().string() + ": "
                          + ec.message());
  return io::atomic_write_file(path, to_json_text(x));
}

caf::expected<last_benchmark> read_last_benchmark(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return make_error(config::errc::missing,
                      "no benchmark named and no " + path.string()
                          + " (written by kube profile): name the benchmark, "
                            "e.g. kube results my-bench");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_last_benchmark(buf.str(), path);
}

caf::expected<job_target>
resolve_target(const std::string& positional, const cluster_flags& flags,
               const k8s::client::config_selection& sel,
               const k8s::client::environment& env) {
  if (!positional.empty()) {
    if (auto why = validate_job_name(positional); !why.empty())
      return make_error(config::errc::invalid, why);
    return job_target{positional, resolve_namespace(flags, sel, env)};
  }
  auto last = read_last_benchmark(last_benchmark_path(env));
  if (!last)
    return last.error();
  return job_target{last->name, flags.namespace_name.empty()
                                    ? last->namespace_name
                                    : flags.namespace_name};
}

std::string validate_job_name(std::string_view name) {
  auto quoted = "\"" + std::string{name} + "\"";
  if (name.empty())
    return "the benchmark name is empty: pass a DNS label such as my-bench";
  if (name.size() > 35)
    return "name " + quoted + " has " + std::to_string(name.size())
           + " characters; at most 35 (pod names append "
             "-controller-0-0-xxxxx): pass a shorter --name";
  auto lower_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  bool ok = lower_alnum(name.front()) && lower_alnum(name.back());
  for (char c : name)
    ok = ok && (lower_alnum(c) || c == '-');
  if (!ok)
    return "name " + quoted
           + " is not a DNS label (lower-case letters, digits and '-', "
             "starting and ending with a letter or digit): pass another "
             "--name";
  return {};
}

std::string jobset_name(std::string_view job) {
  return "aiperf-" + std::string{job};
}

std::string job_selector(std::string_view job) {
  return "aiperf.nvidia.com/job-id=" + std::string{job};
}

k8s::request pod_proxy(std::string_view ns, std::string_view pod, int port,
                       std::string_view path) {
  k8s::request r;
  r.verb = k8s::verb::get;
  std::string sub = "proxy";
  if (path.empty() || path.front() != '/')
    sub += '/';
  sub += path;
  r.ref = {"",
           "v1",
           "pods",
           std::string{ns},
           std::string{pod} + ":" + std::to_string(port),
           sub};
  return r;
}

k8s::request pod_log(std::string_view ns, std::string_view pod,
                     std::string_view container) {
  k8s::request r;
  r.verb = k8s::verb::get;
  r.ref = {"",
           "v1",
           "pods",
           std::string{ns},
           std::string{pod},
           "log?container=" + k8s::url_encode(container)};
  return r;
}

struct cluster::impl {
  explicit impl(caf::actor_system_config& cfg) : sys{cfg} {
    // nop
  }
  ~impl() {
    caf::anon_send_exit(api, caf::exit_reason::user_shutdown);
  }
  caf::actor_system sys;
  k8s::api_actor api;
};

namespace {

caf::actor_system_config& system_config() {
  // One per process: the CLI connects once.
  static caf::actor_system_config cfg = [] {
    caf::actor_system_config c;
    commands::add_error_categories(c);
    c.set("scheduler.max-threads", 2);
    c.set("logger.console", caf::atom("none"));
    return c;
  }();
  return cfg;
}

} // namespace

cluster::cluster() = default;
cluster::~cluster() = default;

caf::expected<std::unique_ptr<cluster>>
cluster::connect(const cluster_flags& flags,
                 const k8s::client::environment& env) {
  k8s::client::config_selection sel{flags.kubeconfig, flags.context};
  auto cfg = k8s::client::load_config(sel, env);
  if (!cfg)
    return cfg.error();
  std::unique_ptr<cluster> out{new cluster};
  out->namespace_ = flags.namespace_name.empty()
                        ? (cfg->namespace_name.empty() ? "default"
                                                       : cfg->namespace_name)
                        : flags.namespace_name;
  out->origin_ = cfg->origin;
  out->impl_ = std::make_unique<impl>(system_config());
  k8s::client::client_options opts;
  opts.user_agent = "aiperf-node/kube";
  auto api = k8s::client::spawn_client(out->impl_->sys, std::move(*cfg),
                                       std::move(opts));
  if (!api)
    return api.error();
  out->impl_->api = *api;
  return out;
}

caf::expected<k8s::response> cluster::call(k8s::request req,
                                           std::chrono::milliseconds timeout) {
  caf::scoped_actor self{impl_->sys};
  caf::expected<k8s::response> out{caf::error{}};
  self->request(impl_->api, timeout, std::move(req))
      .receive([&](k8s::response& r) { out = std::move(r); },
               [&](caf::error& e) { out = std::move(e); });
  return out;
}

caf::expected<void> cluster::check_namespace() {
  k8s::request r;
  r.verb = k8s::verb::get;
  r.ref = {"", "v1", "namespaces", "", namespace_, ""};
  auto got = call(std::move(r), std::chrono::seconds{30});
  if (got)
    return {};
  if (const auto* st = k8s::status_of(got.error());
      st != nullptr && st->code == 404)
    return make_error(config::errc::missing,
                      "namespace \"" + namespace_
                          + "\" not found: create it (kubectl create "
                            "namespace "
                          + namespace_ + ") or pass --namespace");
  return got.error();
}

int exit_code_of(const caf::error& err) {
  return err.category() == caf::detail::error_factory<config::errc>::category
             ? 2
             : 1;
}

int report(const caf::error& err) {
  std::fprintf(stderr, "error: %s\n", error_message(err).c_str());
  return exit_code_of(err);
}

std::string str_at(const k8s::json& j, std::initializer_list<const char*> path) {
  const k8s::json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object())
      return {};
    auto it = cur->find(key);
    if (it == cur->end())
      return {};
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : std::string{};
}

} // namespace aiperf::kube_command
