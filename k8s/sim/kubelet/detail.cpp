#include "k8s/sim/kubelet/detail.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace aiperf::k8s::sim::kubelet::detail {

namespace fs = std::filesystem;

namespace {

const json& member(const json& obj, const char* key) {
  static const json null_value;
  if (!obj.is_object())
    return null_value;
  auto it = obj.find(key);
  return it == obj.end() ? null_value : *it;
}

std::string str(const json& obj, const char* key) {
  const auto& v = member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string{};
}

std::optional<std::int64_t> integer(const json& obj, const char* key) {
  const auto& v = member(obj, key);
  if (v.is_number_integer())
    return v.get<std::int64_t>();
  return std::nullopt;
}

std::optional<bool> boolean(const json& obj, const char* key) {
  const auto& v = member(obj, key);
  if (v.is_boolean())
    return v.get<bool>();
  return std::nullopt;
}

// A quantity ("500m", "2", "1Gi") in base units.
double quantity(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> suffixes
      = {{"Ki", 1024.0},
         {"Mi", 1024.0 * 1024},
         {"Gi", 1024.0 * 1024 * 1024},
         {"Ti", 1024.0 * 1024 * 1024 * 1024},
         {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
         {"n", 1e-9},
         {"u", 1e-6},
         {"m", 1e-3},
         {"k", 1e3},
         {"M", 1e6},
         {"G", 1e9},
         {"T", 1e12},
         {"P", 1e15}};
  for (const auto& [s, f] : suffixes)
    if (text.size() > s.size()
        && text.compare(text.size() - s.size(), s.size(), s) == 0)
      return std::strtod(text.substr(0, text.size() - s.size()).c_str(),
                         nullptr)
             * f;
  return std::strtod(text.c_str(), nullptr);
}

std::string quantity_text(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number())
    return v.dump();
  return {};
}

// metadata.labels / annotations as a downwardAPI volume file: k="v" lines,
// sorted by key (fieldpath.FormatMap).
std::string format_map(const json& m) {
  std::map<std::string, std::string> sorted;
  if (m.is_object())
    for (const auto& [k, v] : m.items())
      sorted[k] = v.is_string() ? v.get<std::string>() : v.dump();
  std::string out;
  for (const auto& [k, v] : sorted) {
    if (!out.empty())
      out += "\n";
    out += k + "=" + json(v).dump();
  }
  return out;
}

// "metadata.labels['app']" -> "app" for `prefix` "metadata.labels".
std::optional<std::string> subscript(const std::string& path,
                                     const std::string& prefix) {
  auto head = prefix + "['";
  if (path.size() < head.size() + 2 || path.compare(0, head.size(), head) != 0
      || path.compare(path.size() - 2, 2, "']") != 0)
    return std::nullopt;
  return path.substr(head.size(), path.size() - head.size() - 2);
}

bool valid_env_name(const std::string& name) {
  // validation.IsEnvVarName: [-._a-zA-Z][-._a-zA-Z0-9]*
  if (name.empty())
    return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = c == '-' || c == '.' || c == '_'
              || std::isalpha(static_cast<unsigned char>(c))
              || (i > 0 && std::isdigit(static_cast<unsigned char>(c)));
    if (!ok)
      return false;
  }
  return true;
}

std::string timestamp_folder(std::int64_t unix_ns) {
  std::time_t secs = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "..%04d_%02d_%02d_%02d_%02d_%02d.%09lld",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec,
                static_cast<long long>(unix_ns % 1'000'000'000));
  return buf;
}

std::optional<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    return std::nullopt;
  return std::string{std::istreambuf_iterator<char>(in), {}};
}

} // namespace

std::string pod_desc(const json& pod) {
  const auto& m = member(pod, "metadata");
  return str(m, "name") + "_" + str(m, "namespace") + "(" + str(m, "uid") + ")";
}

