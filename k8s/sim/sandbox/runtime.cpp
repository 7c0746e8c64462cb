// The runtime actor: kubelet's CRI over the cluster init. It runs detached
// (a thread of its own): each request is one round trip to init over the
// control channel, milliseconds of namespace and mount work, so waiting for
// it blocks no CAF worker. Probes, which may take their whole timeout, run
// on a detached actor each and are delegated to it.
#include "k8s/sim/sandbox/detail.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

namespace aiperf::k8s::sim::sandbox {

namespace {

namespace fs = std::filesystem;

/// How long a request waits for init's answer; past it the request fails
/// with errc::timeout (init is stuck on a step: a container whose setup
/// blocks, a process that does not die) and later answers are dropped.
constexpr auto call_timeout = std::chrono::seconds{30};

/// The runtime's own interface: the public one, plus the exits the control
/// channel's reader forwards (same shape as the sink's message).
using runtime_impl_actor = runtime_actor::extend<caf::reacts_to<
    exited_atom, std::string, std::string, std::int32_t, std::int32_t>>;

/// One probe's actor: `(probe_atom, http_probe)` -> HTTP status, or
/// errc::probe_failed naming the connect or answer that failed; it quits
/// after answering. The runtime delegates the kubelet's request to it, so
/// the kubelet's own request timeout bounds the wait, and the probe's
/// timeout_ms bounds the work.
using probe_worker_actor = caf::typed_actor<
    caf::replies_to<probe_atom, http_probe>::with<std::int32_t>>;

struct sandbox_entry {
  sandbox_info info;
  std::uint32_t slot = 0;
  std::string veth;
  std::string hostname;
};

struct runtime_state {
  runtime_state() = default;

  std::shared_ptr<detail::cluster_impl> cluster;
  std::map<std::string, sandbox_entry> sandboxes;
  std::set<std::uint32_t> used_slots;
  std::set<std::string> used_veths;
  exit_sink_actor sink;
  static inline const char* name = "k8s_sim_sandbox_runtime";
};

using runtime_ptr = runtime_impl_actor::stateful_pointer<runtime_state>;

probe_worker_actor::behavior_type probe_worker(probe_worker_actor::pointer self,
                                               std::shared_ptr<cluster> c) {
  return {
      [self, c](probe_atom, const http_probe& p) -> caf::result<std::int32_t> {
        auto r = detail::run_probe(*c, p);
        self->quit();
        if (!r)
          return std::move(r.error());
        return *r;
      },
  };
}

fs::path pod_dir(const runtime_state& st, const std::string& id) {
  return fs::path{st.cluster->options().work_dir} / "pods" / id;
}

bool safe_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".."
         && s.find('/') == std::string::npos;
}

caf::error write_file(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::binary | std::ios::trunc};
  out << text;
  out.close();
  if (!out)
    return make_error(errc::io_failed, "cannot write " + p.string());
  return {};
}

// veth + up to 8 characters of the pod uid (interface names hold 15); a
// name from the slot number when that one is taken.
std::string veth_name(const runtime_state& st, const std::string& id,
                      std::uint32_t slot) {
  std::string name = "veth";
  for (char ch : id) {
    if (name.size() == 12)
      break;
    if (std::isalnum(static_cast<unsigned char>(ch)))
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  for (auto n = slot; name.size() == 4 || st.used_veths.count(name) != 0; ++n)
    name = "vethslot" + std::to_string(n);
  return name;
}

std::string netns_of(std::int32_t pid) {
  std::error_code ec;
  auto link = fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec);
  return ec ? std::string{} : link.string();
}

