#include "k8s/client/credentials.hpp"

#include "k8s/api/json.hpp"
#include "k8s/object/time.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace aiperf::k8s::client {

caf::expected<std::string> token_file_source::token(std::int64_t now_ns) {
  if (read_at_ && now_ns - *read_at_ < token_file_period_ns)
    return token_;
  std::ifstream in{path_, std::ios::binary};
  std::ostringstream text;
  if (in)
    text << in.rdbuf();
  auto value = text.str();
  while (
      !value.empty()
      && (value.back() == '\n' || value.back() == '\r' || value.back() == ' '))
    value.pop_back();
  if (!in || value.empty()) {
    if (!token_.empty())
      return token_; // keep the last good token; try again next time
    return make_error(errc::credentials,
                      "token file " + path_
                          + (in ? " is empty" : " cannot be read")
                          + ": check the path (tokenFile) and its permissions");
  }
  token_ = std::move(value);
  read_at_ = now_ns;
  return token_;
}

std::string exec_info(const exec_config& exec, const client_config& cluster) {
  json spec = json::object();
  if (exec.provide_cluster_info) {
    json c = json::object();
    c["server"] = cluster.server;
    if (!cluster.tls_server_name.empty())
      c["tls-server-name"] = cluster.tls_server_name;
    if (cluster.insecure_skip_tls_verify)
      c["insecure-skip-tls-verify"] = true;
    if (!cluster.ca_pem.empty())
      c["certificate-authority-data"] = base64_encode(cluster.ca_pem);
    if (!cluster.proxy_url.empty())
      c["proxy-url"] = cluster.proxy_url;
    spec["cluster"] = std::move(c);
  }
  spec["interactive"] = false;
  json doc = json::object();
  doc["kind"] = "ExecCredential";
  doc["apiVersion"] = exec.api_version;
  doc["spec"] = std::move(spec);
  return doc.dump();
}

caf::expected<exec_credential> parse_exec_credential(std::string_view text,
                                                     const exec_config& exec) {
  auto what = exec.origin + ": exec plugin " + exec.command;
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error(
        errc::credentials,
        what + " did not print an ExecCredential JSON object on stdout");
  auto version = doc.value("apiVersion", std::string{});
  if (version != exec.api_version)
    return make_error(errc::credentials,
                      what + " is configured to use API version "
                          + exec.api_version + ", plugin returned version "
                          + version + ": fix users[].user.exec.apiVersion");
  if (doc.value("kind", std::string{}) != "ExecCredential")
    return make_error(errc::credentials, what + " printed kind \""
                                             + doc.value("kind", "")
                                             + "\", not ExecCredential");
  auto st = doc.find("status");
  if (st == doc.end() || !st->is_object())
    return make_error(errc::credentials,
                      what + " printed an ExecCredential without status");
  exec_credential out;
  out.token = st->value("token", std::string{});
  out.client_cert_pem = st->value("clientCertificateData", std::string{});
  out.client_key_pem = st->value("clientKeyData", std::string{});
  if (out.client_cert_pem.empty() != out.client_key_pem.empty())
    return make_error(errc::credentials,
                      what + " printed "
                          + (out.client_cert_pem.empty()
                                 ? "clientKeyData"
                                 : "clientCertificateData")
                          + " without its pair: a client certificate needs "
                            "both");
  if (out.token.empty() && out.client_cert_pem.empty())
    return make_error(
        errc::credentials,
        what
            + " printed neither status.token nor status.clientCertificateData");
  if (auto ts = st->value("expirationTimestamp", std::string{}); !ts.empty()) {
    auto t = parse_time(ts);
    if (!t)
      return make_error(errc::credentials,
                        what + " printed expirationTimestamp \"" + ts
                            + "\", not RFC 3339");
    out.expires_unix_ns = *t;
  }
  return out;
}

caf::expected<exec_credential> run_exec_plugin(const exec_config& exec,
                                               const client_config& cluster) {
  auto what = exec.origin + ": exec plugin " + exec.command;
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    env_strings.emplace_back(*e);
  auto set_env = [&](const std::string& name, const std::string& value) {
    auto prefix = name + "=";
    std::erase_if(env_strings, [&](const std::string& s) {
      return s.rfind(prefix, 0) == 0;
    });
    env_strings.push_back(prefix + value);
  };
  for (const auto& [k, v] : exec.env)
    set_env(k, v);
  set_env("KUBERNETES_EXEC_INFO", exec_info(exec, cluster));
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings{exec.command};
  arg_strings.insert(arg_strings.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  for (auto& s : arg_strings)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return make_error(errc::credentials,
                      what + ": cannot make a pipe: " + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, exec.command.c_str(), &actions, nullptr,
                          argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    std::string msg = what + ": cannot run it: " + std::strerror(rc);
    if (rc == ENOENT) {
      msg = exec.origin + ": exec: executable " + exec.command
            + " not found. It looks like you are trying to use a client-go "
              "credential plugin "
              "that is not installed";
      msg += exec.install_hint.empty()
                 ? std::string{": install it and put it on PATH"}
                 : ": " + exec.install_hint;
    }
    return make_error(errc::credentials, std::move(msg));
  }
  std::string output;
  char buf[4096];
  for (;;) {
    auto n = ::read(out_pipe[0], buf, sizeof buf);
    if (n > 0) {
      output.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    break;
  }
  ::close(out_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    // retry
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return make_error(
        errc::credentials,
        what + " failed with "
            + (WIFEXITED(status)
                   ? "exit code " + std::to_string(WEXITSTATUS(status))
                   : "signal " + std::to_string(WTERMSIG(status)))
            + ": run it by hand to see why (its stderr is passed through)");
  return parse_exec_credential(output, exec);
}

} // namespace aiperf::k8s::client
