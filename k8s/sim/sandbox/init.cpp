// The cluster's init: PID 1 of the cluster's PID namespace, in the cluster's
// network and mount namespaces. It is single-threaded (a fresh exec), so it
// forks freely: the holders (one per pod), the containers, and the `ip`
// commands that wire the network. Being PID 1 it inherits every orphan of the
// cluster and reaps it; when it ends, the kernel kills every process of its
// PID namespace, which is what makes the cluster vanish with the simulator.
//
// Where a container here differs from one on a real node:
// - it shares the cluster's PID namespace (as with shareProcessNamespace):
//   it sees every pod's processes, and it is not PID 1, so a signal it does
//   not handle ends it (on a node, PID 1 of a container ignores those);
//   when its main process ends, the rest of its processes are killed;
// - no cgroups: no CPU or memory limits, no OOM kills;
// - no seccomp or AppArmor profile, no user namespace;
// - /dev holds null, zero, full, random, urandom, tty and shm only (no
//   /dev/pts); the system folders are the host's, under a writable layer.
#include "k8s/sim/sandbox/detail.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <map>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace aiperf::k8s::sim::sandbox {

namespace {

constexpr std::size_t max_packet = 1 << 20;

struct container_rec {
  std::string id;
  std::string name;
  ino_t mnt_ns = 0;
  // Held open until the container's end is handled: a namespace's inode
  // number is reused once the namespace is freed, and a container started
  // meanwhile must not pass for one of the dead container's processes.
  int mnt_fd = -1;
};

struct sandbox_rec {
  pid_t holder = 0;
  ino_t net_ns = 0;
  std::string veth;
  std::map<std::string, pid_t> containers;
};

struct init_state {
  int ctrl = -1;
  std::string ip;
  std::string setup_error;
  std::map<std::string, sandbox_rec> sandboxes;
  std::map<pid_t, container_rec> containers;
};

// containerd's and Docker's default capabilities: CHOWN, DAC_OVERRIDE,
// FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE, NET_RAW,
// SYS_CHROOT, MKNOD, AUDIT_WRITE, SETFCAP (CapBnd 00000000a80425fb).
constexpr std::uint64_t default_capabilities = 0xa80425fbULL;

std::string errno_text() {
  return std::strerror(errno);
}

void close_from(unsigned first) {
  ::syscall(SYS_close_range, first, ~0U, 0U);
}

void default_signals() {
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP)
      ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Sends one packet; `pid` > 0 attaches it as SCM_CREDENTIALS so that the
// receiver reads it in its own PID namespace.
void send_packet(int fd, json doc, pid_t pid) {
  if (pid > 0)
    doc["pid"] = pid;
  auto text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  iovec iov{text.data(), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
  if (pid > 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    auto* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof(ucred));
    ucred cred{pid, ::getuid(), ::getgid()};
    std::memcpy(CMSG_DATA(c), &cred, sizeof cred);
  }
  if (::sendmsg(fd, &msg, MSG_NOSIGNAL) < 0 && pid > 0) {
    // The process is gone (reaped): say so rather than name the wrong one.
    doc.erase("pid");
    send_packet(fd, std::move(doc), 0);
  }
}

json ok_reply() {
  return json{{"ok", true}};
}

json error_reply(errc code, std::string message) {
  return json{{"ok", false}, {"code", to_string(code)}, {"error", message}};
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// Runs the `ip` command `args` (in the network namespace of `netns_of` when
// it is > 0); "" on success, else the command and what it said.
std::string run_ip(const init_state& st, const std::vector<std::string>& args,
                   pid_t netns_of = 0) {
  std::vector<std::string> full{st.ip};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : full)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string joined = "ip";
  for (const auto& a : args)
    joined += " " + a;
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0)
    return joined + ": pipe: " + errno_text();
  auto pid = ::fork();
  if (pid < 0) {
    ::close(err[0]);
    ::close(err[1]);
    return joined + ": fork: " + errno_text();
  }
  if (pid == 0) {
    if (netns_of > 0) {
      auto path = "/proc/" + std::to_string(netns_of) + "/ns/net";
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0)
        ::_exit(126);
    }
    ::dup2(err[1], 1);
    ::dup2(err[1], 2);
    default_signals();
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(err[1]);
  auto said = trim(read_all(err[0]));
  ::close(err[0]);
  int status = wait_exit(pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return {};
  if (said.empty())
    said = WIFEXITED(status)
               ? "exit " + std::to_string(WEXITSTATUS(status))
               : "killed by signal " + std::to_string(WTERMSIG(status));
  return joined + ": " + said;
}

ino_t ns_inode(pid_t pid, const char* ns) {
  struct stat sb {};
  auto path = "/proc/" + std::to_string(pid) + "/ns/" + ns;
  if (::stat(path.c_str(), &sb) != 0)
    return 0;
  return sb.st_ino;
}

// SIGKILLs every process (but init) whose `ns` namespace is `ino`: what a
// real runtime's cgroup kill does for a pod or container.
void kill_ns_members(const char* ns, ino_t ino) {
  if (ino == 0)
    return;
  DIR* d = ::opendir("/proc");
  if (d == nullptr)
    return;
  while (auto* e = ::readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 1)
      continue;
    if (ns_inode(static_cast<pid_t>(pid), ns) == ino)
      ::kill(static_cast<pid_t>(pid), SIGKILL);
  }
  ::closedir(d);
}

