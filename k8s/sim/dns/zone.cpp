#include "k8s/sim/dns/zone.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace aiperf::k8s::sim::dns {

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < name.size()) {
    auto dot = name.find('.', start);
    if (dot == std::string::npos)
      dot = name.size();
    if (dot > start)
      out.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
  return out;
}

std::string text(const json& obj, const char* a, const char* b = nullptr) {
  if (!obj.is_object() || !obj.contains(a))
    return {};
  const json* v = &obj[a];
  if (b != nullptr) {
    if (!v->is_object() || !v->contains(b))
      return {};
    v = &(*v)[b];
  }
  return v->is_string() ? v->get<std::string>() : std::string{};
}

std::uint16_t port_number(const json& p) {
  if (!p.contains("port") || !p["port"].is_number_integer())
    return 0;
  auto n = p["port"].get<std::int64_t>();
  return n > 0 && n < 65536 ? static_cast<std::uint16_t>(n) : 0;
}

std::vector<port_info> ports_of(const json& obj) {
  std::vector<port_info> out;
  if (!obj.is_object() || !obj.contains("ports") || !obj["ports"].is_array())
    return out;
  for (const auto& p : obj["ports"]) {
    if (!p.is_object())
      continue;
    port_info info;
    if (p.contains("name") && p["name"].is_string())
      info.name = p["name"].get<std::string>();
    info.protocol = p.contains("protocol") && p["protocol"].is_string()
                        ? p["protocol"].get<std::string>()
                        : "TCP";
    info.port = port_number(p);
    out.push_back(std::move(info));
  }
  return out;
}

// CoreDNS's endpointHostname: the hostname, else the address with dashes.
std::string endpoint_name(const endpoint_info& e) {
  if (!e.hostname.empty())
    return lower(e.hostname);
  auto name = e.ip;
  std::replace(name.begin(), name.end(), '.', '-');
  return name;
}

bool ends_with(const std::vector<std::string>& labels,
               const std::vector<std::string>& suffix) {
  if (labels.size() < suffix.size())
    return false;
  return std::equal(suffix.begin(), suffix.end(),
                    labels.end() - static_cast<long>(suffix.size()));
}

// What a name holds.
struct node {
  bool exists = false;
  std::vector<std::string> a; // addresses
  std::string cname;
  std::string ptr;
  std::vector<record> srv;
  std::vector<record> extra; // additional section
  bool apex = false;         // the zone's own name: SOA
};

void add_unique(std::vector<std::string>& out, const std::string& ip) {
  if (std::find(out.begin(), out.end(), ip) == out.end())
    out.push_back(ip);
}

std::string protocol_label(const std::string& protocol) {
  return "_" + lower(protocol);
}

node service_node(const zone& z, const std::vector<std::string>& rest,
                  const std::string& owner) {
  // rest: the labels before "svc.<domain>", lower case.
  node n;
  const auto& cfg = z.config;
  if (rest.empty()) {
    n.exists = true;
    return n;
  }
  const auto& ns = rest.back();
  if (rest.size() == 1) {
    auto prefix = ns + "/";
    auto it = z.services.lower_bound(prefix);
    n.exists = it != z.services.end()
               && it->first.compare(0, prefix.size(), prefix) == 0;
    return n;
  }
  const auto& svc_name = rest[rest.size() - 2];
  auto it = z.services.find(ns + "/" + svc_name);
  bool api
      = ns == "default" && svc_name == "kubernetes" && !cfg.api_server.empty();
  if (rest.size() == 2) {
    if (api) {
      n.exists = true;
      n.a.push_back(cfg.api_server);
      return n;
    }
    if (it == z.services.end())
      return n;
    const auto& s = it->second;
    if (s.type == "ExternalName") {
      n.exists = !s.external_name.empty();
      n.cname = s.external_name;
      return n;
    }
    for (const auto& e : s.endpoints)
      add_unique(n.a, e.ip);
    // A headless Service without endpoints has no records at all.
    n.exists = !s.headless || !n.a.empty();
    return n;
  }
  if (it == z.services.end())
    return n;
  const auto& s = it->second;
  auto base = svc_name + "." + ns + ".svc." + cfg.domain;
  if (rest.size() == 3) {
    const auto& label = rest[0];
    if (label.empty() || label[0] == '_') {
      // `_tcp.<svc>...` : an empty non-terminal when some port has it.
      for (const auto& p : s.ports)
        n.exists = n.exists || protocol_label(p.protocol) == label;
      return n;
    }
    for (const auto& e : s.endpoints)
      if (endpoint_name(e) == label) {
        n.exists = true;
        add_unique(n.a, e.ip);
      }
    return n;
  }
  if (rest.size() != 4)
    return n;
  const auto& port_label = rest[0];
  const auto& proto_label = rest[1];
  if (port_label.size() < 2 || port_label[0] != '_' || proto_label.size() < 2
      || proto_label[0] != '_')
    return n;
  auto port_name = port_label.substr(1);
  auto matches = [&](const port_info& p) {
    return lower(p.name) == port_name
           && protocol_label(p.protocol) == proto_label;
  };
  if (s.headless) {
    std::vector<std::pair<const endpoint_info*, std::uint16_t>> targets;
    for (const auto& e : s.endpoints)
      for (const auto& p : e.ports)
        if (matches(p))
          targets.emplace_back(&e, p.port);
    if (targets.empty())
      return n;
    n.exists = true;
    auto weight = static_cast<std::uint16_t>(
        std::max<std::size_t>(1, 100 / targets.size()));
    for (const auto& [e, port] : targets) {
      auto target = endpoint_name(*e) + "." + base;
      n.srv.push_back(srv_record(owner, cfg.ttl, 0, weight, port, target));
      if (auto a = a_record(target, e->ip, cfg.ttl))
        n.extra.push_back(std::move(*a));
    }
    return n;
  }
  for (const auto& p : s.ports)
    if (matches(p)) {
      n.exists = true;
      n.srv.push_back(srv_record(owner, cfg.ttl, 0, 100, p.port, base));
    }
  if (!n.srv.empty()) {
    std::vector<std::string> ips;
    for (const auto& e : s.endpoints)
      add_unique(ips, e.ip);
    for (const auto& ip : ips)
      if (auto a = a_record(base, ip, cfg.ttl))
        n.extra.push_back(std::move(*a));
  }
  return n;
}

