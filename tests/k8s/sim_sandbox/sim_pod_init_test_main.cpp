// The sandbox tests' second executable.
//   sim_pod_init_test sim-pod-init <fd>   the cluster's init (as aiperf-node's
//                                         hidden entry point does)
//   sim_pod_init_test own-cluster <dir>   starts a cluster with two sandboxes
//                                         and a sleeping container in each,
//                                         prints `pids <init> <holder>…
//                                         <container>…` and waits to be killed
//   sim_pod_init_test start-as <uid> <cidr>  prints cluster::start's error
//                                         code and message as that uid
#include "k8s/sim/sandbox/errors.hpp"
#include "k8s/sim/sandbox/sandbox.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace sbx = aiperf::k8s::sim::sandbox;

namespace {

int own_cluster(const std::string& dir) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  sbx::cluster_options opts;
  opts.pod_cidr = "10.254.0.0/24";
  opts.work_dir = dir;
  opts.init_executable = "/proc/self/exe";
  auto c = sbx::cluster::start(opts);
  if (!c) {
    std::cerr << "own-cluster: " << aiperf::error_message(c.error()) << '\n';
    return 1;
  }
  auto rt = sbx::spawn_runtime(sys, *c);
  caf::scoped_actor self{sys};
  std::vector<std::int32_t> pids{(*c)->init_pid()};
  bool ok = true;
  auto fail = [&](caf::error& err) {
    std::cerr << "own-cluster: " << aiperf::error_message(err) << '\n';
    ok = false;
  };
  for (std::string id : {"owner-a", "owner-b"}) {
    sbx::sandbox_spec spec{id, id, "127.0.0.1 localhost\n", ""};
    self->request(rt, std::chrono::seconds{10}, sbx::create_sandbox_atom::value,
                  spec)
        .receive([&](sbx::sandbox_info& info) { pids.push_back(info.pid); },
                 fail);
    sbx::container_spec cs;
    cs.name = "sleep";
    cs.argv = {"/usr/bin/sleep", "1000"};
    cs.log_path = dir + "/" + id + ".log";
    self->request(rt, std::chrono::seconds{10},
                  sbx::start_container_atom::value, id, cs)
        .receive([&](std::int32_t pid) { pids.push_back(pid); }, fail);
  }
  if (!ok)
    return 1;
  std::string line = "pids";
  for (auto p : pids)
    line += " " + std::to_string(p);
  std::cout << line << std::endl;
  for (;;)
    ::pause();
}

// Prints the code of cluster::start's error (or "started") as uid `uid`.
int start_as(const std::string& uid, const std::string& cidr) {
  if (std::atoi(uid.c_str()) != 0 && ::setuid(std::atoi(uid.c_str())) != 0)
    return 3;
  sbx::cluster_options opts;
  opts.pod_cidr = cidr;
  opts.work_dir = "/tmp";
  opts.init_executable = "/proc/self/exe";
  auto c = sbx::cluster::start(opts);
  if (c) {
    std::cout << "started" << std::endl;
    return 0;
  }
  std::cout << to_string(static_cast<sbx::errc>(c.error().code())) << ": "
            << aiperf::error_message(c.error()) << std::endl;
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string{argv[1]} == "sim-pod-init")
    return sbx::init_main(std::atoi(argv[2]));
  if (argc == 3 && std::string{argv[1]} == "own-cluster")
    return own_cluster(argv[2]);
  if (argc == 4 && std::string{argv[1]} == "start-as")
    return start_as(argv[2], argv[3]);
  std::cerr << "usage: " << argv[0]
            << " sim-pod-init <fd> | own-cluster <dir>\n";
  return 2;
}