image_info resolve_image(const kubelet_config& cfg, const std::string& image) {
  image_info out;
  // Our Dockerfile's USER 1000, for every aiperf-node image.
  const bool ours = image.find("aiperf-node") != std::string::npos;
  if (auto it = cfg.image_map.find(image); it != cfg.image_map.end()) {
    out.found = true;
    out.executable = it->second;
  } else if (ours && !cfg.aiperf_node_path.empty()) {
    out.found = true;
    out.executable = cfg.aiperf_node_path;
  }
  if (out.found && ours) {
    out.uid = 1000;
    out.gid = 1000;
  }
  return out;
}

std::string normalized_image(const std::string& image) {
  std::string ref = image;
  auto slash = ref.find('/');
  auto first = ref.substr(0, slash == std::string::npos ? 0 : slash);
  bool has_registry
      = slash != std::string::npos
        && (first.find('.') != std::string::npos
            || first.find(':') != std::string::npos || first == "localhost");
  if (!has_registry)
    ref = (slash == std::string::npos ? "docker.io/library/" : "docker.io/")
          + ref;
  auto last_slash = ref.rfind('/');
  if (ref.find('@') == std::string::npos
      && ref.find(':', last_slash) == std::string::npos)
    ref += ":latest";
  return ref;
}

std::string pull_error_message(const std::string& image) {
  auto ref = normalized_image(image);
  return "rpc error: code = NotFound desc = failed to pull and unpack image \""
         + ref + "\": failed to resolve reference \"" + ref + "\": " + ref
         + ": not found";
}

std::variant<security, std::string> resolve_security(const json& pod,
                                                     const json& container,
                                                     const image_info& image) {
  const auto& psc = member(member(pod, "spec"), "securityContext");
  const auto& csc = member(container, "securityContext");
  security out;
  auto run_as_user = integer(csc, "runAsUser");
  if (!run_as_user)
    run_as_user = integer(psc, "runAsUser");
  auto run_as_group = integer(csc, "runAsGroup");
  if (!run_as_group)
    run_as_group = integer(psc, "runAsGroup");
  out.uid = run_as_user ? static_cast<std::uint32_t>(*run_as_user) : image.uid;
  // A uid given without a group has no passwd entry to take one from: gid 0,
  // as containerd does for a numeric user.
  out.gid = run_as_group ? static_cast<std::uint32_t>(*run_as_group)
                         : (run_as_user ? 0 : image.gid);
  out.fs_group = integer(psc, "fsGroup");
  if (out.fs_group)
    out.groups.push_back(static_cast<std::uint32_t>(*out.fs_group));
  const auto& supplemental = member(psc, "supplementalGroups");
  if (supplemental.is_array())
    for (const auto& g : supplemental)
      if (g.is_number_integer())
        out.groups.push_back(g.get<std::uint32_t>());
  auto non_root = boolean(csc, "runAsNonRoot");
  if (!non_root)
    non_root = boolean(psc, "runAsNonRoot");
  if (non_root.value_or(false) && out.uid == 0) {
    auto where = " (pod: \"" + pod_desc(pod)
                 + "\", container: " + str(container, "name") + ")";
    if (run_as_user)
      return "container's runAsUser breaks non-root policy" + where;
    return "container has runAsNonRoot and image will run as root" + where;
  }
  out.read_only_root = boolean(csc, "readOnlyRootFilesystem").value_or(false);
  const auto& drop = member(member(csc, "capabilities"), "drop");
  if (drop.is_array())
    for (const auto& c : drop)
      if (c.is_string() && c.get<std::string>() == "ALL")
        out.drop_all_capabilities = true;
  if (auto ape = boolean(csc, "allowPrivilegeEscalation"); ape && !*ape)
    out.no_new_privileges = true;
  return out;
}

