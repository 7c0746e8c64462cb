// The CEL rules (x-kubernetes-validations) of AIPerf's CRDs, as one list.
//
// Three readers share it, so that they cannot drift apart: the schema
// generator attaches each rule to the node of its shape (openapi.hpp), the
// validation shared by `profile`, `kube profile` and the operator reports a
// broken rule with the rule's own message (validate.hpp), and the simulated
// API server's CEL evaluator uses the list as its test corpus.
//
// Source: ai-dynamo/aiperf tools/generate_crd.py (_decorate_endpoint_node,
// _decorate_runtime_node, _decorate_multirun_node, the kind builders and
// _apply_workload_spec_immutability); rule and message texts are AIPerf's.
#pragma once

#include "config/benchmark/schema.hpp"

#include <string>
#include <vector>

namespace aiperf::config::benchmark {

/// One evaluation of a rule: `self` (and, for a transition rule, `old_self`)
/// and whether the rule admits it. The corpus a CEL evaluator is tested
/// with, and what validate()/validate_update() must agree with.
struct cel_case {
  json self;
  json old_self; ///< null for rules without oldSelf
  bool admitted = true;
};

/// One x-kubernetes-validations entry and the node it belongs to.
struct cel_rule {
  shape target = shape::none;
  /// A stable name for code and tests ("endpoint.template-required",
  /// "job.immutable.image").
  std::string id;
  std::string rule;
  std::string message;
  /// A transition rule: uses oldSelf, so it runs on updates only.
  bool transition = false;
  /// Objects the rule admits and refuses (see cel_case).
  std::vector<cel_case> cases;
};

/// Every rule, in the order they are attached: endpoint, runtime, multiRun,
/// then the AIPerfJob spec (no sweep; one run; immutability of every
/// top-level field but `cancel` and `timeoutSeconds`), then the AIPerfSweep
/// spec's `has(self.sweep)`.
[[nodiscard]] const std::vector<cel_rule>& cel_rules();

/// The rule named `id`; null when there is none.
[[nodiscard]] const cel_rule* find_cel_rule(std::string_view id);

/// The rules attached to `target`, in list order.
[[nodiscard]] std::vector<cel_rule> cel_rules_for(shape target);

/// AIPerfJob spec fields that may change after creation.
[[nodiscard]] const std::vector<std::string>& job_mutable_fields();

} // namespace aiperf::config::benchmark
