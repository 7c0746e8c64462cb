#include "k8s/client/config.hpp"

#include <arpa/inet.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace aiperf::k8s::client {

const char* to_string(errc x) noexcept {
  switch (x) {
  case errc::no_config:
    return "no_config";
  case errc::bad_config:
    return "bad_config";
  case errc::credentials:
    return "credentials";
  case errc::unsupported:
    return "unsupported";
  }
  return "unknown";
}

namespace {

namespace fs = std::filesystem;

caf::expected<std::string> read_file(const std::string& path,
                                     std::string_view what) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return make_error(errc::bad_config,
                      std::string{what} + ": cannot read " + path
                          + ": check that the file exists and is readable");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string resolve_path(const std::string& path,
                         const std::string& base_file) {
  if (path.empty() || fs::path{path}.is_absolute())
    return path;
  return (fs::path{base_file}.parent_path() / path).lexically_normal().string();
}

/// One named entry of a kubeconfig list (clusters, users, contexts) and the
/// file it came from.
struct entry {
  YAML::Node body;
  std::string file;
};

struct merged_config {
  std::map<std::string, entry> clusters;
  std::map<std::string, entry> users;
  std::map<std::string, entry> contexts;
  std::string current_context;
  std::vector<std::string> files; // read, in order
};

std::string scalar(const YAML::Node& node, const char* key) {
  auto v = node[key];
  if (!v || !v.IsScalar())
    return {};
  return v.as<std::string>();
}

bool flag(const YAML::Node& node, const char* key) {
  auto v = node[key];
  return v && v.IsScalar() && v.as<bool>(false);
}

caf::expected<void> merge_list(const YAML::Node& doc, const char* list,
                               const char* body_key, const std::string& file,
                               std::map<std::string, entry>& into) {
  auto items = doc[list];
  if (!items || items.IsNull())
    return {};
  if (!items.IsSequence())
    return make_error(errc::bad_config, "kubeconfig " + file + ": '" + list
                                            + "' must be a list of {name, "
                                            + body_key + "}");
  for (const auto& item : items) {
    auto name = scalar(item, "name");
    if (name.empty())
      return make_error(errc::bad_config,
                        "kubeconfig " + file + ": an entry of '" + list
                            + "' has no name: give every entry a name");
    into.try_emplace(
        name,
        entry{item[body_key] ? item[body_key] : YAML::Node{YAML::NodeType::Map},
              file});
  }
  return {};
}

caf::expected<void> merge_text(std::string_view text, const std::string& file,
                               merged_config& into) {
  YAML::Node doc;
  try {
    doc = YAML::Load(std::string{text});
  } catch (const YAML::Exception& e) {
    return make_error(errc::bad_config,
                      "kubeconfig " + file + ": not valid YAML: " + e.what()
                          + ": fix the file or point KUBECONFIG elsewhere");
  }
  into.files.push_back(file);
  if (!doc || doc.IsNull())
    return {}; // an empty file is an empty config, as for kubectl
  if (!doc.IsMap())
    return make_error(errc::bad_config,
                      "kubeconfig " + file
                          + ": expected a Config object (kind: Config)");
  try {
    if (auto r = merge_list(doc, "clusters", "cluster", file, into.clusters);
        !r)
      return r;
    if (auto r = merge_list(doc, "users", "user", file, into.users); !r)
      return r;
    if (auto r = merge_list(doc, "contexts", "context", file, into.contexts);
        !r)
      return r;
    if (into.current_context.empty())
      into.current_context = scalar(doc, "current-context");
  } catch (const YAML::Exception& e) {
    return make_error(errc::bad_config, "kubeconfig " + file + ": " + e.what());
  }
  return {};
}

/// `key`'s base64 data or the file `file_key` names; empty when neither.
caf::expected<std::string>
data_or_file(const YAML::Node& node, const char* data_key, const char* file_key,
             const std::string& where, const std::string& file) {
  if (auto data = scalar(node, data_key); !data.empty()) {
    auto decoded = base64_decode(data);
    if (!decoded)
      return make_error(errc::bad_config,
                        where + ": " + data_key
                            + " is not base64: paste the output of "
                              "`base64 -w0 FILE`, or use "
                            + file_key + " with a path");
    return std::move(*decoded);
  }
  if (auto path = scalar(node, file_key); !path.empty())
    return read_file(resolve_path(path, file), where + ": " + file_key);
  return std::string{};
}

caf::error auth_provider_error(const std::string& where,
                               const std::string& name) {
  std::string plugin;
  if (name == "gcp")
    plugin = "\"gke-gcloud-auth-plugin\" (gcloud components install "
             "gke-gcloud-auth-plugin)";
  else if (name == "azure")
    plugin
        = "https://github.com/Azure/kubelogin (kubelogin convert-kubeconfig)";
  else if (name == "oidc")
    plugin = "https://github.com/int128/kubelogin (kubectl oidc-login)";
  else
    plugin = "the vendor's client.authentication.k8s.io exec plugin";
  return make_error(
      errc::unsupported,
      where + ": the " + name
          + " auth-provider is not supported (client-go removed it): install "
          + plugin + " and configure it as users[].user.exec");
}

caf::expected<exec_config> parse_exec(const YAML::Node& node,
                                      const std::string& where,
                                      const std::string& file) {
  exec_config out;
  out.origin = where;
  out.api_version = scalar(node, "apiVersion");
  if (out.api_version != "client.authentication.k8s.io/v1"
      && out.api_version != "client.authentication.k8s.io/v1beta1")
    return make_error(
        errc::unsupported,
        where + ": exec.apiVersion \"" + out.api_version
            + "\" is not supported: use client.authentication.k8s.io/v1 (or "
              "v1beta1), as current plugins do");
  out.command = scalar(node, "command");
  if (out.command.empty())
    return make_error(errc::bad_config,
                      where
                          + ": exec.command is empty: name the plugin "
                            "binary, e.g. aws or gke-gcloud-auth-plugin");
  if (out.command.find('/') != std::string::npos)
    out.command = resolve_path(out.command, file);
  if (auto args = node["args"]; args && args.IsSequence())
    for (const auto& a : args)
      out.args.push_back(a.as<std::string>());
  if (auto env = node["env"]; env && env.IsSequence())
    for (const auto& e : env)
      out.env.emplace_back(scalar(e, "name"), scalar(e, "value"));
  out.provide_cluster_info = flag(node, "provideClusterInfo");
  out.install_hint = scalar(node, "installHint");
  return out;
}

caf::expected<client_config> resolve(const merged_config& cfg,
                                     std::string_view wanted) {
  std::string files;
  for (const auto& f : cfg.files)
    files += (files.empty() ? "" : ":") + f;
  auto origin = "kubeconfig " + files;
  std::string name{wanted};
  if (name.empty())
    name = cfg.current_context;
  if (name.empty()) {
    if (cfg.contexts.empty())
      return make_error(errc::no_config,
                        origin
                            + ": no contexts: create one with `kubectl config "
                              "set-context`, or pass --kubeconfig FILE");
    return make_error(errc::bad_config,
                      origin
                          + ": current-context is not set: pass --kube-context "
                            "NAME or run `kubectl config use-context NAME`");
  }
  auto ctx = cfg.contexts.find(name);
  if (ctx == cfg.contexts.end()) {
    std::string known;
    for (const auto& [k, _] : cfg.contexts)
      known += (known.empty() ? "" : ", ") + k;
    return make_error(errc::bad_config, origin + ": context \"" + name
                                            + "\" not found: pick one of ["
                                            + known + "] with --kube-context");
  }
  client_config out;
  out.context_name = name;
  out.origin = "kubeconfig " + ctx->second.file + ", context " + name;
  try {
    const auto& c = ctx->second.body;
    auto cluster_name = scalar(c, "cluster");
    auto user_name = scalar(c, "user");
    if (auto ns = scalar(c, "namespace"); !ns.empty())
      out.namespace_name = ns;
    auto cl = cfg.clusters.find(cluster_name);
    if (cl == cfg.clusters.end())
      return make_error(errc::bad_config,
                        out.origin + ": cluster \"" + cluster_name
                            + "\" not found: add it under clusters or fix "
                              "contexts[].context.cluster");
    auto where = "kubeconfig " + cl->second.file + ", cluster " + cluster_name;
    const auto& cn = cl->second.body;
    out.server = scalar(cn, "server");
    if (out.server.empty())
      return make_error(errc::bad_config,
                        where
                            + ": server is not set: add "
                              "clusters[].cluster.server (https://HOST:PORT)");
    while (!out.server.empty() && out.server.back() == '/')
      out.server.pop_back();
    auto ca = data_or_file(cn, "certificate-authority-data",
                           "certificate-authority", where, cl->second.file);
    if (!ca)
      return std::move(ca.error());
    out.ca_pem = std::move(*ca);
    out.insecure_skip_tls_verify = flag(cn, "insecure-skip-tls-verify");
    if (out.insecure_skip_tls_verify && !out.ca_pem.empty())
      return make_error(
          errc::bad_config,
          where
              + ": insecure-skip-tls-verify is set together with "
                "certificate-authority: specifying a root certificates file "
                "with "
                "the insecure flag is not allowed; remove one of them");
    out.tls_server_name = scalar(cn, "tls-server-name");
    out.proxy_url = scalar(cn, "proxy-url");
    if (!user_name.empty()) {
      auto us = cfg.users.find(user_name);
      if (us == cfg.users.end())
        return make_error(errc::bad_config,
                          out.origin + ": user \"" + user_name
                              + "\" not found: add it under users or fix "
                                "contexts[].context.user");
      auto uwhere = "kubeconfig " + us->second.file + ", user " + user_name;
      const auto& un = us->second.body;
      if (auto ap = un["auth-provider"]; ap && ap.IsMap())
        return auth_provider_error(uwhere, scalar(ap, "name"));
      auto cert = data_or_file(un, "client-certificate-data",
                               "client-certificate", uwhere, us->second.file);
      if (!cert)
        return std::move(cert.error());
      auto key = data_or_file(un, "client-key-data", "client-key", uwhere,
                              us->second.file);
      if (!key)
        return std::move(key.error());
      if (cert->empty() != key->empty())
        return make_error(
            errc::bad_config,
            uwhere + ": "
                + (cert->empty() ? "client-key" : "client-certificate")
                + " is set without "
                + (cert->empty() ? "client-certificate" : "client-key")
                + ": a client certificate needs both");
      out.client_cert_pem = std::move(*cert);
      out.client_key_pem = std::move(*key);
      out.token = scalar(un, "token");
      if (auto tf = scalar(un, "tokenFile"); !tf.empty())
        out.token_file = resolve_path(tf, us->second.file);
      out.username = scalar(un, "username");
      out.password = scalar(un, "password");
      if (auto ex = un["exec"]; ex && ex.IsMap()) {
        auto e = parse_exec(ex, uwhere, us->second.file);
        if (!e)
          return std::move(e.error());
        out.exec = std::move(*e);
      }
    }
  } catch (const YAML::Exception& e) {
    return make_error(errc::bad_config, out.origin + ": " + e.what());
  }
  return out;
}

std::optional<std::string> env_of(const environment& env,
                                  std::string_view name) {
  if (!env.getenv)
    return std::nullopt;
  auto v = env.getenv(name);
  if (v && v->empty())
    return std::nullopt;
  return v;
}

caf::expected<client_config> with_proxy(caf::expected<client_config> cfg,
                                        const environment& env) {
  if (!cfg)
    return cfg;
  if (cfg->proxy_url.empty())
    cfg->proxy_url = proxy_from_environment(cfg->server, env);
  if (!cfg->proxy_url.empty() && cfg->proxy_url.rfind("http://", 0) != 0)
    return make_error(errc::unsupported,
                      cfg->origin + ": proxy " + cfg->proxy_url
                          + " is not supported: only http:// proxies (HTTP "
                            "CONNECT) are; use one or unset the proxy");
  return cfg;
}

/// The host of "scheme://host:port/path" without brackets.
std::string host_of(std::string_view url) {
  if (auto p = url.find("://"); p != std::string_view::npos)
    url.remove_prefix(p + 3);
  url = url.substr(0, url.find('/'));
  if (auto at = url.rfind('@'); at != std::string_view::npos)
    url.remove_prefix(at + 1);
  if (!url.empty() && url.front() == '[')
    return std::string{url.substr(1, url.find(']') - 1)};
  return std::string{url.substr(0, url.rfind(':'))};
}

bool is_loopback(const std::string& host) {
  if (host == "localhost" || host.ends_with(".localhost") || host == "::1")
    return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1
         && (ntohl(a.s_addr) >> 24) == 127;
}

bool in_cidr(const std::string& host, std::string_view cidr) {
  auto slash = cidr.find('/');
  if (slash == std::string_view::npos)
    return false;
  std::string net{cidr.substr(0, slash)};
  int bits = std::atoi(std::string{cidr.substr(slash + 1)}.c_str());
  in_addr h{};
  in_addr n{};
  if (inet_pton(AF_INET, host.c_str(), &h) != 1
      || inet_pton(AF_INET, net.c_str(), &n) != 1 || bits < 0 || bits > 32)
    return false;
  std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
  return (ntohl(h.s_addr) & mask) == (ntohl(n.s_addr) & mask);
}

bool no_proxy_matches(const std::string& host, std::string_view list) {
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{}
                                           : list.substr(comma + 1);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (item.empty())
      continue;
    if (item == "*" || item == host || in_cidr(host, item))
      return true;
    // "example.com" and ".example.com" both match sub.example.com; a port
    // suffix is ignored.
    std::string_view name = item.substr(0, item.find(':'));
    if (!name.empty() && name.front() == '.')
      name.remove_prefix(1);
    if (name == host
        || (host.size() > name.size() && host.ends_with(name)
            && host[host.size() - name.size() - 1] == '.'))
      return true;
  }
  return false;
}

} // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+' || c == '-')
      return 62;
    if (c == '/' || c == '_')
      return 63;
    return -1;
  };
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
      continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    auto v = value(c);
    if (v < 0 || padding)
      return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char digits[]
      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    auto n = (std::uint32_t(std::uint8_t(bytes[i])) << 16)
             | (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8)
             | std::uint8_t(bytes[i + 2]);
    out += digits[n >> 18];
    out += digits[(n >> 12) & 63];
    out += digits[(n >> 6) & 63];
    out += digits[n & 63];
  }
  if (auto rest = bytes.size() - i; rest > 0) {
    std::uint32_t n = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (rest == 2)
      n |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out += digits[n >> 18];
    out += digits[(n >> 12) & 63];
    out += rest == 2 ? digits[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

environment process_environment() {
  environment env;
  env.getenv = [](std::string_view name) -> std::optional<std::string> {
    if (const char* v = std::getenv(std::string{name}.c_str()))
      return std::string{v};
    return std::nullopt;
  };
  return env;
}

environment
fixed_environment(std::vector<std::pair<std::string, std::string>> vars,
                  std::string service_account_dir) {
  environment env;
  env.getenv = [vars = std::move(vars)](
                   std::string_view name) -> std::optional<std::string> {
    for (const auto& [k, v] : vars)
      if (k == name)
        return v;
    return std::nullopt;
  };
  env.service_account_dir = std::move(service_account_dir);
  return env;
}

std::string proxy_from_environment(std::string_view server,
                                   const environment& env) {
  bool https = server.rfind("https://", 0) == 0;
  auto proxy = https ? env_of(env, "HTTPS_PROXY") : env_of(env, "HTTP_PROXY");
  if (!proxy)
    proxy = https ? env_of(env, "https_proxy") : env_of(env, "http_proxy");
  if (!proxy)
    return {};
  auto host = host_of(server);
  if (is_loopback(host))
    return {};
  auto no_proxy = env_of(env, "NO_PROXY");
  if (!no_proxy)
    no_proxy = env_of(env, "no_proxy");
  if (no_proxy && no_proxy_matches(host, *no_proxy))
    return {};
  auto url = *proxy;
  if (url.find("://") == std::string::npos)
    url = "http://" + url; // Go takes a bare host:port as http
  return url;
}

caf::expected<client_config> load_kubeconfig_text(std::string_view text,
                                                  std::string_view path,
                                                  std::string_view context,
                                                  const environment& env) {
  merged_config merged;
  if (auto r = merge_text(text, std::string{path}, merged); !r)
    return std::move(r.error());
  return with_proxy(resolve(merged, context), env);
}

caf::expected<client_config>
load_kubeconfig(const std::vector<std::string>& files, std::string_view context,
                bool must_exist, const environment& env) {
  merged_config merged;
  std::vector<std::string> seen;
  for (const auto& file : files) {
    if (file.empty() || std::find(seen.begin(), seen.end(), file) != seen.end())
      continue;
    seen.push_back(file);
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      if (must_exist)
        return make_error(errc::no_config,
                          "kubeconfig " + file
                              + " does not exist: check the path given to "
                                "--kubeconfig");
      continue;
    }
    auto text = read_file(file, "kubeconfig");
    if (!text)
      return std::move(text.error());
    if (auto r = merge_text(*text, file, merged); !r)
      return std::move(r.error());
  }
  if (merged.files.empty()) {
    std::string list;
    for (const auto& f : files)
      list += (list.empty() ? "" : ":") + f;
    return make_error(errc::no_config,
                      "no kubeconfig found (looked for " + list
                          + "): set KUBECONFIG or pass --kubeconfig FILE");
  }
  return with_proxy(resolve(merged, context), env);
}

caf::expected<client_config> load_in_cluster(const environment& env) {
  auto host = env_of(env, "KUBERNETES_SERVICE_HOST");
  auto port = env_of(env, "KUBERNETES_SERVICE_PORT");
  if (!host || !port)
    return make_error(
        errc::no_config,
        "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must be defined: run in a pod, or pass "
        "--kubeconfig FILE");
  client_config out;
  const auto& dir = env.service_account_dir;
  out.origin = "in-cluster service account " + dir;
  bool ipv6 = host->find(':') != std::string::npos;
  out.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  out.token_file = dir + "/token";
  auto token = read_file(out.token_file, out.origin + ": token");
  if (!token)
    return make_error(
        errc::credentials,
        error_message(token.error())
            + " (is automountServiceAccountToken false for this pod?)");
  auto ca = read_file(dir + "/ca.crt", out.origin + ": ca.crt");
  if (!ca)
    return std::move(ca.error());
  out.ca_pem = std::move(*ca);
  std::ifstream ns_file{dir + "/namespace"};
  std::string ns;
  if (ns_file && std::getline(ns_file, ns) && !ns.empty())
    out.namespace_name = ns;
  return with_proxy(std::move(out), env);
}

caf::expected<client_config> load_config(const config_selection& sel,
                                         const environment& env) {
  if (!sel.kubeconfig.empty())
    return load_kubeconfig({sel.kubeconfig}, sel.context, true, env);
  if (auto list = env_of(env, "KUBECONFIG")) {
    std::vector<std::string> files;
    std::string_view rest = *list;
    while (!rest.empty()) {
      auto colon = rest.find(':');
      files.emplace_back(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view{}
                                             : rest.substr(colon + 1);
    }
    return load_kubeconfig(files, sel.context, false, env);
  }
  if (env_of(env, "KUBERNETES_SERVICE_HOST") && sel.context.empty())
    return load_in_cluster(env);
  auto home = env_of(env, "HOME");
  if (!home)
    return make_error(errc::no_config,
                      "no kubeconfig: HOME is not set and not in a pod; set "
                      "KUBECONFIG or pass --kubeconfig FILE");
  return load_kubeconfig({*home + "/.kube/config"}, sel.context, false, env);
}

} // namespace aiperf::k8s::client