node pod_node(const std::vector<std::string>& rest) {
  // rest: the labels before "pod.<domain>".
  node n;
  if (rest.size() < 2) {
    n.exists = true;
    return n;
  }
  if (rest.size() != 2)
    return n;
  auto ip = rest[0];
  std::replace(ip.begin(), ip.end(), '-', '.');
  if (a_record("x", ip, 0)) {
    n.exists = true;
    n.a.push_back(ip);
  }
  return n;
}

node reverse_node(const zone& z, const std::vector<std::string>& rest) {
  // rest: the labels before "in-addr.arpa", lower case.
  node n;
  if (rest.size() < 4) {
    n.exists = true; // an empty non-terminal of the reverse tree
    return n;
  }
  if (rest.size() != 4)
    return n;
  auto ip = rest[3] + "." + rest[2] + "." + rest[1] + "." + rest[0];
  for (const auto& [key, s] : z.services) {
    auto slash = key.find('/');
    for (const auto& e : s.endpoints)
      if (e.ip == ip) {
        n.exists = true;
        n.ptr = endpoint_name(e) + "." + key.substr(slash + 1) + "."
                + key.substr(0, slash) + ".svc." + z.config.domain;
        return n;
      }
  }
  return n;
}

record soa_of(const zone& z, const std::string& apex) {
  auto ttl = std::min<std::uint32_t>(z.config.ttl, 300);
  return soa_record(apex, ttl, "ns.dns." + apex, "hostmaster." + apex, z.serial,
                    7200, 1800, 86400, z.config.ttl);
}

} // namespace

