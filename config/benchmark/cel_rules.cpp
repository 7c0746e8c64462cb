#include "config/benchmark/cel_rules.hpp"

#include <algorithm>

namespace aiperf::config::benchmark {

namespace {

std::vector<cel_rule> build() {
  std::vector<cel_rule> out{
      {shape::endpoint, "endpoint.template-required",
       "!has(self.type) || self.type != 'template' || has(self.template)",
       "endpoint.template is required when endpoint.type='template'"},
      {shape::endpoint, "endpoint.template-only-for-template",
       "!has(self.template) || !has(self.type) || self.type == 'template'",
       "endpoint.template is only used when endpoint.type='template' (omit "
       "type to have it "
       "inferred)"},
      {shape::endpoint, "endpoint.multipart-types",
       "!has(self.requestContentType) || self.requestContentType != "
       "'multipart/form-data' || "
       "!has(self.type) || self.type in ['audio_transcription', 'image_edit', "
       "'video_generation']",
       "requestContentType='multipart/form-data' is only supported on endpoint "
       "types that "
       "accept form data: audio_transcription, image_edit, video_generation"},
      {shape::endpoint, "endpoint.path-absolute",
       "!has(self.path) || self.path.startsWith('/')",
       "endpoint.path must start with '/' (e.g. '/v1/chat/completions', not "
       "'v1/chat/completions')"},
      {shape::runtime, "runtime.api-host-needs-port",
       "!has(self.apiHost) || has(self.apiPort)",
       "runtime.apiHost requires runtime.apiPort to be set"},
      {shape::runtime, "runtime.workers-min",
       "!has(self.workersMin) || !has(self.workers) || int(self.workersMin) <= "
       "int(self.workers)",
       "runtime.workersMin must be <= runtime.workers"},
      {shape::multi_run, "multiRun.min-runs",
       "!has(self.convergence) || !has(self.convergence.minRuns) || "
       "!has(self.numRuns) || "
       "self.convergence.minRuns <= self.numRuns",
       "multiRun.convergence.minRuns must be <= multiRun.numRuns; either lower "
       "minRuns or raise "
       "numRuns"},
      {shape::job_spec, "job.no-sweep", "!has(self.sweep)",
       "AIPerfJob.spec.sweep must be null/omitted. Use kind: AIPerfSweep for "
       "parameter sweeps."},
      {shape::job_spec, "job.one-run",
       "!has(self.multiRun) || ((!has(self.multiRun.numRuns) || "
       "self.multiRun.numRuns <= 1) && "
       "!has(self.multiRun.convergence))",
       "AIPerfJob.spec.multiRun must describe one run without convergence. Use "
       "kind: "
       "AIPerfSweep for multi-run orchestration."},
  };
  const auto& mutable_fields = job_mutable_fields();
  for (const auto& p : job_spec_schema().properties) {
    if (std::find(mutable_fields.begin(), mutable_fields.end(), p.name)
        != mutable_fields.end())
      continue;
    const auto& x = p.name;
    out.push_back({shape::job_spec, "job.immutable." + x,
                   "has(oldSelf." + x + ") == has(self." + x
                       + ") && (!has(self." + x + ") || oldSelf." + x
                       + " == self." + x + ")",
                   "spec." + x
                       + " is immutable after creation; create a new AIPerfJob "
                         "to change it",
                   true});
  }
  out.push_back(
      {shape::sweep_spec, "sweep.requires-sweep", "has(self.sweep)",
       "AIPerfSweep.spec.sweep is required. Use kind: AIPerfJob for a single "
       "benchmark."});
  return out;
}

} // namespace

const std::vector<std::string>& job_mutable_fields() {
  static const std::vector<std::string> names{"cancel", "timeoutSeconds"};
  return names;
}

const std::vector<cel_rule>& cel_rules() {
  static const std::vector<cel_rule> rules = build();
  return rules;
}

const cel_rule* find_cel_rule(std::string_view id) {
  for (const auto& r : cel_rules())
    if (r.id == id)
      return &r;
  return nullptr;
}

std::vector<cel_rule> cel_rules_for(shape target) {
  std::vector<cel_rule> out;
  for (const auto& r : cel_rules())
    if (r.target == target)
      out.push_back(r);
  return out;
}

} // namespace aiperf::config::benchmark
