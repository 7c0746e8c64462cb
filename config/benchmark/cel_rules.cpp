#include "config/benchmark/cel_rules.hpp"

#include <algorithm>

namespace aiperf::config::benchmark {

namespace {

cel_case admits(const char* self) {
  return {json::parse(self), nullptr, true};
}

cel_case refuses(const char* self) {
  return {json::parse(self), nullptr, false};
}

/// Two different values of a field's type, for the immutability cases.
std::pair<json, json> two_values(const field& f) {
  switch (f.type) {
  case value_type::integer:
    return {1, 2};
  case value_type::number:
    return {1.5, 2.5};
  case value_type::boolean:
    return {false, true};
  case value_type::string:
    if (f.enum_values.size() >= 2)
      return {f.enum_values[0], f.enum_values[1]};
    return {"a", "b"};
  case value_type::array:
    return {json::array(), json::array({"a"})};
  default:
    return {json::object(), json{{"a", "b"}}};
  }
}

void add_cases(std::vector<cel_rule>& rules) {
  auto at = [&](std::string_view id) -> std::vector<cel_case>& {
    for (auto& r : rules)
      if (r.id == id)
        return r.cases;
    static std::vector<cel_case> none;
    return none;
  };
  at("endpoint.template-required") = {
      refuses(R"({"urls": ["http://h:1"], "type": "template"})"),
      admits(
          R"({"urls": ["http://h:1"], "type": "template", "template": {"body": "{}"}})"),
      admits(R"({"urls": ["http://h:1"], "type": "chat"})")};
  at("endpoint.template-only-for-template") = {
      refuses(
          R"({"urls": ["http://h:1"], "type": "chat", "template": {"body": "{}"}})"),
      admits(R"({"urls": ["http://h:1"], "template": {"body": "{}"}})"),
      admits(
          R"({"urls": ["http://h:1"], "type": "template", "template": {"body": "{}"}})")};
  at("endpoint.multipart-types") = {
      refuses(R"({"urls": ["http://h:1"], "type": "chat",
                  "requestContentType": "multipart/form-data"})"),
      admits(R"({"urls": ["http://h:1"], "type": "image_edit",
                 "requestContentType": "multipart/form-data"})"),
      admits(
          R"({"urls": ["http://h:1"], "requestContentType": "multipart/form-data"})"),
      admits(R"({"urls": ["http://h:1"], "type": "chat",
                 "requestContentType": "application/json"})")};
  at("endpoint.path-absolute")
      = {refuses(R"({"urls": ["http://h:1"], "path": "v1/chat"})"),
         admits(R"({"urls": ["http://h:1"], "path": "/v1/chat"})"),
         admits(R"({"urls": ["http://h:1"]})")};
  at("runtime.api-host-needs-port")
      = {refuses(R"({"apiHost": "0.0.0.0"})"),
         admits(R"({"apiHost": "0.0.0.0", "apiPort": 9090})"),
         admits(R"({"apiPort": 9090})")};
  at("runtime.workers-min") = {refuses(R"({"workersMin": 4, "workers": 2})"),
                               admits(R"({"workersMin": 2, "workers": 4})"),
                               admits(R"({"workersMin": "2", "workers": "4"})"),
                               admits(R"({"workersMin": 4})")};
  at("multiRun.min-runs") = {
      refuses(
          R"({"numRuns": 2, "convergence": {"metric": "ttft", "minRuns": 3}})"),
      admits(
          R"({"numRuns": 3, "convergence": {"metric": "ttft", "minRuns": 3}})"),
      admits(R"({"numRuns": 2, "convergence": {"metric": "ttft"}})")};
  at("job.no-sweep")
      = {refuses(R"({"benchmark": {}, "sweep": {"type": "grid"}})"),
         admits(R"({"benchmark": {}})")};
  at("job.one-run") = {
      refuses(R"({"benchmark": {}, "multiRun": {"numRuns": 2}})"),
      refuses(
          R"({"benchmark": {}, "multiRun": {"convergence": {"metric": "x"}}})"),
      admits(R"({"benchmark": {}, "multiRun": {"numRuns": 1}})"),
      admits(R"({"benchmark": {}})")};
  for (const auto& p : job_spec_schema().properties) {
    auto& cases = at("job.immutable." + p.name);
    auto [a, b] = two_values(p);
    cases = {{json{{p.name, a}}, json{{p.name, a}}, true},
             {json{{p.name, b}}, json{{p.name, a}}, false},
             {json{{p.name, a}}, json::object(), false},
             {json::object(), json{{p.name, a}}, false},
             {json::object(), json::object(), true}};
  }
}

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
  add_cases(out);
  out.push_back(
      {shape::sweep_spec,
       "sweep.requires-sweep",
       "has(self.sweep)",
       "AIPerfSweep.spec.sweep is required. Use kind: AIPerfJob for single "
       "benchmarks.",
       false,
       {{json::parse(R"({"sweep": {"type": "grid"}})"), nullptr, true},
        {json::parse(R"({"benchmark": {}})"), nullptr, false}}});
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