int exit_code_of(const siginfo_t& si) {
  return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

// A container's end: the event (while the zombie still exists, so its pid
// can be named), the end of what it left running, then the reaping.
void finish_container(init_state& st, pid_t pid, int code) {
  auto i = st.containers.find(pid);
  if (i == st.containers.end())
    return;
  auto rec = std::move(i->second);
  st.containers.erase(i);
  json ev{
      {"event", "exited"}, {"id", rec.id}, {"name", rec.name}, {"code", code}};
  send_packet(st.ctrl, std::move(ev), pid);
  kill_ns_members("mnt", rec.mnt_ns);
  if (rec.mnt_fd >= 0)
    ::close(rec.mnt_fd);
  if (auto s = st.sandboxes.find(rec.id); s != st.sandboxes.end()) {
    auto c = s->second.containers.find(rec.name);
    if (c != s->second.containers.end() && c->second == pid)
      s->second.containers.erase(c);
  }
}

void reap(init_state& st) {
  for (;;) {
    siginfo_t si{};
    if (::waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0
        || si.si_pid == 0)
      return;
    pid_t pid = si.si_pid;
    finish_container(st, pid, exit_code_of(si));
    for (auto& [id, sb] : st.sandboxes)
      if (sb.holder == pid)
        sb.holder = 0;
    ::waitpid(pid, nullptr, WNOHANG);
  }
}

// --- setup and create ------------------------------------------------------

json op_setup(init_state& st, const json& req) {
  if (!st.setup_error.empty())
    return error_reply(errc::init_failed, st.setup_error);
  if (st.ip.empty())
    return error_reply(errc::ip_missing,
                       "the cluster init finds no `ip` command; install "
                       "iproute2");
  auto addr
      = req.value("gateway", "") + "/" + std::to_string(req.value("prefix", 0));
  for (auto args : std::vector<std::vector<std::string>>{
           {"link", "set", "lo", "up"},
           {"link", "add", "aiperf0", "type", "bridge"},
           {"addr", "add", addr, "dev", "aiperf0"},
           {"link", "set", "aiperf0", "up"}}) {
    if (auto err = run_ip(st, args); !err.empty())
      return error_reply(errc::network_failed, "the cluster's bridge: " + err);
  }
  return ok_reply();
}

// The holder: the sandbox's namespaces live as long as it does. It reports
// "OK" or the failing step on `report`, then waits for its SIGKILL.
[[noreturn]] void holder_main(int report, const std::string& hostname) {
  auto fail = [&](const std::string& what) {
    auto m = what + ": " + errno_text();
    (void)!::write(report, m.data(), m.size());
    ::_exit(1);
  };
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::setsid();
  if (::unshare(CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC) != 0)
    fail("unshare network, UTS and IPC namespaces");
  if (::sethostname(hostname.data(), hostname.size()) != 0)
    fail("sethostname " + hostname);
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (s < 0 || ::ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
    fail("read the flags of lo");
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
    fail("set lo up");
  ::close(s);
  (void)!::write(report, "OK", 2);
  close_from(0);
  ::prctl(PR_SET_NAME, "pause");
  default_signals();
  for (;;)
    ::pause();
}

// 02:42 and the four bytes of the IPv4 address `ip`.
std::string mac_of(const std::string& ip) {
  unsigned b[4] = {};
  std::sscanf(ip.c_str(), "%u.%u.%u.%u", &b[0], &b[1], &b[2], &b[3]);
  char out[18];
  std::snprintf(out, sizeof out, "02:42:%02x:%02x:%02x:%02x", b[0] & 0xff,
                b[1] & 0xff, b[2] & 0xff, b[3] & 0xff);
  return out;
}

std::pair<json, pid_t> op_create(init_state& st, const json& req) {
  auto id = req.value("id", "");
  auto hostname = req.value("hostname", "");
  auto veth = req.value("veth", "");
  if (st.sandboxes.count(id) != 0)
    return {error_reply(errc::bad_options, "sandbox " + id + " exists"), 0};
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    return {error_reply(errc::network_failed, "pipe: " + errno_text()), 0};
  auto pid = ::fork();
  if (pid < 0) {
    ::close(report[0]);
    ::close(report[1]);
    return {error_reply(errc::network_failed, "fork: " + errno_text()), 0};
  }
  if (pid == 0) {
    ::close(report[0]);
    holder_main(report[1], hostname);
  }
  ::close(report[1]);
  auto said = read_all(report[0]);
  ::close(report[0]);
  auto abandon = [&](const std::string& why) {
    ::kill(pid, SIGKILL);
    wait_exit(pid);
    return std::pair<json, pid_t>{
        error_reply(errc::network_failed, "sandbox " + id + ": " + why), 0};
  };
  if (said != "OK")
    return abandon(said.empty() ? "the holder process died" : said);
  auto ip = req.value("ip", "") + "/" + std::to_string(req.value("prefix", 0));
  auto pid_text = std::to_string(pid);
  // The pod's MAC follows from its address (as Docker's bridge does), so a
  // reused address keeps its MAC and no neighbour cache (the gateway's,
  // other pods') goes stale when a pod's address passes to a new pod.
  if (auto err
      = run_ip(st, {"link", "add", veth, "type", "veth", "peer", "name", "eth0",
                    "address", mac_of(req.value("ip", "")), "netns", pid_text});
      !err.empty())
    return abandon(err);
  std::vector<std::pair<std::vector<std::string>, pid_t>> steps{
      {{"link", "set", veth, "master", "aiperf0", "up"}, 0},
      {{"addr", "add", ip, "dev", "eth0"}, pid},
      {{"link", "set", "eth0", "up"}, pid},
      {{"route", "add", "default", "via", req.value("gateway", ""), "dev",
        "eth0"},
       pid}};
  for (const auto& [args, ns] : steps) {
    if (auto err = run_ip(st, args, ns); !err.empty()) {
      run_ip(st, {"link", "del", veth});
      return abandon(err);
    }
  }
  sandbox_rec rec;
  rec.holder = pid;
  rec.net_ns = ns_inode(pid, "net");
  rec.veth = veth;
  st.sandboxes.emplace(id, std::move(rec));
  return {ok_reply(), pid};
}

// --- containers ------------------------------------------------------------

void mkdir_p(const std::string& path, mode_t mode = 0755) {
  std::string cur;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (!cur.empty())
      ::mkdir(cur.c_str(), mode);
  }
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// Everything below runs in the forked child; a failure writes the step and
// errno to `report` and ends the child, and start answers with that text.
struct child_ctx {
  int report;
  [[noreturn]] void fail(const std::string& what) const {
    auto m = what + ": " + errno_text();
    (void)!::write(report, m.data(), m.size());
    ::_exit(127);
  }
  void check(int rc, const std::string& what) const {
    if (rc != 0)
      fail(what);
  }
};

void bind_mount(const child_ctx& c, const std::string& src,
                const std::string& dst, bool read_only,
                const std::string& what) {
  c.check(::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND | MS_REC, nullptr),
          what);
  if (read_only)
    c.check(::mount(nullptr, dst.c_str(), nullptr,
                    MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr),
            what + " read-only");
}

void make_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0)
    ::close(fd);
}