caf::expected<sandbox_info> create(runtime_ptr self, const sandbox_spec& spec) {
  auto& st = self->state;
  if (auto i = st.sandboxes.find(spec.id); i != st.sandboxes.end())
    return i->second.info;
  if (!safe_name(spec.id))
    return make_error(errc::bad_options,
                      "sandbox id \"" + spec.id
                          + "\" is not usable as a folder name; give the "
                            "pod's uid");
  if (spec.hostname.empty() || spec.hostname.size() > 64)
    return make_error(errc::bad_options,
                      "sandbox " + spec.id + ": hostname \"" + spec.hostname
                          + "\" must have 1 to 64 characters");
  const auto& net = st.cluster->net();
  std::uint32_t slot = 0;
  while (st.used_slots.count(slot) != 0)
    ++slot;
  if (slot >= net.pod_slots())
    return make_error(errc::address_exhausted,
                      "every address of the pod CIDR " + st.cluster->cidr()
                          + " is in use (" + std::to_string(net.pod_slots())
                          + " pods); remove sandboxes or give a larger "
                            "--pod-cidr");
  auto dir = pod_dir(st, spec.id);
  std::error_code ec;
  fs::create_directories(dir / "containers", ec);
  if (ec)
    return make_error(errc::io_failed,
                      "cannot create " + dir.string() + ": " + ec.message());
  if (auto err = write_file(dir / "hosts", spec.hosts_file))
    return err;
  if (auto err = write_file(dir / "resolv.conf", spec.resolv_conf))
    return err;
  auto ip = detail::format_ipv4(net.pod_address(slot));
  auto veth = veth_name(st, spec.id, slot);
  json req{{"op", "create"},
           {"id", spec.id},
           {"hostname", spec.hostname},
           {"ip", ip},
           {"prefix", net.prefix},
           {"gateway", st.cluster->gateway()},
           {"veth", veth}};
  auto r = st.cluster->call(std::move(req), call_timeout);
  if (!r) {
    detail::remove_pod_files(dir.string());
    return std::move(r.error());
  }
  sandbox_entry e;
  e.slot = slot;
  e.veth = veth;
  e.hostname = spec.hostname;
  e.info.id = spec.id;
  e.info.ip = ip;
  e.info.pid = r->pid;
  e.info.netns = netns_of(r->pid);
  st.used_slots.insert(slot);
  st.used_veths.insert(veth);
  auto info = e.info;
  st.sandboxes.emplace(spec.id, std::move(e));
  return info;
}