zone build_zone(const zone_config& cfg,
                const std::map<std::string, json>& services,
                const std::map<std::string, json>& slices, std::uint32_t serial,
                const std::map<std::string, json>& endpoints) {
  zone z;
  z.config = cfg;
  z.config.domain = lower(cfg.domain);
  z.serial = serial;
  // One object of an unexpected shape (a field of another type makes
  // nlohmann's accessors throw) is left out, not the whole zone.
  for (const auto& [key, svc] : services)
    try {
      service_info info;
      auto type = text(svc, "spec", "type");
      if (!type.empty())
        info.type = type;
      info.headless = text(svc, "spec", "clusterIP") == "None";
      info.external_name = text(svc, "spec", "externalName");
      if (svc.contains("spec"))
        info.ports = ports_of(svc["spec"]);
      z.services[lower(key)] = std::move(info);
    } catch (const json::exception&) {
    }
  std::set<std::string> sliced; // Services some slice names
  for (const auto& [key, slice] : slices)
    try {
      if (!slice.is_object() || !slice.contains("metadata"))
        continue;
      const auto& meta = slice["metadata"];
      std::string svc;
      if (meta.contains("labels") && meta["labels"].is_object())
        svc = meta["labels"].value("kubernetes.io/service-name", "");
      auto ns = meta.value("namespace", "");
      auto it = z.services.find(lower(ns + "/" + svc));
      if (svc.empty() || it == z.services.end())
        continue;
      if (slice.value("addressType", "") != "IPv4")
        continue;
      sliced.insert(it->first);
      auto ports = ports_of(slice);
      if (!slice.contains("endpoints") || !slice["endpoints"].is_array())
        continue;
      for (const auto& ep : slice["endpoints"]) {
        if (!ep.is_object())
          continue;
        if (ep.contains("conditions") && ep["conditions"].is_object()
            && ep["conditions"].contains("ready")
            && ep["conditions"]["ready"] == json(false))
          continue;
        if (!ep.contains("addresses") || !ep["addresses"].is_array())
          continue;
        for (const auto& address : ep["addresses"]) {
          if (!address.is_string())
            continue;
          endpoint_info e;
          e.ip = address.get<std::string>();
          if (ep.contains("hostname") && ep["hostname"].is_string())
            e.hostname = ep["hostname"].get<std::string>();
          e.ports = ports;
          it->second.endpoints.push_back(std::move(e));
        }
      }
    } catch (const json::exception&) {
    }
  for (const auto& [key, ep] : endpoints)
    try {
      auto it = z.services.find(lower(key));
      if (it == z.services.end() || sliced.count(it->first) || !ep.is_object()
          || !ep.contains("subsets") || !ep["subsets"].is_array())
        continue;
      for (const auto& subset : ep["subsets"]) {
        if (!subset.is_object() || !subset.contains("addresses")
            || !subset["addresses"].is_array())
          continue;
        auto ports = ports_of(subset);
        for (const auto& address : subset["addresses"]) {
          auto ip = text(address, "ip");
          if (ip.empty())
            continue;
          endpoint_info e;
          e.ip = ip;
          e.hostname = text(address, "hostname");
          e.ports = ports;
          it->second.endpoints.push_back(std::move(e));
        }
      }
    } catch (const json::exception&) {
    }
  for (auto& [key, s] : z.services)
    std::sort(s.endpoints.begin(), s.endpoints.end(),
              [](const endpoint_info& a, const endpoint_info& b) {
                return a.ip < b.ip;
              });
  return z;
}

answer lookup(const zone& z, const question& q) {
  answer out;
  if (q.qclass != class_in && q.qclass != class_any) {
    out.code = rcode::refused;
    out.authoritative = false;
    return out;
  }
  if (q.qtype == type::axfr || q.qtype == type::ixfr) {
    out.code = rcode::refused; // no zone transfers
    out.authoritative = false;
    return out;
  }
  std::vector<std::string> labels;
  for (const auto& l : q.labels)
    labels.push_back(lower(l));
  auto owner = q.name();
  auto domain = split(z.config.domain);
  const std::vector<std::string> reverse = {"in-addr", "arpa"};
  node n;
  std::string apex;
  if (!domain.empty() && ends_with(labels, domain)) {
    apex = z.config.domain;
    std::vector<std::string> rest(
        labels.begin(), labels.end() - static_cast<long>(domain.size()));
    if (rest.empty()) {
      n.exists = true;
      n.apex = true;
    } else if (rest.back() == "svc") {
      rest.pop_back();
      n = service_node(z, rest, owner);
    } else if (rest.back() == "pod") {
      rest.pop_back();
      n = pod_node(rest);
    }
  } else if (ends_with(labels, reverse)) {
    apex = "in-addr.arpa";
    std::vector<std::string> rest(labels.begin(), labels.end() - 2);
    n = reverse_node(z, rest);
    n.apex = rest.empty();
  } else {
    out.code = rcode::refused;
    out.authoritative = false;
    return out;
  }
  if (!n.exists) {
    out.code = rcode::nxdomain;
    out.authority.push_back(soa_of(z, apex));
    return out;
  }
  const auto t = q.qtype;
  if (!n.cname.empty()) {
    out.answers.push_back(
        name_record(owner, type::cname, z.config.ttl, n.cname));
    return out;
  }
  if (t == type::a || t == type::any)
    for (const auto& ip : n.a)
      if (auto a = a_record(owner, ip, z.config.ttl))
        out.answers.push_back(std::move(*a));
  if (t == type::srv || t == type::any) {
    out.answers.insert(out.answers.end(), n.srv.begin(), n.srv.end());
    out.additional = n.extra;
  }
  if ((t == type::ptr || t == type::any) && !n.ptr.empty())
    out.answers.push_back(name_record(owner, type::ptr, z.config.ttl, n.ptr));
  if ((t == type::soa || t == type::any) && n.apex) {
    auto soa = soa_of(z, apex);
    soa.name = owner;
    out.answers.push_back(std::move(soa));
  }
  if (out.answers.empty())
    out.authority.push_back(soa_of(z, apex));
  return out;
}

} // namespace aiperf::k8s::sim::dns
