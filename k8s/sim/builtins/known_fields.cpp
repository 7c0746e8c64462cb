#include "k8s/sim/builtins/known_fields.hpp"

#include <deque>
#include <initializer_list>
#include <map>
#include <utility>

namespace aiperf::k8s::sim {

namespace {

// The shape of a Go struct as its JSON decoder sees it.
struct shape {
  enum class kind : std::uint8_t {
    leaf,   // a scalar, or anything we do not look into
    object, // a struct: only `fields` are known
    list,   // a slice of `element`
  };
  kind k = kind::leaf;
  std::vector<std::pair<std::string, const shape*>> fields;
  const shape* element = nullptr;

  const shape* field(const std::string& name) const {
    for (const auto& [n, s] : fields)
      if (n == name)
        return s;
    return nullptr;
  }
};

using field_list = std::initializer_list<std::pair<const char*, const shape*>>;

// Every shape lives as long as the program: built once, never freed.
class shapes {
public:
  const shape* leaf() { return &leaf_; }
  const shape* object(field_list fields) {
    auto& s = store_.emplace_back();
    s.k = shape::kind::object;
    for (const auto& [name, sub] : fields)
      s.fields.emplace_back(name, sub);
    return &s;
  }
  // A struct with the fields of `base` and more.
  const shape* extend(const shape* base, field_list more) {
    auto& s = store_.emplace_back(*base);
    for (const auto& [name, sub] : more)
      s.fields.emplace_back(name, sub);
    return &s;
  }
  const shape* list(const shape* element) {
    auto& s = store_.emplace_back();
    s.k = shape::kind::list;
    s.element = element;
    return &s;
  }

private:
  shape leaf_;
  std::deque<shape> store_;
};

struct model {
  shapes s;
  std::map<std::string, const shape*> by_kind; // "apps/v1 Deployment"
};

const model& the_model() {
  static const model m = [] {
    model out;
    auto& s = out.s;
    const shape* L = s.leaf(); // scalars and maps of scalars alike
    auto owner_ref = s.object({{"apiVersion", L},
                               {"kind", L},
                               {"name", L},
                               {"uid", L},
                               {"controller", L},
                               {"blockOwnerDeletion", L}});
    auto meta = s.object({{"name", L},
                          {"generateName", L},
                          {"namespace", L},
                          {"selfLink", L},
                          {"uid", L},
                          {"resourceVersion", L},
                          {"generation", L},
                          {"creationTimestamp", L},
                          {"deletionTimestamp", L},
                          {"deletionGracePeriodSeconds", L},
                          {"labels", L},
                          {"annotations", L},
                          {"ownerReferences", s.list(owner_ref)},
                          {"finalizers", L},
                          {"managedFields", L}});
    auto env_var = s.object({{"name", L}, {"value", L}, {"valueFrom", L}});
    auto port = s.object({{"name", L},
                          {"hostPort", L},
                          {"containerPort", L},
                          {"protocol", L},
                          {"hostIP", L}});
    auto container = s.object({{"name", L},
                               {"image", L},
                               {"command", L},
                               {"args", L},
                               {"workingDir", L},
                               {"ports", s.list(port)},
                               {"envFrom", L},
                               {"env", s.list(env_var)},
                               {"resources", L},
                               {"resizePolicy", L},
                               {"restartPolicy", L},
                               {"volumeMounts", L},
                               {"volumeDevices", L},
                               {"livenessProbe", L},
                               {"readinessProbe", L},
                               {"startupProbe", L},
                               {"lifecycle", L},
                               {"terminationMessagePath", L},
                               {"terminationMessagePolicy", L},
                               {"imagePullPolicy", L},
                               {"securityContext", L},
                               {"stdin", L},
                               {"stdinOnce", L},
                               {"tty", L}});
    auto pod_spec = s.object({{"volumes", L},
                              {"initContainers", s.list(container)},
                              {"containers", s.list(container)},
                              {"ephemeralContainers", L},
                              {"restartPolicy", L},
                              {"terminationGracePeriodSeconds", L},
                              {"activeDeadlineSeconds", L},
                              {"dnsPolicy", L},
                              {"nodeSelector", L},
                              {"serviceAccountName", L},
                              {"serviceAccount", L},
                              {"automountServiceAccountToken", L},
                              {"nodeName", L},
                              {"hostNetwork", L},
                              {"hostPID", L},
                              {"hostIPC", L},
                              {"shareProcessNamespace", L},
                              {"securityContext", L},
                              {"imagePullSecrets", L},
                              {"hostname", L},
                              {"subdomain", L},
                              {"affinity", L},
                              {"schedulerName", L},
                              {"tolerations", L},
                              {"hostAliases", L},
                              {"priorityClassName", L},
                              {"priority", L},
                              {"dnsConfig", L},
                              {"readinessGates", L},
                              {"runtimeClassName", L},
                              {"enableServiceLinks", L},
                              {"preemptionPolicy", L},
                              {"overhead", L},
                              {"topologySpreadConstraints", L},
                              {"setHostnameAsFQDN", L},
                              {"os", L},
                              {"hostUsers", L},
                              {"schedulingGates", L},
                              {"resourceClaims", L},
                              {"resources", L}});
    auto template_spec = s.object({{"metadata", meta}, {"spec", pod_spec}});
    auto top = s.object({{"apiVersion", L}, {"kind", L}, {"metadata", meta}});
    auto with = [&](field_list more) { return s.extend(top, more); };

    auto& k = out.by_kind;
    k["v1 Namespace"]
        = with({{"spec", s.object({{"finalizers", L}})}, {"status", L}});
    k["v1 ConfigMap"]
        = with({{"immutable", L}, {"data", L}, {"binaryData", L}});
    k["v1 Secret"]
        = with({{"immutable", L}, {"data", L}, {"stringData", L}, {"type", L}});
    k["v1 ServiceAccount"] = with({{"secrets", L},
                                   {"imagePullSecrets", L},
                                   {"automountServiceAccountToken", L}});
    k["v1 Pod"] = with({{"spec", pod_spec}, {"status", L}});
    k["v1 Service"] = with(
        {{"spec", s.object({{"ports", s.list(s.object({{"name", L},
                                                       {"protocol", L},
                                                       {"appProtocol", L},
                                                       {"port", L},
                                                       {"targetPort", L},
                                                       {"nodePort", L}}))},
                            {"selector", L},
                            {"clusterIP", L},
                            {"clusterIPs", L},
                            {"type", L},
                            {"externalIPs", L},
                            {"sessionAffinity", L},
                            {"loadBalancerIP", L},
                            {"loadBalancerSourceRanges", L},
                            {"externalName", L},
                            {"externalTrafficPolicy", L},
                            {"healthCheckNodePort", L},
                            {"publishNotReadyAddresses", L},
                            {"sessionAffinityConfig", L},
                            {"ipFamilies", L},
                            {"ipFamilyPolicy", L},
                            {"allocateLoadBalancerNodePorts", L},
                            {"loadBalancerClass", L},
                            {"internalTrafficPolicy", L},
                            {"trafficDistribution", L}})},
         {"status", L}});
    k["v1 Event"] = with({{"involvedObject", L},
                          {"reason", L},
                          {"message", L},
                          {"source", L},
                          {"firstTimestamp", L},
                          {"lastTimestamp", L},
                          {"count", L},
                          {"type", L},
                          {"eventTime", L},
                          {"series", L},
                          {"action", L},
                          {"related", L},
                          {"reportingComponent", L},
                          {"reportingInstance", L}});
    k["events.k8s.io/v1 Event"] = with({{"eventTime", L},
                                        {"series", L},
                                        {"reportingController", L},
                                        {"reportingInstance", L},
                                        {"action", L},
                                        {"reason", L},
                                        {"regarding", L},
                                        {"related", L},
                                        {"note", L},
                                        {"type", L},
                                        {"deprecatedSource", L},
                                        {"deprecatedFirstTimestamp", L},
                                        {"deprecatedLastTimestamp", L},
                                        {"deprecatedCount", L}});
    k["v1 Endpoints"] = with({{"subsets", L}});
    k["v1 Node"] = with({{"spec", L}, {"status", L}});
    k["batch/v1 Job"] = with({{"spec", s.object({{"parallelism", L},
                                                 {"completions", L},
                                                 {"activeDeadlineSeconds", L},
                                                 {"podFailurePolicy", L},
                                                 {"successPolicy", L},
                                                 {"backoffLimit", L},
                                                 {"backoffLimitPerIndex", L},
                                                 {"maxFailedIndexes", L},
                                                 {"selector", L},
                                                 {"manualSelector", L},
                                                 {"template", template_spec},
                                                 {"ttlSecondsAfterFinished", L},
                                                 {"completionMode", L},
                                                 {"suspend", L},
                                                 {"podReplacementPolicy", L},
                                                 {"managedBy", L}})},
                              {"status", L}});
    k["apps/v1 Deployment"]
        = with({{"spec", s.object({{"replicas", L},
                                   {"selector", L},
                                   {"template", template_spec},
                                   {"strategy", L},
                                   {"minReadySeconds", L},
                                   {"revisionHistoryLimit", L},
                                   {"paused", L},
                                   {"progressDeadlineSeconds", L}})},
                {"status", L}});
    k["apps/v1 ReplicaSet"]
        = with({{"spec", s.object({{"replicas", L},
                                   {"minReadySeconds", L},
                                   {"selector", L},
                                   {"template", template_spec}})},
                {"status", L}});
    auto rule = s.object({{"verbs", L},
                          {"apiGroups", L},
                          {"resources", L},
                          {"resourceNames", L},
                          {"nonResourceURLs", L}});
    auto subject = s.object(
        {{"kind", L}, {"apiGroup", L}, {"name", L}, {"namespace", L}});
    auto role_ref = s.object({{"apiGroup", L}, {"kind", L}, {"name", L}});
    k["rbac.authorization.k8s.io/v1 Role"] = with({{"rules", s.list(rule)}});
    k["rbac.authorization.k8s.io/v1 ClusterRole"]
        = with({{"rules", s.list(rule)}, {"aggregationRule", L}});
    k["rbac.authorization.k8s.io/v1 RoleBinding"]
        = with({{"subjects", s.list(subject)}, {"roleRef", role_ref}});
    k["rbac.authorization.k8s.io/v1 ClusterRoleBinding"]
        = with({{"subjects", s.list(subject)}, {"roleRef", role_ref}});
    k["coordination.k8s.io/v1 Lease"]
        = with({{"spec", s.object({{"holderIdentity", L},
                                   {"leaseDurationSeconds", L},
                                   {"acquireTime", L},
                                   {"renewTime", L},
                                   {"leaseTransitions", L},
                                   {"strategy", L},
                                   {"preferredHolder", L}})}});
    auto spec_status = with({{"spec", L}, {"status", L}});
    for (const char* kind :
         {"apiextensions.k8s.io/v1 CustomResourceDefinition",
          "authentication.k8s.io/v1 TokenReview",
          "authentication.k8s.io/v1 SelfSubjectReview",
          "authorization.k8s.io/v1 SubjectAccessReview",
          "authorization.k8s.io/v1 SelfSubjectAccessReview",
          "authorization.k8s.io/v1 SelfSubjectRulesReview",
          "authorization.k8s.io/v1 LocalSubjectAccessReview"})
      k[kind] = spec_status;
    return out;
  }();
  return m;
}

void walk(const shape* s, const json& value, const std::string& path,
          std::vector<std::string>& out) {
  if (s == nullptr || value.is_null())
    return;
  switch (s->k) {
  case shape::kind::leaf:
    return;
  case shape::kind::object:
    if (!value.is_object())
      return; // a type error, reported by the decoder otherwise
    for (const auto& [key, sub] : value.items()) {
      auto child = path.empty() ? key : path + "." + key;
      const shape* known = s->field(key);
      if (known == nullptr)
        out.push_back(child);
      else
        walk(known, sub, child, out);
    }
    return;
  case shape::kind::list:
    if (!value.is_array())
      return;
    for (size_t i = 0; i < value.size(); ++i)
      walk(s->element, value[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
}

} // namespace

std::vector<std::string> unknown_fields(const resource_type& type,
                                        const json& object) {
  std::vector<std::string> out;
  if (type.custom)
    return out;
  const auto& kinds = the_model().by_kind;
  auto it = kinds.find(type.api_version() + " " + type.kind);
  if (it == kinds.end())
    return out;
  walk(it->second, object, "", out);
  return out;
}

std::string strict_decoding_message(const std::vector<std::string>& paths) {
  std::string out = "strict decoding error: ";
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += "unknown field \"" + paths[i] + "\"";
  }
  return out;
}

std::vector<std::string>
strict_decoding_warnings(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  out.reserve(paths.size());
  for (const auto& p : paths)
    out.push_back("unknown field \"" + p + "\"");
  return out;
}

} // namespace aiperf::k8s::sim