// The container's environment: the spec's, plus what a container runtime
// adds when the image or the spec does not say (Docker's default PATH,
// HOSTNAME, and HOME as runc derives it for a user without a passwd entry).
std::vector<std::string> env_of(const container_spec& spec,
                                const std::string& hostname) {
  auto env = spec.env;
  auto has = [&](const std::string& key) {
    for (const auto& e : env)
      if (e.size() > key.size() && e.compare(0, key.size(), key) == 0
          && e[key.size()] == '=')
        return true;
    return false;
  };
  if (!has("PATH"))
    env.push_back(
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  if (!has("HOSTNAME"))
    env.push_back("HOSTNAME=" + hostname);
  if (!has("HOME"))
    env.push_back(spec.uid == 0 ? "HOME=/root" : "HOME=/");
  return env;
}

caf::expected<std::int32_t> start(runtime_ptr self, const std::string& id,
                                  const container_spec& spec) {
  auto& st = self->state;
  auto sb = st.sandboxes.find(id);
  if (sb == st.sandboxes.end())
    return make_error(errc::unknown_sandbox,
                      "no sandbox " + id
                          + " on this node; create the pod sandbox first");
  if (!safe_name(spec.name))
    return make_error(errc::bad_options,
                      "container name \"" + spec.name + "\" is not usable");
  if (spec.argv.empty() || spec.argv.front().empty()
      || spec.argv.front().front() != '/')
    return make_error(
        errc::start_failed,
        "container " + spec.name
            + ": argv[0] must be the absolute path of an "
              "executable, got \""
            + (spec.argv.empty() ? std::string{} : spec.argv.front()) + "\"");
  for (const auto& m : spec.mounts) {
    std::error_code ec;
    if (!fs::exists(m.source, ec))
      return make_error(errc::mount_source_missing,
                        "mount source " + m.source + " for " + m.target
                            + " of container " + spec.name + " does not exist");
    if (m.target.empty() || m.target.front() != '/'
        || m.target.find("..") != std::string::npos)
      return make_error(errc::bad_options, "mount target \"" + m.target
                                               + "\" of container " + spec.name
                                               + " must be an absolute path");
  }
  if (spec.log_path.empty())
    return make_error(errc::bad_options,
                      "container " + spec.name + " has no log_path");
  auto dir = pod_dir(st, id) / "containers" / spec.name;
  std::error_code ec;
  fs::create_directories(dir / "root", ec);
  fs::create_directories(dir / "layers", ec);
  fs::create_directories(fs::path{spec.log_path}.parent_path(), ec);
  json mounts = json::array();
  for (const auto& m : spec.mounts)
    mounts.push_back(json{{"source", m.source},
                          {"target", m.target},
                          {"read_only", m.read_only}});
  json req{{"op", "start"},
           {"id", id},
           {"name", spec.name},
           {"root", (dir / "root").string()},
           {"layers", (dir / "layers").string()},
           {"hosts", (pod_dir(st, id) / "hosts").string()},
           {"resolv", (pod_dir(st, id) / "resolv.conf").string()},
           {"argv", spec.argv},
           {"env", env_of(spec, sb->second.hostname)},
           {"working_dir", spec.working_dir},
           {"uid", spec.uid},
           {"gid", spec.gid},
           {"groups", spec.groups},
           {"read_only_root", spec.read_only_root},
           {"drop_all_capabilities", spec.drop_all_capabilities},
           {"no_new_privileges", spec.no_new_privileges},
           {"mounts", std::move(mounts)},
           {"log", spec.log_path}};
  auto r = st.cluster->call(std::move(req), call_timeout);
  if (!r)
    return std::move(r.error());
  return r->pid;
}

caf::expected<void> remove(runtime_ptr self, const std::string& id) {
  auto& st = self->state;
  auto i = st.sandboxes.find(id);
  if (i == st.sandboxes.end())
    return caf::unit;
  auto r = st.cluster->call(json{{"op", "remove"}, {"id", id}}, call_timeout);
  if (!r)
    return std::move(r.error());
  st.used_slots.erase(i->second.slot);
  st.used_veths.erase(i->second.veth);
  st.sandboxes.erase(i);
  std::error_code ec;
  detail::remove_pod_files(pod_dir(st, id).string());
  return caf::unit;
}

runtime_impl_actor::behavior_type runtime_fn(runtime_ptr self,
                                             std::shared_ptr<cluster> c) {
  self->state.cluster = std::dynamic_pointer_cast<detail::cluster_impl>(c);
  // Every request but subscribe needs the cluster that cluster::start made.
  auto no_cluster = [self] {
    return self->state.cluster
               ? caf::error{}
               : make_error(errc::bad_options,
                            "the runtime was spawned without a cluster from "
                            "cluster::start");
  };
  return {
      [self, no_cluster](create_sandbox_atom, const sandbox_spec& spec)
          -> caf::result<sandbox_info> {
        if (auto err = no_cluster())
          return err;
        auto r = create(self, spec);
        if (!r)
          return std::move(r.error());
        return std::move(*r);
      },
      [self,
       no_cluster](start_container_atom, const std::string& id,
                   const container_spec& spec) -> caf::result<std::int32_t> {
        if (auto err = no_cluster())
          return err;
        auto r = start(self, id, spec);
        if (!r)
          return std::move(r.error());
        return *r;
      },
      [self](signal_atom, const std::string& id, const std::string& name,
             std::int32_t sig) -> caf::result<void> {
        if (self->state.sandboxes.count(id) == 0)
          return caf::unit;
        auto r = self->state.cluster->call(
            json{{"op", "signal"}, {"id", id}, {"name", name}, {"signal", sig}},
            call_timeout);
        if (!r)
          return std::move(r.error());
        return caf::unit;
      },
      [self](remove_sandbox_atom, const std::string& id) -> caf::result<void> {
        auto r = remove(self, id);
        if (!r)
          return std::move(r.error());
        return caf::unit;
      },
      [self, no_cluster](probe_atom,
                         http_probe& p) -> caf::result<std::int32_t> {
        if (auto err = no_cluster())
          return err;
        auto worker = self->spawn<caf::detached>(
            probe_worker, std::shared_ptr<cluster>{self->state.cluster});
        return self->delegate(worker, probe_atom::value, std::move(p));
      },
      [self](link_atom, const std::string& id, bool up) -> caf::result<void> {
        if (self->state.sandboxes.count(id) == 0)
          return make_error(errc::unknown_sandbox,
                            "no sandbox " + id + " on this node");
        auto r = self->state.cluster->call(
            json{{"op", "link"}, {"id", id}, {"up", up}}, call_timeout);
        if (!r)
          return std::move(r.error());
        return caf::unit;
      },
      [self](subscribe_atom, exit_sink_actor sink) -> caf::result<void> {
        self->state.sink = std::move(sink);
        return caf::unit;
      },
      [self](exited_atom, std::string& id, std::string& name, std::int32_t pid,
             std::int32_t code) {
        if (self->state.sink)
          self->send(self->state.sink, exited_atom::value, std::move(id),
                     std::move(name), pid, code);
      },
  };
}

} // namespace

runtime_actor spawn_runtime(caf::actor_system& sys,
                            std::shared_ptr<cluster> c) {
  auto impl = std::dynamic_pointer_cast<detail::cluster_impl>(c);
  auto self = sys.spawn<caf::detached>(runtime_fn, c);
  if (impl) {
    // Weak: the cluster outlives no runtime on its account.
    auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
    impl->on_event([weak](const json& ev, std::int32_t pid) {
      if (ev.value("event", "") != "exited")
        return;
      if (auto strong = weak.lock())
        caf::anon_send(caf::actor_cast<runtime_impl_actor>(strong),
                       exited_atom::value, ev.value("id", ""),
                       ev.value("name", ""), pid, ev.value("code", 0));
    });
  }
  return self;
}

} // namespace aiperf::k8s::sim::sandbox