std::string
expand(const std::string& input,
       const std::function<std::optional<std::string>(const std::string&)>&
           lookup) {
  std::string out;
  size_t i = 0;
  while (i < input.size()) {
    if (input[i] != '$' || i + 1 >= input.size()) {
      out += input[i++];
      continue;
    }
    char next = input[i + 1];
    if (next == '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (next == '(') {
      auto close = input.find(')', i + 2);
      if (close == std::string::npos) {
        out += input.substr(i);
        break;
      }
      auto name = input.substr(i + 2, close - i - 2);
      if (auto v = lookup(name))
        out += *v;
      else
        out += "$(" + name + ")";
      i = close + 1;
      continue;
    }
    out += '$';
    ++i;
  }
  return out;
}

std::optional<std::string> field_ref_value(const json& pod,
                                           const std::string& path,
                                           const std::string& pod_ip,
                                           const std::string& host_ip) {
  const auto& m = member(pod, "metadata");
  const auto& spec = member(pod, "spec");
  if (path == "metadata.name")
    return str(m, "name");
  if (path == "metadata.namespace")
    return str(m, "namespace");
  if (path == "metadata.uid")
    return str(m, "uid");
  if (path == "metadata.labels")
    return format_map(member(m, "labels"));
  if (path == "metadata.annotations")
    return format_map(member(m, "annotations"));
  if (auto key = subscript(path, "metadata.labels"))
    return str(member(m, "labels"), key->c_str());
  if (auto key = subscript(path, "metadata.annotations"))
    return str(member(m, "annotations"), key->c_str());
  if (path == "spec.nodeName")
    return str(spec, "nodeName");
  if (path == "spec.serviceAccountName")
    return str(spec, "serviceAccountName");
  if (path == "status.hostIP" || path == "status.hostIPs")
    return host_ip;
  if (path == "status.podIP" || path == "status.podIPs")
    return pod_ip;
  return std::nullopt;
}

std::string resource_field_value(const json& container, const json& ref) {
  auto resource = str(ref, "resource");
  const auto& res = member(container, "resources");
  std::string value;
  auto dot = resource.find('.');
  if (dot != std::string::npos) {
    auto section = resource.substr(0, dot); // limits / requests
    auto name = resource.substr(dot + 1);
    value = quantity_text(member(member(res, section.c_str()), name.c_str()));
    if (value.empty() && section == "requests")
      value = quantity_text(member(member(res, "limits"), name.c_str()));
    if (value.empty())
      value = name == "cpu"      ? "64"
              : name == "memory" ? "256Gi"
                                 : "0"; // the node's allocatable
  }
  auto divisor_text = quantity_text(member(ref, "divisor"));
  double divisor = divisor_text.empty() ? 1.0 : quantity(divisor_text);
  if (divisor <= 0)
    divisor = 1.0;
  auto result = std::ceil(quantity(value) / divisor);
  return std::to_string(static_cast<std::int64_t>(result));
}

std::vector<std::pair<std::string, std::string>>
kubernetes_service_env(const std::string& host, std::uint16_t port) {
  if (host.empty())
    return {};
  auto p = std::to_string(port);
  auto url = "tcp://" + host + ":" + p;
  auto prefix = "KUBERNETES_PORT_" + p + "_TCP";
  return {{"KUBERNETES_SERVICE_HOST", host},
          {"KUBERNETES_SERVICE_PORT", p},
          {"KUBERNETES_SERVICE_PORT_HTTPS", p},
          {"KUBERNETES_PORT", url},
          {prefix, url},
          {prefix + "_PROTO", "tcp"},
          {prefix + "_PORT", p},
          {prefix + "_ADDR", host}};
}

std::variant<std::vector<std::string>, std::string>
make_env(const json& pod, const json& container, const object_lookup& lookup,
         const std::string& pod_ip, const std::string& host_ip,
         const std::vector<std::pair<std::string, std::string>>& service_env) {
  auto ns = str(member(pod, "metadata"), "namespace");
  std::vector<std::pair<std::string, std::string>> vars;
  auto set = [&](const std::string& k, const std::string& v) {
    for (auto& kv : vars)
      if (kv.first == k) {
        kv.second = v;
        return;
      }
    vars.emplace_back(k, v);
  };
  auto find = [&](const std::string& k) -> std::optional<std::string> {
    for (const auto& kv : vars)
      if (kv.first == k)
        return kv.second;
    for (const auto& kv : service_env)
      if (kv.first == k)
        return kv.second;
    return std::nullopt;
  };
  const auto& env_from = member(container, "envFrom");
  if (env_from.is_array())
    for (const auto& src : env_from) {
      auto prefix = str(src, "prefix");
      bool secret = src.contains("secretRef");
      const auto& ref = member(src, secret ? "secretRef" : "configMapRef");
      if (!ref.is_object())
        continue;
      auto name = str(ref, "name");
      const json* obj = lookup(secret ? "Secret" : "ConfigMap", name);
      if (obj == nullptr) {
        if (boolean(ref, "optional").value_or(false))
          continue;
        return std::string{secret ? "secret" : "configmap"} + " \"" + name
               + "\" not found";
      }
      for (const auto& [k, v] : decoded_data(*obj, secret))
        if (valid_env_name(prefix + k))
          set(prefix + k, v);
    }
  const auto& env = member(container, "env");
  if (env.is_array())
    for (const auto& e : env) {
      auto name = str(e, "name");
      if (e.contains("value") || !e.contains("valueFrom")) {
        set(name, expand(str(e, "value"), find));
        continue;
      }
      const auto& from = member(e, "valueFrom");
      if (from.contains("fieldRef")) {
        auto path = str(member(from, "fieldRef"), "fieldPath");
        set(name, field_ref_value(pod, path, pod_ip, host_ip).value_or(""));
      } else if (from.contains("resourceFieldRef")) {
        set(name,
            resource_field_value(container, member(from, "resourceFieldRef")));
      } else if (from.contains("configMapKeyRef")
                 || from.contains("secretKeyRef")) {
        bool secret = from.contains("secretKeyRef");
        const auto& ref
            = member(from, secret ? "secretKeyRef" : "configMapKeyRef");
        auto obj_name = str(ref, "name");
        auto key = str(ref, "key");
        bool optional = boolean(ref, "optional").value_or(false);
        const json* obj = lookup(secret ? "Secret" : "ConfigMap", obj_name);
        if (obj == nullptr) {
          if (optional)
            continue;
          return std::string{secret ? "secret" : "configmap"} + " \"" + obj_name
                 + "\" not found";
        }
        auto data = decoded_data(*obj, secret);
        auto it = data.find(key);
        if (it == data.end()) {
          if (optional)
            continue;
          return "couldn't find key " + key + " in "
                 + (secret ? "Secret " : "ConfigMap ") + ns + "/" + obj_name;
        }
        set(name, it->second);
      }
    }
  std::vector<std::string> out;
  out.reserve(vars.size() + service_env.size());
  for (const auto& [k, v] : vars)
    out.push_back(k + "=" + v);
  for (const auto& [k, v] : service_env) {
    bool shadowed = std::any_of(vars.begin(), vars.end(),
                                [&](const auto& kv) { return kv.first == k; });
    if (!shadowed)
      out.push_back(k + "=" + v);
  }
  return out;
}

std::vector<std::string> expand_args(const std::vector<std::string>& args,
                                     const std::vector<std::string>& env) {
  auto lookup = [&](const std::string& name) -> std::optional<std::string> {
    for (const auto& kv : env)
      if (kv.size() > name.size() && kv[name.size()] == '='
          && kv.compare(0, name.size(), name) == 0)
        return kv.substr(name.size() + 1);
    return std::nullopt;
  };
  std::vector<std::string> out;
  out.reserve(args.size());
  for (const auto& a : args)
    out.push_back(expand(a, lookup));
  return out;
}

std::string hosts_file(const json& pod, const std::string& ip,
                       const std::string& cluster_domain) {
  const auto& m = member(pod, "metadata");
  const auto& spec = member(pod, "spec");
  std::string out = "# Kubernetes-managed hosts file.\n"
                    "127.0.0.1\tlocalhost\n"
                    "::1\tlocalhost ip6-localhost ip6-loopback\n"
                    "fe00::0\tip6-localnet\n"
                    "fe00::0\tip6-mcastprefix\n"
                    "fe00::1\tip6-allnodes\n"
                    "fe00::2\tip6-allrouters\n";
  auto hostname = str(spec, "hostname");
  if (hostname.empty())
    hostname = str(m, "name").substr(0, 63);
  auto subdomain = str(spec, "subdomain");
  if (!ip.empty()) {
    if (subdomain.empty())
      out += ip + "\t" + hostname + "\n";
    else
      out += ip + "\t" + hostname + "." + subdomain + "." + str(m, "namespace")
             + ".svc." + cluster_domain + "\t" + hostname + "\n";
  }
  const auto& aliases = member(spec, "hostAliases");
  if (aliases.is_array() && !aliases.empty()) {
    out += "\n# Entries added by HostAliases.\n";
    for (const auto& a : aliases) {
      std::string line = str(a, "ip");
      const auto& names = member(a, "hostnames");
      if (names.is_array())
        for (const auto& n : names)
          if (n.is_string())
            line += "\t" + n.get<std::string>();
      out += line + "\n";
    }
  }
  return out;
}

std::string resolv_conf(const json& pod, const std::string& dns_server,
                        const std::string& cluster_domain) {
  auto ns = str(member(pod, "metadata"), "namespace");
  std::string out = "search " + ns + ".svc." + cluster_domain + " svc."
                    + cluster_domain + " " + cluster_domain + "\n";
  if (!dns_server.empty())
    out += "nameserver " + dns_server + "\n";
  out += "options ndots:5\n";
  return out;
}

std::optional<std::string> base64_decode(const std::string& in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ')
      continue;
    int v = value(c);
    if (v < 0)
      return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::map<std::string, std::string> decoded_data(const json& obj, bool secret) {
  std::map<std::string, std::string> out;
  const auto& data = member(obj, "data");
  if (data.is_object())
    for (const auto& [k, v] : data.items()) {
      if (!v.is_string())
        continue;
      if (secret)
        out[k] = base64_decode(v.get<std::string>()).value_or("");
      else
        out[k] = v.get<std::string>();
    }
  if (!secret) {
    const auto& binary = member(obj, "binaryData");
    if (binary.is_object())
      for (const auto& [k, v] : binary.items())
        if (v.is_string())
          out[k] = base64_decode(v.get<std::string>()).value_or("");
  }
  return out;
}

std::variant<payload, std::string> project_keys(const json& object, bool secret,
                                                const json& items,
                                                std::uint32_t default_mode,
                                                bool optional) {
  payload out;
  auto data = decoded_data(object, secret);
  if (!items.is_array() || items.empty()) {
    for (const auto& [k, v] : data)
      out[k] = file_entry{v, default_mode};
    return out;
  }
  for (const auto& item : items) {
    auto key = str(item, "key");
    auto it = data.find(key);
    if (it == data.end()) {
      if (optional)
        continue;
      return secret ? "references non-existent secret key: " + key
                    : "configmap references non-existent config key: " + key;
    }
    auto mode = integer(item, "mode");
    auto path = str(item, "path");
    out[path.empty() ? key : path] = file_entry{
        it->second, mode ? static_cast<std::uint32_t>(*mode) : default_mode};
  }
  return out;
}

std::optional<std::string> atomic_write(const std::string& dir_text,
                                        const payload& files,
                                        std::int64_t unix_ns,
                                        std::optional<std::int64_t> fs_group) {
  std::error_code ec;
  fs::path dir{dir_text};
  fs::create_directories(dir, ec);
  if (ec)
    return "cannot create " + dir_text + ": " + ec.message();
  auto data_link = dir / "..data";
  std::string old_folder;
  if (fs::is_symlink(data_link, ec))
    old_folder = fs::read_symlink(data_link, ec).string();
  // Unchanged payload: nothing to do (atomic_writer's shouldWritePayload).
  if (!old_folder.empty()) {
    bool same = true;
    std::set<std::string> present;
    for (auto it = fs::recursive_directory_iterator(dir / old_folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file())
        present.insert(fs::relative(it->path(), dir / old_folder).string());
    if (present.size() != files.size())
      same = false;
    for (const auto& [path, entry] : files) {
      if (!same)
        break;
      auto text = read_file(dir / old_folder / path);
      struct stat sb {};
      if (!text || *text != entry.data
          || ::stat((dir / old_folder / path).c_str(), &sb) != 0
          || (sb.st_mode & 07777) != entry.mode)
        same = false;
    }
    if (same)
      return std::nullopt;
  }
  auto folder = timestamp_folder(unix_ns);
  while (fs::exists(dir / folder, ec) || folder == old_folder)
    folder = timestamp_folder(++unix_ns);
  auto ts_dir = dir / folder;
  fs::create_directories(ts_dir, ec);
  if (ec)
    return "cannot create " + ts_dir.string() + ": " + ec.message();
  auto own = [&](const fs::path& p, bool is_dir) {
    if (!fs_group)
      return;
    (void)!::chown(p.c_str(), static_cast<uid_t>(-1),
                   static_cast<gid_t>(*fs_group));
    struct stat sb {};
    if (::stat(p.c_str(), &sb) == 0)
      ::chmod(p.c_str(),
              (sb.st_mode & 07777) | (is_dir ? (S_ISGID | 0050) : 0040));
  };
  ::chmod(ts_dir.c_str(), 0755);
  own(ts_dir, true);
  for (const auto& [path, entry] : files) {
    auto target = ts_dir / path;
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      return "cannot create " + target.parent_path().string() + ": "
             + ec.message();
    {
      std::ofstream out(target, std::ios::binary | std::ios::trunc);
      out << entry.data;
      if (!out)
        return "cannot write " + target.string();
    }
    ::chmod(target.c_str(), entry.mode & 07777);
    own(target, false);
    for (auto p = target.parent_path(); p != ts_dir; p = p.parent_path())
      own(p, true);
  }
  auto tmp_link = dir / "..data_tmp";
  fs::remove(tmp_link, ec);
  fs::create_symlink(folder, tmp_link, ec);
  if (ec)
    return "cannot link " + tmp_link.string() + ": " + ec.message();
  if (::rename(tmp_link.c_str(), data_link.c_str()) != 0)
    return "cannot rename " + tmp_link.string() + ": "
           + std::error_code(errno, std::generic_category()).message();
  // The user-visible names: one symlink per top-level component.
  std::set<std::string> top;
  for (const auto& [path, entry] : files)
    top.insert(fs::path(path).begin()->string());
  for (const auto& name : top) {
    auto link = dir / name;
    if (fs::is_symlink(link, ec))
      continue;
    fs::create_symlink(fs::path("..data") / name, link, ec);
    if (ec)
      return "cannot link " + link.string() + ": " + ec.message();
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (name.rfind("..", 0) == 0 || top.count(name))
      continue;
    if (fs::is_symlink(entry.symlink_status()))
      fs::remove(entry.path(), ec);
  }
  if (!old_folder.empty())
    fs::remove_all(dir / old_folder, ec);
  return std::nullopt;
}

std::string qos_class(const json& spec) {
  bool any = false;
  bool guaranteed = true;
  for (const char* list : {"containers", "initContainers"}) {
    const auto& cs = member(spec, list);
    if (!cs.is_array())
      continue;
    for (const auto& c : cs) {
      const auto& res = member(c, "resources");
      const auto& requests = member(res, "requests");
      const auto& limits = member(res, "limits");
      for (const char* r : {"cpu", "memory"}) {
        bool has_req = requests.is_object() && requests.contains(r);
        bool has_lim = limits.is_object() && limits.contains(r);
        any = any || has_req || has_lim;
        if (!has_lim || (has_req && requests[r] != limits[r]))
          guaranteed = false;
      }
    }
  }
  if (!any)
    return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

std::optional<std::int32_t> signal_number(const std::string& s) {
  std::string name = s;
  if (name.rfind("SIG", 0) == 0)
    name = name.substr(3);
  static const std::map<std::string, std::int32_t> names
      = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT},
         {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
         {"TERM", SIGTERM}, {"STOP", SIGSTOP}, {"CONT", SIGCONT},
         {"ABRT", SIGABRT}, {"ALRM", SIGALRM}};
  if (auto it = names.find(name); it != names.end())
    return it->second;
  if (!name.empty()
      && std::all_of(
          name.begin(), name.end(),
          [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })
      && name.size() < 3) {
    auto n = std::stoi(name);
    if (n >= 1 && n <= 64)
      return n;
  }
  return std::nullopt;
}

} // namespace aiperf::k8s::sim::kubelet::detail
