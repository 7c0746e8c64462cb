#include "k8s/crds/crds.hpp"

#include "config/benchmark/cel_rules.hpp"
#include "config/benchmark/document.hpp"
#include "config/benchmark/openapi.hpp"

#include <algorithm>

namespace aiperf::k8s::crds {

namespace {

json str() {
  return {{"type", "string"}};
}

json str(std::string description) {
  return {{"type", "string"}, {"description", std::move(description)}};
}

json int64() {
  return {{"type", "integer"}, {"format", "int64"}};
}

json int32() {
  return {{"type", "integer"}, {"format", "int32"}};
}

json integer() {
  return {{"type", "integer"}};
}

json number() {
  return {{"type", "number"}};
}

json boolean() {
  return {{"type", "boolean"}};
}

json one_of(std::vector<std::string> values) {
  return {{"type", "string"}, {"enum", std::move(values)}};
}

json open_object(std::string description = {}) {
  json out = {{"type", "object"}};
  if (!description.empty())
    out["description"] = std::move(description);
  out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

// A node whose shape the writers have changed over time (an object in one
// release, a list in another): typeless, so neither is refused.
json open_any() {
  return {{"x-kubernetes-preserve-unknown-fields", true}};
}

json object(json properties) {
  return {{"type", "object"}, {"properties", std::move(properties)}};
}

json column(std::string name, std::string type, std::string path,
            int priority = 0) {
  json out = {{"name", std::move(name)},
              {"type", std::move(type)},
              {"jsonPath", std::move(path)}};
  if (priority != 0)
    out["priority"] = priority;
  return out;
}

json conditions() {
  json cond = object({{"type", str()},
                      {"status", one_of({"True", "False", "Unknown"})},
                      {"reason", str()},
                      {"message", str()},
                      {"lastTransitionTime", str()}});
  cond["required"] = {"type", "status"};
  return {{"type", "array"}, {"items", std::move(cond)}};
}

std::string immutable_rule(const std::string& x) {
  return "has(oldSelf." + x + ") == has(self." + x + ") && (!has(self." + x
         + ") || oldSelf." + x + " == self." + x + ")";
}

std::string immutable_message(const std::string& x, std::string_view kind) {
  return "spec." + x + " is immutable after creation; create a new "
         + std::string{kind} + " to change it";
}

json root_schema(std::string_view kind, json spec, json status) {
  json root = json::object();
  root["description"]
      = std::string{kind} + " is the Schema for the "
        + std::string{kind == "AIPerfJob" ? "aiperfjobs" : "aiperfsweeps"}
        + " API.";
  root["type"] = "object";
  root["required"] = {"spec"};
  root["properties"]["apiVersion"] = str();
  root["properties"]["kind"] = str();
  root["properties"]["metadata"] = {{"type", "object"}};
  root["properties"]["spec"] = std::move(spec);
  root["properties"]["status"] = std::move(status);
  return root;
}

json crd(std::string_view kind, const std::string& plural,
         const std::string& singular, std::vector<std::string> short_names,
         json columns, json schema) {
  json version_entry = json::object();
  version_entry["name"] = std::string{version};
  version_entry["served"] = true;
  version_entry["storage"] = true;
  version_entry["subresources"] = {{"status", json::object()}};
  version_entry["additionalPrinterColumns"] = std::move(columns);
  version_entry["schema"] = {{"openAPIV3Schema", std::move(schema)}};

  json out = json::object();
  out["apiVersion"] = "apiextensions.k8s.io/v1";
  out["kind"] = "CustomResourceDefinition";
  out["metadata"]["name"] = plural + "." + std::string{group};
  // Helm keeps CRDs on uninstall with this; kustomize users get the same
  // warning in the docs: deleting a CRD deletes every object of its kind.
  out["metadata"]["annotations"] = {{"helm.sh/resource-policy", "keep"}};
  out["spec"]["group"] = std::string{group};
  out["spec"]["names"] = {{"kind", std::string{kind}},
                          {"listKind", std::string{kind} + "List"},
                          {"plural", plural},
                          {"singular", singular},
                          {"shortNames", std::move(short_names)},
                          {"categories", {"all", "aiperf"}}};
  out["spec"]["scope"] = "Namespaced";
  out["spec"]["versions"] = json::array({std::move(version_entry)});
  return out;
}

// --- AIPerfJob ---------------------------------------------------------------

json job_columns() {
  const std::string s = ".status.summary.";
  return json::array({
      column("Phase", "string", ".status.phase"),
      column("Stage", "string", ".status.currentPhase"),
      column("Done", "integer", ".status.requestsCompleted"),
      column("Total", "integer", ".status.requestsTotal"),
      column("QPS", "number", ".status.requestsPerSecond"),
      column("TPS", "number", s + "output_token_throughput.avg"),
      column("TTFT", "number", s + "time_to_first_token.p50"),
      column("ITL", "number", s + "inter_token_latency.p50"),
      column("E2E", "number", s + "request_latency.p50"),
      column("Age", "date", ".metadata.creationTimestamp"),
      column("TTFT_P99", "number", s + "time_to_first_token.p99", 1),
      column("ITL_P99", "number", s + "inter_token_latency.p99", 1),
      column("E2E_P99", "number", s + "request_latency.p99", 1),
      column("TTFT_AVG", "number", s + "time_to_first_token.avg", 1),
      column("ITL_AVG", "number", s + "inter_token_latency.avg", 1),
      column("E2E_P99_9", "number", s + "request_latency.p99_9", 1),
  });
}

json phase_progress() {
  json p = json::object();
  p["phaseName"] = str();
  p["phaseKind"] = one_of({"warmup", "profiling"});
  for (const char* k : {"phaseIndex", "profilingIndex", "requestsCompleted",
                        "requestsSent", "requestsTotal", "requestsCancelled",
                        "requestsErrors", "requestsInFlight"})
    p[k] = integer();
  p["requestsPerSecond"] = number();
  p["requestsProgressPercent"] = number();
  for (const char* k :
       {"sessionsSent", "sessionsCompleted", "sessionsCancelled",
        "sessionsInFlight", "recordsSuccess", "recordsError"})
    p[k] = integer();
  p["recordsPerSecond"] = number();
  p["recordsProgressPercent"] = number();
  for (const char* k :
       {"sendingComplete", "isRequestsComplete", "isRecordsComplete",
        "timeoutTriggered", "wasCancelled"})
    p[k] = boolean();
  for (const char* k : {"requestsEtaSeconds", "recordsEtaSeconds",
                        "expectedDurationSeconds", "elapsedTimeSeconds"})
    p[k] = number();
  json out = object(std::move(p));
  out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

json job_status() {
  json p = json::object();
  p["observedGeneration"] = int64();
  p["phase"] = one_of({"Pending", "Queued", "Initializing", "Running",
                       "Completed", "Failed", "Cancelled"});
  p["jobId"] = str();
  p["startTime"] = str();
  p["completionTime"] = str();
  p["jobSetName"] = str();
  p["error"] = str();
  json workers = json::object();
  for (const char* k : {"ready", "total", "dispatchable", "routerConnected",
                        "readyRecordProcessors", "declaredRecordProcessors",
                        "readyPods", "totalPods", "degradedPods"})
    workers[k] = int32();
  p["workers"] = object(std::move(workers));
  p["phases"]
      = {{"type", "object"}, {"additionalProperties", phase_progress()}};
  p["requestsCompleted"] = integer();
  p["requestsTotal"] = integer();
  p["requestsPerSecond"] = number();
  p["currentPhase"] = str();
  p["subPhase"] = one_of({"initializing", "configuring", "ready", "profiling",
                          "processing", "stopping", "shutdown"});
  p["liveMetrics"] = open_object();
  p["serverMetrics"] = open_object();
  p["results"] = open_object();
  p["resultsPath"] = str();
  p["runEpoch"] = int64();
  p["runEpoch"]["minimum"] = 0;
  p["liveSummary"] = open_object();
  p["summary"] = open_object();
  p["resultsTtlDays"] = integer();
  p["startupIssue"] = object({
      {"fingerprint", str()},
      {"podName", str()},
      {"containerName", str()},
      {"reason", str()},
      {"message", str()},
      {"category", one_of({"ContainerConfig", "CrashLoop", "ImagePull",
                           "SchedulingConstraint", "SchedulingDelay"})},
      {"terminalAfterThreshold", boolean()},
      {"firstObservedTime", str()},
      {"warningEmitted", boolean()},
  });
  p["conditions"] = conditions();
  json out = object(std::move(p));
  out["description"] = "AIPerfJob status, written by the operator and the "
                       "benchmark controller.";
  // Both writers add keys across releases (controllerFailure,
  // resultsExported); pruning them would lose what they report.
  out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

// --- AIPerfSweep -------------------------------------------------------------

json sweep_columns() {
  return json::array({
      column("Phase", "string", ".status.phase"),
      column("Completed", "integer", ".status.completedRuns"),
      column("Total", "integer", ".status.maxTotalRuns"),
      column("Failed", "integer", ".status.failedRuns"),
      column("Current", "string", ".status.currentCell.label"),
      column("Age", "date", ".metadata.creationTimestamp"),
  });
}

json sweep_node() {
  json parameters
      = {{"type", "object"},
         {"description", "Parameter name to the list of values it takes."},
         {"minProperties", 1},
         {"additionalProperties",
          {{"type", "array"}, {"minItems", 1}, {"items", open_any()}}}};
  json out = object({{"type", one_of({"grid", "zip", "scenarios", "sobol",
                                      "latin_hypercube", "adaptive_search"})},
                     {"parameters", std::move(parameters)}});
  out["description"] = "Sweep configuration for parameter exploration.";
  out["required"] = {"type"};
  // Each sweep type has its own keys (variables, runs, dimensions, samples,
  // search_space, objectives); the controller validates them.
  out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

json child_metadata() {
  json labels
      = {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}};
  json out = object({{"labels", labels}, {"annotations", labels}});
  out["description"] = "Labels and annotations merged into every child "
                       "AIPerfJob; the sweep's tracking labels win.";
  return out;
}

json sweep_spec() {
  namespace cb = config::benchmark;
  json spec = cb::job_spec_openapi();
  spec["description"] = "AIPerfSweep specification.";
  auto& props = spec["properties"];
  props["sweep"] = sweep_node();
  props["childMetadata"] = child_metadata();
  json required = spec.value("required", json::array());
  if (std::find(required.begin(), required.end(), "sweep") == required.end())
    required.push_back("sweep");
  spec["required"] = std::move(required);
  // The AIPerfJob rules (no sweep, one run, immutability with its own
  // mutable fields) give way to the sweep's.
  json rules = json::array();
  for (const auto& r : cb::cel_rules_for(cb::shape::sweep_spec))
    rules.push_back(json{{"rule", r.rule}, {"message", r.message}});
  const auto& mutable_fields = sweep_mutable_fields();
  for (const auto& [x, node] : props.items()) {
    (void)node;
    if (std::find(mutable_fields.begin(), mutable_fields.end(), x)
        != mutable_fields.end())
      continue;
    rules.push_back(json{{"rule", immutable_rule(x)},
                         {"message", immutable_message(x, "AIPerfSweep")}});
  }
  spec["x-kubernetes-validations"] = std::move(rules);
  return spec;
}

json sweep_status() {
  json p = json::object();
  p["observedGeneration"] = int64();
  p["phase"] = one_of({"Pending", "Running", "Aggregating", "Succeeded",
                       "PartiallyFailed", "Failed", "Cancelled"});
  p["runEpoch"] = int64();
  p["runEpoch"]["minimum"] = 0;
  p["totalVariations"] = integer();
  p["maxTotalRuns"] = integer();
  p["completedRuns"] = integer();
  p["failedRuns"] = integer();
  p["runStates"] = object({{"pending", integer()},
                           {"running", integer()},
                           {"completed", integer()},
                           {"failed", integer()},
                           {"cancelled", integer()}});
  p["currentChildRef"]
      = object({{"name", str()}, {"index", integer()}, {"label", str()}});
  p["apiUrl"] = str("The results server's URL of this sweep.");
  p["currentCell"] = object({{"variationIndex", integer()},
                             {"label", str()},
                             {"trial", integer()},
                             {"converged", boolean()}});
  p["cells"] = open_any();
  p["aggregation"]
      = object({{"phase", one_of({"Running", "Complete", "Failed"})},
                {"completedAt", str()},
                {"error", str()}});
  p["aggregateRef"] = open_object();
  p["runtimeRef"]
      = object({{"jobSetName", str()}, {"sweepControllerHost", str()}});
  p["childRunEpochsRef"] = open_object();
  p["startTime"] = str();
  p["completionTime"] = str();
  p["lastChildEvent"] = open_any();
  p["conditions"] = conditions();
  json out = object(std::move(p));
  out["description"] = "AIPerfSweep status, written by the operator and the "
                       "sweep controller.";
  // Also written without a declaration: startedAt, completedAt,
  // resultsAvailable, aggregate, runs[], runsTruncated.
  out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

} // namespace

json aiperfjob_crd() {
  return crd("AIPerfJob", "aiperfjobs", "aiperfjob", {"apj", "aiperf"},
             job_columns(),
             root_schema("AIPerfJob", config::benchmark::job_spec_openapi(),
                         job_status()));
}

json aiperfsweep_crd() {
  return crd("AIPerfSweep", "aiperfsweeps", "aiperfsweep", {"aps"},
             sweep_columns(),
             root_schema("AIPerfSweep", sweep_spec(), sweep_status()));
}

const std::vector<std::string>& sweep_mutable_fields() {
  static const std::vector<std::string> names{"cancel",
                                              "ttlSecondsAfterFinished"};
  return names;
}

std::string to_yaml(const json& crd) {
  return "# Generated by `aiperf-node kube crd` from the spec model; do not "
         "edit.\n# Regenerate with `aiperf-node kube crd`; CI runs "
         "`aiperf-node kube crd --check`.\n---\n"
         + config::benchmark::write_yaml(crd);
}

std::vector<crd_file> crd_files() {
  std::vector<crd_file> out;
  for (const auto& c : {aiperfjob_crd(), aiperfsweep_crd()})
    out.push_back(
        {c["metadata"]["name"].get<std::string>() + ".yaml", to_yaml(c)});
  return out;
}

} // namespace aiperf::k8s::crds
