// The kubelet's pure rules, apart from its actor so that each one is tested
// on its own: what a container runs and as whom, its environment, the files
// kubelet writes for a pod (/etc/hosts, /etc/resolv.conf, the atomic-writer
// volume layout). Internal to k8s/sim/kubelet.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/sim/kubelet/kubelet.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace aiperf::k8s::sim::kubelet::detail {

/// `name_namespace(uid)`, how kubelet names a pod in its messages
/// (kubernetes pkg/kubelet/util/format.Pod).
[[nodiscard]] std::string pod_desc(const json& pod);

/// What an image runs. Rule (the images carry no metadata here): an image
/// whose name contains "aiperf-node" is cfg.aiperf_node_path running as
/// uid/gid 1000 (the USER of the product's Dockerfile); an image of
/// cfg.image_map runs the mapped executable as root (uid 0, gid 0).
struct image_info {
  bool found = false;
  std::string executable;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

[[nodiscard]] image_info resolve_image(const kubelet_config& cfg,
                                       const std::string& image);

/// The reference containerd would pull: "busybox:1.36" ->
/// "docker.io/library/busybox:1.36".
[[nodiscard]] std::string normalized_image(const std::string& image);

/// The waiting message of an image no node can pull.
[[nodiscard]] std::string pull_error_message(const std::string& image);

/// The process identity and restrictions of one container: pod and
/// container securityContext (the container's fields win), the image's
/// user when runAsUser is unset.
struct security {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> groups;
  bool read_only_root = false;
  bool drop_all_capabilities = false;
  bool no_new_privileges = false;
  std::optional<std::int64_t> fs_group;
};

/// Error (a std::string, kubelet's CreateContainerConfigError message) for
/// runAsNonRoot with an effective uid 0 (kuberuntime verifyRunAsNonRoot).
[[nodiscard]] std::variant<security, std::string>
resolve_security(const json& pod, const json& container,
                 const image_info& image);

/// Kubernetes' `$(VAR)` expansion (third_party/forked/golang/expansion):
/// `$(NAME)` is replaced when NAME is defined, `$$` is one `$`, anything
/// else stays as written.
[[nodiscard]] std::string
expand(const std::string& input,
       const std::function<std::optional<std::string>(const std::string&)>&
           lookup);

/// A fieldRef's value for env and downwardAPI volumes; nullopt for a path
/// kubelet does not support.
[[nodiscard]] std::optional<std::string>
field_ref_value(const json& pod, const std::string& path,
                const std::string& pod_ip, const std::string& host_ip);

/// A resourceFieldRef's value: the container's limit (or request), else the
/// node's allocatable for limits; divided by the divisor, rounded up, as
/// kubelet's ExtractContainerResourceValue.
[[nodiscard]] std::string resource_field_value(const json& container,
                                               const json& ref);

/// Reads a ConfigMap's or Secret's data by key (decoded), for env and
/// volumes. nullopt = no such object.
using object_lookup = std::function<const json*(const std::string& kind,
                                                const std::string& name)>;

/// The environment of a container as kubelet makes it
/// (kubelet_pods.go makeEnvironmentVariables): envFrom, env with fieldRef,
/// resourceFieldRef, configMapKeyRef and secretKeyRef, `$(VAR)` expansion,
/// then the `kubernetes` service's variables. Error: kubelet's message
/// (`secret "s" not found`, `couldn't find key k in Secret ns/s`).
[[nodiscard]] std::variant<std::vector<std::string>, std::string>
make_env(const json& pod, const json& container, const object_lookup& lookup,
         const std::string& pod_ip, const std::string& host_ip,
         const std::vector<std::pair<std::string, std::string>>& service_env);

/// KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT, KUBERNETES_PORT, ...
/// for the API server at host:port; empty if host is empty.
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
kubernetes_service_env(const std::string& host, std::uint16_t port);

/// Expands `$(VAR)` in command and args against `env` ("NAME=value").
[[nodiscard]] std::vector<std::string>
expand_args(const std::vector<std::string>& args,
            const std::vector<std::string>& env);

/// kubelet's managed /etc/hosts (kubelet_pods.go managedHostsFileContent);
/// `ip` "" leaves out the pod's own line.
[[nodiscard]] std::string hosts_file(const json& pod, const std::string& ip,
                                     const std::string& cluster_domain);

/// /etc/resolv.conf of a ClusterFirst pod.
[[nodiscard]] std::string resolv_conf(const json& pod,
                                      const std::string& dns_server,
                                      const std::string& cluster_domain);

/// Standard base64 (Secret data); nullopt if the text is not base64.
[[nodiscard]] std::optional<std::string> base64_decode(const std::string& in);

/// One file of a volume payload.
struct file_entry {
  std::string data;
  std::uint32_t mode = 0644;
};
using payload = std::map<std::string, file_entry>; // relative path -> file

/// Writes `files` into `dir` with pkg/volume/util/atomic_writer.go's
/// layout: the data in a timestamped folder `..2026_12_02_07_00_00.<ns>`,
/// the symlink `..data` to it (replaced by renaming `..data_tmp`), one
/// symlink per top-level name pointing into `..data/`; the previous folder
/// and names no longer present go. Nothing is written when the payload is
/// what `dir` already holds. fs_group: files and folders group-owned by it,
/// group-readable (read-only volumes) as SetVolumeOwnership. Error: a
/// message naming the path that failed.
[[nodiscard]] std::optional<std::string>
atomic_write(const std::string& dir, const payload& files, std::int64_t unix_ns,
             std::optional<std::int64_t> fs_group);

/// A ConfigMap's or Secret's projection: every key or the listed `items`
/// (key, path, mode), with defaultMode. Error: kubelet's message
/// (`configmap references non-existent config key: k`).
[[nodiscard]] std::variant<payload, std::string>
project_keys(const json& object, bool secret, const json& items,
             std::uint32_t default_mode, bool optional);

/// The decoded data of a ConfigMap (data and binaryData) or Secret.
[[nodiscard]] std::map<std::string, std::string> decoded_data(const json& obj,
                                                              bool secret);

/// QoS class by kubernetes pkg/apis/core/v1/helper/qos (cpu and memory).
[[nodiscard]] std::string qos_class(const json& pod_spec);

/// A signal by name ("KILL", "SIGTERM", "9"); nullopt if unknown.
[[nodiscard]] std::optional<std::int32_t> signal_number(const std::string& s);

} // namespace aiperf::k8s::sim::kubelet::detail