// Replaces the file at `path` (in a writable layer) by a bind of `src`.
void bind_file_over(const child_ctx& c, const std::string& src,
                    const std::string& path) {
  struct stat sb {};
  if (::lstat(path.c_str(), &sb) == 0 && !S_ISREG(sb.st_mode))
    ::unlink(path.c_str());
  make_file(path);
  bind_mount(c, src, path, false, "mount " + src + " at " + path);
}

// The first byte a container child writes once its mount namespace exists;
// it then waits for a byte on its `go` pipe, so that init can hold that
// namespace before the child may exec and exit.
constexpr char mount_ns_ready = '\x01';

[[noreturn]] void container_main(int report, int go, const json& req,
                                 pid_t holder) {
  child_ctx c{report};
  ::setsid();
  auto log = req.value("log", "");
  int logfd
      = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (logfd < 0)
    c.fail("open log " + log);
  int nullfd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (const char* ns : {"net", "uts", "ipc"}) {
    auto path = "/proc/" + std::to_string(holder) + "/ns/" + ns;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, 0) != 0)
      c.fail(std::string{"join the sandbox's "} + ns + " namespace");
    ::close(fd);
  }
  c.check(::unshare(CLONE_NEWNS), "unshare the mount namespace");
  c.check(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr),
          "make / private");
  (void)!::write(report, &mount_ns_ready, 1);
  char byte = 0;
  (void)!::read(go, &byte, 1);
  ::close(go);
  const auto root = req.value("root", "");
  const auto layers = req.value("layers", "");
  const bool ro_root = req.value("read_only_root", false);
  c.check(
      ::mount("tmpfs", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=755"),
      "mount the root tmpfs at " + root);
  c.check(::mount("tmpfs", layers.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                  "mode=700"),
          "mount the layers tmpfs at " + layers);
  // The host's system folders, each an overlay whose upper layer is a tmpfs:
  // the container may write (into its own layer) unless its root is
  // read-only, mount points can be made in them, and the host's files are
  // never touched.
  std::vector<std::string> overlays;
  for (const char* d :
       {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"}) {
    auto host = std::string{"/"} + d;
    auto inside = root + host;
    struct stat sb {};
    if (::lstat(host.c_str(), &sb) != 0)
      continue;
    if (S_ISLNK(sb.st_mode)) {
      char target[4096];
      auto n = ::readlink(host.c_str(), target, sizeof target - 1);
      if (n > 0) {
        target[n] = '\0';
        c.check(::symlink(target, inside.c_str()), "symlink " + inside);
      }
      continue;
    }
    if (!S_ISDIR(sb.st_mode))
      continue;
    ::mkdir(inside.c_str(), 0755);
    auto upper = layers + host + "/upper";
    auto work = layers + host + "/work";
    mkdir_p(upper);
    mkdir_p(work);
    auto opts = "lowerdir=" + host + ",upperdir=" + upper + ",workdir=" + work;
    if (::mount("overlay", inside.c_str(), "overlay", 0, opts.c_str()) == 0)
      overlays.push_back(host);
    else
      bind_mount(c, host, inside, true, "mount " + host);
  }
  bind_file_over(c, req.value("hosts", ""), root + "/etc/hosts");
  bind_file_over(c, req.value("resolv", ""), root + "/etc/resolv.conf");
  {
    auto path = root + "/etc/hostname";
    ::unlink(path.c_str());
    int fd
        = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      auto text = req.value("hostname", "") + "\n";
      (void)!::write(fd, text.data(), text.size());
      ::close(fd);
    }
  }
  auto proc = root + "/proc";
  ::mkdir(proc.c_str(), 0555);
  c.check(::mount("proc", proc.c_str(), "proc",
                  MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr),
          "mount /proc");
  // Read-only sysfs (what cpu counts and network tools read), its net
  // class the pod's own; not fatal where sysfs cannot be mounted.
  auto sys = root + "/sys";
  ::mkdir(sys.c_str(), 0555);
  ::mount("sysfs", sys.c_str(), "sysfs",
          MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
  for (const char* d : {"/run", "/var", "/var/tmp", "/root", "/home"})
    ::mkdir((root + d).c_str(), 0755);
  ::chmod((root + "/var/tmp").c_str(), 01777);
  if (!ro_root)
    ::mount("tmpfs", (root + "/run").c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
            "mode=755");
  auto dev = root + "/dev";
  ::mkdir(dev.c_str(), 0755);
  c.check(
      ::mount("tmpfs", dev.c_str(), "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755"),
      "mount /dev");
  for (const char* node :
       {"null", "zero", "full", "random", "urandom", "tty"}) {
    auto host = std::string{"/dev/"} + node;
    auto inside = dev + "/" + node;
    if (::access(host.c_str(), F_OK) != 0)
      continue;
    make_file(inside);
    bind_mount(c, host, inside, false, "mount " + host);
  }
  auto shm = dev + "/shm";
  ::mkdir(shm.c_str(), 01777);
  c.check(
      ::mount("tmpfs", shm.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"),
      "mount /dev/shm");
  for (auto [name, target] : std::vector<std::pair<const char*, const char*>>{
           {"fd", "/proc/self/fd"},
           {"stdin", "/proc/self/fd/0"},
           {"stdout", "/proc/self/fd/1"},
           {"stderr", "/proc/self/fd/2"}})
    ::symlink(target, (dev + "/" + name).c_str());
  auto tmp = root + "/tmp";
  ::mkdir(tmp.c_str(), 01777);
  ::chmod(tmp.c_str(), 01777);
  if (!ro_root)
    c.check(::mount("tmpfs", tmp.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                    "mode=1777"),
            "mount /tmp");
  const auto& argv_json = req.at("argv");
  auto exe
      = argv_json.empty() ? std::string{} : argv_json[0].get<std::string>();
  for (const auto& m : req.value("mounts", json::array())) {
    auto src = m.value("source", "");
    auto target = m.value("target", "");
    auto inside = root + target;
    struct stat sb {};
    if (::stat(src.c_str(), &sb) != 0)
      c.fail("mount source " + src);
    if (S_ISDIR(sb.st_mode)) {
      mkdir_p(inside);
    } else {
      mkdir_p(root + parent_of(target));
      make_file(inside);
    }
    bind_mount(c, src, inside, m.value("read_only", false),
               "mount " + src + " at " + target);
  }
  // The executable, when it lives outside the system folders (a build
  // tree, a test image's script): its folder, read-only at its own path, so
  // files beside it (a script's modules) come along. After the volumes, so
  // that a volume over one of its parents (an emptyDir at /tmp, with the
  // build tree under /tmp) does not hide it.
  {
    struct stat inside_sb {};
    struct stat host_sb {};
    if (!exe.empty() && exe[0] == '/'
        && ::stat((root + exe).c_str(), &inside_sb) != 0
        && ::stat(exe.c_str(), &host_sb) == 0 && S_ISREG(host_sb.st_mode)) {
      auto dir = parent_of(exe);
      if (dir == "/") {
        make_file(root + exe);
        bind_mount(c, exe, root + exe, true, "mount the executable " + exe);
      } else {
        mkdir_p(root + dir);
        bind_mount(c, dir, root + dir, true,
                   "mount the executable's folder " + dir);
      }
    }
  }
  auto wd = req.value("working_dir", "");
  if (wd.empty())
    wd = "/";
  mkdir_p(root + wd);
  c.check(::chdir(root.c_str()), "chdir " + root);
  c.check(static_cast<int>(::syscall(SYS_pivot_root, ".", ".")),
          "pivot_root " + root);
  c.check(::umount2(".", MNT_DETACH), "detach the old root");
  c.check(::chdir("/"), "chdir /");
  if (ro_root) {
    c.check(::mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY,
                    nullptr),
            "remount / read-only");
    for (const auto& o : overlays)
      c.check(::mount(nullptr, o.c_str(), nullptr,
                      MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr),
              "remount " + o + " read-only");
  }
  // The bounding set: empty when the spec drops ALL, else the default set
  // of containerd and Docker, so a pod that needs more than a real node
  // grants (mount, NET_ADMIN ...) fails here too.
  const bool drop = req.value("drop_all_capabilities", false);
  const std::uint64_t keep = drop ? 0 : default_capabilities;
  for (int cap = 0; cap <= 63; ++cap)
    if ((keep & (std::uint64_t{1} << cap)) == 0
        && ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      c.fail("drop capability " + std::to_string(cap));
  std::vector<gid_t> groups;
  for (const auto& g : req.value("groups", json::array()))
    groups.push_back(g.get<gid_t>());
  c.check(::setgroups(groups.size(), groups.data()), "setgroups");
  auto gid = req.value("gid", gid_t{0});
  auto uid = req.value("uid", uid_t{0});
  c.check(::setgid(gid), "setgid " + std::to_string(gid));
  c.check(::setuid(uid), "setuid " + std::to_string(uid));
  c.check(::chdir(wd.c_str()), "chdir " + wd);
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  {
    // An exec as uid 0 gains the bounding set and the inheritable one: the
    // inheritable set is emptied always, the others too when dropping ALL.
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (!drop)
      c.check(static_cast<int>(::syscall(SYS_capget, &hdr, data)),
              "read the capability sets");
    data[0].inheritable = 0;
    data[1].inheritable = 0;
    c.check(static_cast<int>(::syscall(SYS_capset, &hdr, data)),
            "set the capability sets");
  }
  if (req.value("no_new_privileges", false))
    c.check(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set no_new_privs");
  std::vector<std::string> args;
  for (const auto& a : argv_json)
    args.push_back(a.get<std::string>());
  std::vector<std::string> env;
  for (const auto& e : req.value("env", json::array()))
    env.push_back(e.get<std::string>());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  ::dup2(nullfd, 0);
  ::dup2(logfd, 1);
  ::dup2(logfd, 2);
  default_signals();
  ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  if (exe.empty()) {
    errno = EINVAL;
    c.fail("exec (no command)");
  }
  ::execve(exe.c_str(), argv.data(), envp.data());
  c.fail("exec " + exe);
}

std::pair<json, pid_t> op_start(init_state& st, const json& req) {
  auto id = req.value("id", "");
  auto name = req.value("name", "");
  auto sb = st.sandboxes.find(id);
  if (sb == st.sandboxes.end() || sb->second.holder == 0)
    return {error_reply(errc::unknown_sandbox,
                        "no running sandbox " + id + " in the cluster init"),
            0};
  if (sb->second.containers.count(name) != 0)
    return {error_reply(errc::already_running,
                        "container " + name + " of sandbox " + id
                            + " still runs; signal it and wait for its exit"),
            0};
  int report[2];
  int go[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    return {error_reply(errc::start_failed, "pipe: " + errno_text()), 0};
  if (::pipe2(go, O_CLOEXEC) != 0) {
    ::close(report[0]);
    ::close(report[1]);
    return {error_reply(errc::start_failed, "pipe: " + errno_text()), 0};
  }
  auto pid = ::fork();
  if (pid < 0) {
    for (int fd : {report[0], report[1], go[0], go[1]})
      ::close(fd);
    return {error_reply(errc::start_failed, "fork: " + errno_text()), 0};
  }
  if (pid == 0) {
    ::close(report[0]);
    ::close(go[1]);
    container_main(report[1], go[0], req, sb->second.holder);
  }
  ::close(report[1]);
  ::close(go[0]);
  container_rec rec{id, name, 0, -1};
  std::string said;
  char first = 0;
  if (::read(report[0], &first, 1) == 1 && first == mount_ns_ready) {
    auto mnt_path = "/proc/" + std::to_string(pid) + "/ns/mnt";
    rec.mnt_fd = ::open(mnt_path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat mnt_sb {};
    if (rec.mnt_fd >= 0 && ::fstat(rec.mnt_fd, &mnt_sb) == 0)
      rec.mnt_ns = mnt_sb.st_ino;
  } else if (first != 0) {
    said.push_back(first);
  }
  (void)!::write(go[1], "g", 1);
  ::close(go[1]);
  // EOF without a word: exec succeeded (the pipe is close-on-exec).
  said += read_all(report[0]);
  ::close(report[0]);
  if (!said.empty()) {
    if (rec.mnt_fd >= 0)
      ::close(rec.mnt_fd);
    wait_exit(pid);
    return {error_reply(errc::start_failed, said), 0};
  }
  st.containers.emplace(pid, std::move(rec));
  sb->second.containers[name] = pid;
  return {ok_reply(), pid};
}

json op_signal(init_state& st, const json& req) {
  auto sb = st.sandboxes.find(req.value("id", ""));
  int sig = req.value("signal", 0);
  if (sig <= 0 || sig >= NSIG)
    return error_reply(errc::bad_options,
                       "signal " + std::to_string(sig)
                           + " is not a signal number (1-64)");
  if (sb != st.sandboxes.end()) {
    auto c = sb->second.containers.find(req.value("name", ""));
    if (c != sb->second.containers.end())
      ::kill(c->second, sig);
  }
  return ok_reply();
}

json op_remove(init_state& st, const json& req) {
  auto id = req.value("id", "");
  auto sb = st.sandboxes.find(id);
  if (sb == st.sandboxes.end())
    return ok_reply();
  auto rec = sb->second;
  if (!rec.veth.empty())
    run_ip(st, {"link", "del", rec.veth});
  for (const auto& [name, pid] : rec.containers)
    ::kill(pid, SIGKILL);
  // Only while the holder lives does the inode still name this pod's
  // namespace (a freed one's number is reused).
  if (rec.holder > 0)
    kill_ns_members("net", rec.net_ns);
  for (const auto& [name, pid] : rec.containers) {
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOWAIT) == 0)
      finish_container(st, pid, exit_code_of(si));
    ::waitpid(pid, nullptr, 0);
  }
  if (rec.holder > 0) {
    ::kill(rec.holder, SIGKILL);
    wait_exit(rec.holder);
  }
  st.sandboxes.erase(id);
  return ok_reply();
}

json op_link(init_state& st, const json& req) {
  auto sb = st.sandboxes.find(req.value("id", ""));
  if (sb == st.sandboxes.end())
    return error_reply(errc::unknown_sandbox, "no sandbox "
                                                  + req.value("id", "")
                                                  + " in the cluster init");
  if (auto err = run_ip(st, {"link", "set", sb->second.veth,
                             req.value("up", true) ? "up" : "down"});
      !err.empty())
    return error_reply(errc::network_failed, err);
  return ok_reply();
}

void dispatch(init_state& st, const json& req) {
  auto op = req.value("op", "");
  std::pair<json, pid_t> out{json{}, 0};
  if (op == "setup")
    out.first = op_setup(st, req);
  else if (op == "create")
    out = op_create(st, req);
  else if (op == "start")
    out = op_start(st, req);
  else if (op == "signal")
    out.first = op_signal(st, req);
  else if (op == "remove")
    out.first = op_remove(st, req);
  else if (op == "link")
    out.first = op_link(st, req);
  else
    out.first = error_reply(errc::bad_options,
                            "the cluster init knows no request \"" + op + "\"");
  out.first["seq"] = req.value("seq", std::uint64_t{0});
  send_packet(st.ctrl, std::move(out.first), out.second);
}

} // namespace

int init_main(int control_fd) {
  init_state st;
  st.ctrl = control_fd;
  ::fcntl(control_fd, F_SETFD, FD_CLOEXEC);
  ::setsid();
  // Stdout belongs to the simulator (it prints its listening lines there);
  // stderr stays for a failure of init itself.
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    if (null > 2)
      ::close(null);
  }
  if (control_fd > 3)
    ::syscall(SYS_close_range, 3U, static_cast<unsigned>(control_fd - 1), 0U);
  close_from(static_cast<unsigned>(control_fd) + 1);
  ::prctl(PR_SET_NAME, "sim-pod-init");
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    st.setup_error = "make the cluster's mounts private: " + errno_text();
  else if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   nullptr)
           != 0)
    st.setup_error
        = "mount /proc for the cluster's PID namespace: " + errno_text();
  st.ip = detail::find_ip_command();
  std::vector<char> buf(max_packet);
  for (;;) {
    pollfd fds[2] = {{control_fd, POLLIN, 0}, {sfd, POLLIN, 0}};
    if (::poll(fds, sfd >= 0 ? 2 : 1, sfd >= 0 ? -1 : 200) < 0
        && errno != EINTR)
      return 1;
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info;
      while (::read(sfd, &info, sizeof info) > 0) {
      }
    }
    reap(st);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      auto n = ::recv(control_fd, buf.data(), buf.size(), 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return 0; // the simulator is gone: so is the cluster
      auto req = json::parse(buf.data(), buf.data() + n, nullptr, false);
      if (req.is_object())
        dispatch(st, req);
      reap(st);
    }
  }
}

} // namespace aiperf::k8s::sim::sandbox
