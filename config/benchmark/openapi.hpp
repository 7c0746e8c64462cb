// The OpenAPI v3 structural schema of the model, for the AIPerfJob CRD (and
// the simulated API server that validates against it), built the way
// AIPerf's tools/generate_crd.py builds its own:
//  - every declared field, supported or not, so the API server prunes
//    nothing a user wrote (validation then refuses what aiperf-node lacks);
//  - types, enums, defaults, bounds (OpenAPI v3.0 boolean
//    exclusiveMinimum/exclusiveMaximum) and descriptions from the model;
//  - x-kubernetes-preserve-unknown-fields only where AIPerf has it: free-form
//    objects (endpoint.extra, runtime.communication, sweep, plot, variables,
//    Kubernetes types under podTemplate), the opaque items of datasets[] and
//    phases[], and the shorthand unions; `type: object` on every such node
//    except the unions that may hold a scalar or a list (models, model,
//    endpoint.urls, dataset, warmup, profiling, artifacts.summary/records,
//    gpuTelemetry, serverMetrics, networkLatency), which AIPerf leaves
//    typeless because `type: object` would refuse `models: [name]`;
//  - x-kubernetes-int-or-string for runtime.workers, .workersMin, .apiPort;
//  - the CEL rules of cel_rules() on the node of their shape.
#pragma once

#include "config/benchmark/schema.hpp"

namespace aiperf::config::benchmark {

/// The schema node of `f` (and everything under it).
[[nodiscard]] json openapi_schema(const field& f);

/// The AIPerfJob `spec` node: AIPerfConfig + deployment fields, with the
/// AIPerfJob spec rules (no sweep, one run, immutability).
[[nodiscard]] json job_spec_openapi();

/// The `benchmark` node alone (shared by AIPerfJob and AIPerfSweep).
[[nodiscard]] json benchmark_openapi();

} // namespace aiperf::config::benchmark
