#include "config/benchmark/schema.hpp"

#include <cctype>
#include <utility>

namespace aiperf::config::benchmark {

const field* field::find(std::string_view key) const {
  for (const auto& p : properties)
    if (p.name == key)
      return &p;
  return nullptr;
}

std::string snake_case(std::string_view camel) {
  std::string out;
  for (char c : camel) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// A chainable builder, so the table below reads like AIPerf's models: one
// line per field with its type, description and constraints.
struct f {
  field x;

  explicit f(field v) : x(std::move(v)) {}
  f(std::string name, value_type type, std::string description) {
    x.name = std::move(name);
    x.type = type;
    x.description = std::move(description);
  }
  f&& def(json v) && {
    x.default_value = std::move(v);
    return std::move(*this);
  }
  f&& min(double v, bool exclusive = false) && {
    x.minimum = v;
    x.exclusive_minimum = exclusive;
    return std::move(*this);
  }
  f&& max(double v, bool exclusive = false) && {
    x.maximum = v;
    x.exclusive_maximum = exclusive;
    return std::move(*this);
  }
  f&& one_of(std::vector<std::string> values) && {
    x.enum_values = std::move(values);
    return std::move(*this);
  }
  f&& only(std::vector<std::string> values) && {
    x.supported_values = std::move(values);
    return std::move(*this);
  }
  f&& req() && {
    x.required = true;
    return std::move(*this);
  }
  f&& no(std::vector<json> accepted = {}) && {
    x.status = support::unsupported;
    x.accepted_values = std::move(accepted);
    return std::move(*this);
  }
  f&& managed() && {
    x.status = support::operator_managed;
    return std::move(*this);
  }
  f&& ext() && {
    x.status = support::extension;
    return std::move(*this);
  }
  f&& mixed() && {
    x.mixed = true;
    return std::move(*this);
  }
  f&& opaque() && {
    x.opaque_in_crd = true;
    return std::move(*this);
  }
  f&& secs() && {
    x.duration = true;
    return std::move(*this);
  }
  f&& min_len(std::int64_t n) && {
    x.min_length = n;
    return std::move(*this);
  }
  f&& items_between(std::optional<std::int64_t> lo,
                    std::optional<std::int64_t> hi) && {
    x.min_items = lo;
    x.max_items = hi;
    return std::move(*this);
  }
  f&& pat(std::string p) && {
    x.pattern = std::move(p);
    return std::move(*this);
  }
  f&& at(shape s) && {
    x.rules = s;
    return std::move(*this);
  }
  f&& props(std::vector<field> ps) && {
    x.properties = std::move(ps);
    return std::move(*this);
  }
  f&& of(field item) && {
    item.name.clear();
    x.items = std::make_shared<const field>(std::move(item));
    return std::move(*this);
  }
  operator field() && { return std::move(x); }
};

using T = value_type;

f str(std::string n, std::string d) {
  return {std::move(n), T::string, std::move(d)};
}
f integer(std::string n, std::string d) {
  return {std::move(n), T::integer, std::move(d)};
}
f num(std::string n, std::string d) {
  return {std::move(n), T::number, std::move(d)};
}
f flag(std::string n, std::string d) {
  return {std::move(n), T::boolean, std::move(d)};
}
f obj(std::string n, std::string d) {
  return {std::move(n), T::object, std::move(d)};
}
f arr(std::string n, std::string d) {
  return {std::move(n), T::array, std::move(d)};
}
f map(std::string n, std::string d) {
  return {std::move(n), T::map, std::move(d)};
}
f anything(std::string n, std::string d) {
  return {std::move(n), T::any, std::move(d)};
}
f int_or_str(std::string n, std::string d) {
  return {std::move(n), T::int_or_string, std::move(d)};
}

field string_value() {
  return str("", "").x;
}
field number_value() {
  return num("", "").x;
}

// A token-count or delay distribution: a fixed number or {mean, stddev}.
field distribution(std::string name, std::string description) {
  return anything(std::move(name), std::move(description))
      .mixed()
      .props({num("mean", "Mean of the distribution.").min(0),
              num("stddev", "Standard deviation (0 = fixed).").min(0).def(0)});
}

field endpoint() {
  return obj("endpoint", "Endpoint configuration for connecting to inference "
                         "server(s). Includes URLs, API type, "
                         "authentication, timeout, and connection settings.")
      .req()
      .at(shape::endpoint)
      .props({
          anything(
              "urls",
              "List of server URLs to benchmark. Requests distributed "
              "according to url_strategy. "
              "URLs without a scheme have http:// prepended automatically.")
              .mixed()
              .req()
              .of(string_value()),
          str("urlStrategy", "Strategy for distributing requests across "
                             "multiple URLs. round_robin "
                             "cycles through URLs in order.")
              .one_of({"round_robin"})
              .def("round_robin"),
          str("type", "API endpoint type determining request/response format. "
                      "aiperf-node implements "
                      "chat, completions and embeddings.")
              .one_of({"audio_transcription", "chat", "cohere_rankings",
                       "completions", "responses", "messages",
                       "chat_embeddings", "embeddings", "hf_tei_rankings",
                       "huggingface_generate", "image_generation", "image_edit",
                       "video_generation", "image_retrieval", "nim_embeddings",
                       "nim_rankings", "solido_rag", "raw", "template"})
              .only({"chat", "completions", "embeddings"}),
          str("path", "Override default endpoint path. Use for servers with "
                      "non-standard API paths. "
                      "Example: '/custom/v2/generate'"),
          str("apiKey",
              "API authentication key, sent as 'Authorization: Bearer <key>'."),
          num("timeout", "Request timeout in seconds. Requests exceeding this "
                         "duration are marked as "
                         "failed.")
              .def(21600)
              .min(0),
          flag("streaming", "Enable streaming (Server-Sent Events) responses. "
                            "Required for TTFT "
                            "measurement.")
              .def(false),
          str("transport", "Transport plugin name. Only 'http' is shipped.")
              .one_of({"http"}),
          str("awsRegion",
              "AWS region for the request. Required when auth_type='sigv4'.")
              .no(),
          str("awsProfile", "Named AWS credentials profile.").no(),
          str("authType", "Request signing method for authentication.")
              .one_of({"sigv4"})
              .no(),
          str("awsService", "SigV4 signing name.").no(),
          str("connectionReuse",
              "HTTP connection management strategy. pooled: shared connection "
              "pool, never: new connection per request, sticky-user-sessions: "
              "dedicated connection per user session.")
              .one_of({"pooled", "never", "sticky-user-sessions"})
              .def("pooled")
              .only({"pooled"}),
          flag("useLegacyMaxTokens",
               "Use 'max_tokens' field instead of 'max_completion_tokens'.")
              .def(false),
          flag("useServerTokenCount",
               "Use server-reported token counts from response usage field.")
              .def(false),
          flag("perChunkUsage",
               "Request per-chunk token usage on streaming responses.")
              .def(false)
              .no({false}),
          obj("template", "Configuration for custom template-based endpoints.")
              .no()
              .props(
                  {str("body", "Jinja2 template string for request body.")
                       .req(),
                   str("responseField",
                       "JSON path to extract response text from API response.")
                       .def("text")}),
          map("headers", "Custom HTTP headers to include in all requests.")
              .of(string_value()),
          anything(
              "extra",
              "Additional fields to include in request body. Merged into every "
              "request."),
          flag("downloadVideoContent",
               "For video generation endpoints, download the video content "
               "after generation completes.")
              .def(false)
              .no({false}),
          str("requestContentType",
              "Content type for HTTP request body serialization.")
              .one_of({"application/json", "multipart/form-data"})
              .only({"application/json"}),
          str("sessionHeader", "HTTP header name used to carry the per-session "
                               "affinity identifier.")
              .no(),
          flag("uuidAndStrip",
               "Enable AIPerf-managed image stripping for vLLM's multimodal "
               "processor cache.")
              .def(false)
              .no({false}),
          num("waitForModelTimeout",
              "Pre-flight readiness probe timeout in seconds; 0 disables "
              "the probe.")
              .def(0.0)
              .min(0)
              .no({0}),
          num("waitForModelInterval",
              "Seconds between readiness probe attempts.")
              .def(5.0)
              .min(0, true)
              .no({5}),
          str("waitForModelMode", "Strategy for the readiness probe.")
              .one_of({"models", "inference", "both"})
              .def("inference")
              .no({"inference"}),
          obj("resetKvCache",
              "POST a KV-cache reset once per logical benchmark cell before "
              "warmup/profiling.")
              .no()
              .props({num("timeoutSeconds",
                          "Timeout in seconds for the reset_kv_cache POST."),
                      num("maxRetrySeconds", "Total retry budget in seconds."),
                      str("path", "Relative path for KV-cache reset.")}),
          obj("serverProfiler",
              "Start/stop the server profiler around each profiling phase.")
              .no()
              .props({num("timeoutSeconds",
                          "Timeout in seconds for profiler start/stop POSTs."),
                      str("startPath", "Relative path for profiler start."),
                      str("stopPath", "Relative path for profiler stop.")}),
          str("caFile", "PEM CA bundle to verify https servers (aiperf-node's "
                        "--ca-file).")
              .ext(),
          flag("insecure",
               "Do not verify TLS certificates (aiperf-node's --insecure).")
              .def(false)
              .ext(),
      });
}

field dataset_item() {
  return obj("", "One dataset: synthetic prompts or a file.")
      .props({
          str("name", "Dataset identifier, used in result file paths.")
              .min_len(1)
              .req(),
          str("type", "Dataset type discriminator.")
              .one_of({"synthetic", "file", "public"})
              .only({"synthetic", "file"})
              .req(),
          integer("entries", "Synthetic: unique entries to generate. File: "
                             "limit of records to "
                             "use.")
              .min(1),
          integer("randomSeed",
                  "Per-dataset random seed overriding the global randomSeed.")
              .no(),
          str("sampling", "Strategy for selecting entries from the dataset.")
              .one_of({"sequential", "random", "shuffle"})
              .def("sequential")
              .only({"sequential"}),
          obj("prompts", "Prompt/token length configuration (ISL, OSL).")
              .props(
                  {distribution("isl", "Input sequence length in tokens."),
                   distribution(
                       "osl", "Output sequence length (max tokens) in tokens."),
                   str("corpus", "Text synthetic prompts are cut from.")
                       .one_of({"sonnet", "coding", "random"})
                       .def("sonnet")
                       .only({"sonnet", "coding"}),
                   integer("batchSize", "Inputs per request.").min(1).no({1}),
                   anything("sequenceDistribution", "Weighted ISL/OSL mixture.")
                       .mixed()
                       .no()}),
          distribution("isl", "Shorthand sibling for prompts.isl."),
          distribution("osl", "Shorthand sibling for prompts.osl."),
          anything("prefixPrompts",
                   "Shared prefix configuration for KV cache testing.")
              .no(),
          distribution("turns",
                       "Number of request-response turns per conversation."),
          distribution("turnDelay",
                       "Delay in milliseconds between consecutive turns."),
          num("turnDelayRatio", "Multiplier for scaling all turn delays.")
              .min(0)
              .def(1.0),
          anything("images", "Synthetic image configuration.").no(),
          anything("audio", "Synthetic audio configuration.").no(),
          anything("video", "Synthetic video configuration.").no(),
          anything("rankings", "Rankings/reranking configuration.").no(),
          str("path",
              "Path to the file containing the benchmark dataset (JSONL)."),
          anything("records", "Inline benchmark records.").mixed().no(),
          str("format", "Dataset file format.")
              .one_of({"single_turn", "multi_turn", "mooncake_trace",
                       "bailian_trace", "baseten_trace", "burst_gpt_trace",
                       "weka_trace", "dynamo_trace", "sagemaker_data_capture",
                       "random_pool"})
              .only({"single_turn", "multi_turn", "mooncake_trace"}),
          anything("synthesis", "Trace synthesis/transformation configuration.")
              .no(),
          num("traceSessionSampleRatio",
              "Fraction of trace sessions to keep for replay.")
              .no(),
          num("interTurnDelayCapSeconds", "Clamp per-turn replay delays.").no(),
          num("maxIdleGapCapSeconds", "Collapse idle gaps between requests.")
              .no(),
          num("replaySpeedup", "Trace replay wall-clock compression.").no(),
          flag("openLoopReplay", "Open-loop trace replay.")
              .def(true)
              .no({true}),
          flag("openLoopStrict",
               "Fire every trace row at its absolute timestamp.")
              .def(false)
              .no({false}),
      });
}

field phase_item() {
  return obj("", "One benchmark phase; the list order is the execution order.")
      .props({
          str("name", "Unique workflow label for this phase.")
              .pat("^[A-Za-z_][A-Za-z0-9_-]*$")
              .req(),
          str("kind", "Semantic runtime role for the phase.")
              .one_of({"warmup", "profiling"}),
          str("type", "Load generation type.")
              .one_of({"concurrency", "poisson", "gamma", "constant",
                       "user_centric", "fixed_schedule"})
              .req(),
          flag("excludeFromResults",
               "Exclude this phase's metrics from final results (forced by "
               "kind).")
              .def(false),
          integer("requests", "Stop after this many requests sent.").min(1),
          num("duration", "Stop after this time elapsed (seconds or '5m').")
              .min(0, true)
              .secs(),
          integer("sessions", "Stop after this many sessions completed.")
              .min(1),
          integer("concurrency", "Max concurrent in-flight requests.").min(1),
          anything("concurrencyRamp", "Ramp concurrency from a lower value.")
              .mixed()
              .no(),
          integer("prefillConcurrency",
                  "Max concurrent requests in prefill stage.")
              .min(1),
          anything("prefillRamp",
                   "Ramp prefill_concurrency from a lower value.")
              .mixed()
              .no(),
          num("gracePeriod",
              "Seconds to wait for in-flight requests after duration expires.")
              .min(0)
              .secs(),
          anything("cancellation",
                   "Request cancellation testing configuration.")
              .no(),
          anything("sla", "SLA filters evaluated by adaptive load controllers.")
              .mixed()
              .no(),
          flag("seamless",
               "Start this phase immediately when the previous phase stops.")
              .def(false)
              .no({false}),
          str("timingMode", "Explicit timing-strategy override for this phase.")
              .no(),
          num("failedRequestThreshold",
              "Abort the run when failed/total records exceeds this "
              "ratio.")
              .min(0)
              .max(1),
          num("trajectoryStartMinRatio", "AGENTIC_REPLAY only.")
              .def(0.25)
              .min(0)
              .max(1)
              .no({0.25}),
          num("trajectoryStartMaxRatio", "AGENTIC_REPLAY only.")
              .def(0.75)
              .min(0)
              .max(1)
              .no({0.75}),
          flag("burstPhaseStarts", "AGENTIC_REPLAY only.")
              .def(false)
              .no({false}),
          num("agenticCacheWarmupDuration", "AGENTIC_REPLAY only.").no(),
          num("agenticWarmupGracePeriod", "AGENTIC_REPLAY only.").no(),
          num("rate", "Target request rate in requests per second.")
              .min(0, true),
          anything("rateRamp", "Ramp rate from a lower value.").mixed().no(),
          anything("rateSeries", "Piecewise-linear request-rate schedule.")
              .no(),
          num("smoothness",
              "Gamma distribution shape parameter (1.0 = Poisson).")
              .min(0, true),
          integer("users", "Number of simulated concurrent users.").min(1),
          flag("autoOffset", "Normalize trace timestamps to start at 0.")
              .def(true),
          integer("startOffset",
                  "Filter out trace requests before this timestamp in ms.")
              .min(0),
          integer("endOffset",
                  "Filter out trace requests after this timestamp in ms.")
              .min(0),
          str("dataset", "Name of the dataset this phase reads."),
      });
}

field artifacts() {
  return obj("artifacts", "Artifacts configuration for benchmark output.")
      .props({
          str("dir", "Output directory for all benchmark artifacts.")
              .def("artifacts"),
          str("prefix", "Base filename override applied to all exports.").no(),
          anything(
              "summary",
              "Summary export formats ([json]); the CSV summary is emitted "
              "regardless.")
              .mixed(),
          anything("records", "Per-request records export formats ([jsonl]); "
                              "false disables the "
                              "per-record JSONL file.")
              .mixed(),
          flag("raw", "Export raw request/response payloads as JSONL.")
              .def(false),
          flag("trace", "Export HTTP trace data for debugging.")
              .def(false)
              .no({false}),
          num("sliceDuration",
              "Time slice duration in seconds for trend analysis.")
              .secs(),
          flag("showTraceTiming",
               "Display HTTP trace timing metrics in console output.")
              .def(false)
              .no({false}),
          arr("userFiles", "User-defined templated files materialized into the "
                           "run directory.")
              .no()
              .of(obj("", "One user-declared output file.")
                      .props({str("path",
                                  "Output path relative to the run directory.")
                                  .req(),
                              str("format", "Serialization format.")
                                  .one_of({"json", "yaml", "text"}),
                              anything("content", "Templated value.")
                                  .mixed()
                                  .req()})),
          flag("autoPlot", "Auto-invoke `aiperf plot` after the benchmark.")
              .no({false}),
          flag("plotRequired", "Treat auto-plot failures as fatal.")
              .def(false)
              .no({false}),
          flag("exportOutputsJson",
               "Export generated response text after the run.")
              .no({false}),
      });
}

field runtime() {
  return obj("runtime",
             "Runtime configuration for worker processes and inter-process "
             "communication.")
      .at(shape::runtime)
      .props({
          str("ui",
              "User interface mode. aiperf-node implements simple and none.")
              .one_of({"dashboard", "none", "simple"})
              .def("dashboard")
              .only({"none", "simple"}),
          int_or_str(
              "workers",
              "Total worker processes across the deployment. Unset = derived "
              "from CPU cores."),
          integer("recordProcessors",
                  "Total parallel record processors across the deployment.")
              .min(1),
          str("serviceRunType",
              "Execution mode. The operator forces 'kubernetes' on the "
              "controller pod; do not set this in a CR spec.")
              .one_of({"kubernetes", "multiprocessing"})
              .def("multiprocessing")
              .managed(),
          anything("communication",
                   "Inter-process communication configuration (set by the "
                   "operator).")
              .managed(),
          int_or_str("apiPort", "AIPerf API server port.").no(),
          str("apiHost", "AIPerf API server host. Requires api_port to be set.")
              .no(),
          str("datasetApiBaseUrl",
              "Base URL the operator injects into worker pods; do not set in "
              "a CR spec.")
              .managed(),
          integer("workersPerPod",
                  "Worker containers packed into each Kubernetes worker pod.")
              .min(1)
              .max(100),
          integer("recordProcessorsPerPod",
                  "Record processors packed into each worker pod.")
              .min(1)
              .max(100)
              .no(),
          int_or_str("workersMin",
                     "Lower bound on worker processes for the adaptive ramp.")
              .no(),
          num("statsInterval",
              "Interval in seconds between realtime stats publishes.")
              .min(0)
              .max(1000)
              .no(),
          integer("workerPods",
                  "Worker pods of the distributed runtime (aiperf-node's "
                  "--worker-pods).")
              .min(1)
              .def(1)
              .ext(),
          integer("ioThreads", "HTTP I/O threads (aiperf-node's --io-threads).")
              .min(1)
              .max(64)
              .ext(),
          str("ioPriority",
              "HTTP I/O thread priority (aiperf-node's --io-priority).")
              .one_of({"auto", "normal", "high"})
              .def("auto")
              .ext(),
          str("schedulerPolicy",
              "Where the actors run (aiperf-node's --scheduler-policy).")
              .one_of({"auto", "io-thread", "sharing", "stealing"})
              .def("auto")
              .ext(),
          integer("schedulerThreads",
                  "CAF scheduler threads (aiperf-node's --scheduler-threads).")
              .min(1)
              .ext(),
      });
}

field build_benchmark() {
  return obj("benchmark", "Benchmark workload (BenchmarkConfig).")
      .req()
      .props({
          anything("models",
                   "Model configuration: a model name, a list of names, or "
                   "{strategy, items: [{name}]}.")
              .mixed(),
          anything("model", "Shorthand sibling for `models`.").mixed(),
          endpoint(),
          arr("datasets", "Dataset configuration as a single-element list.")
              .items_between(1, 1)
              .of(f{std::move(dataset_item())}.opaque()),
          anything("dataset", "Shorthand sibling for `datasets`.").mixed(),
          arr("phases",
              "Ordered benchmark phases; each entry has a unique name.")
              .items_between(1, std::nullopt)
              .of(f{std::move(phase_item())}.opaque()),
          anything("warmup",
                   "Shorthand sibling for `phases` (the warmup entry).")
              .mixed(),
          anything("profiling",
                   "Shorthand sibling for `phases` (the profiling entry).")
              .mixed(),
          artifacts(),
          map("slos",
              "SLO configuration: metric tag → threshold in display units.")
              .of(number_value()),
          obj("tokenizer", "Tokenizer configuration for token counting and "
                           "prompt generation.")
              .props({str("name",
                          "Tokenizer: whitespace8, a tokenizer.json path or "
                          "directory, or a Hugging Face model id."),
                      str("revision", "Model revision to use.").def("main"),
                      flag("trustRemoteCode", "Allow custom tokenizer code.")
                          .def(false)
                          .no({false}),
                      flag("applyChatTemplate",
                           "Apply the chat template when counting input "
                           "tokens.")
                          .def(false)
                          .no({false}),
                      map("resolvedNames",
                          "Pre-resolved tokenizer names (runtime-only).")
                          .no()
                          .of(string_value())}),
          anything("gpuTelemetry",
                   "GPU telemetry configuration for DCGM metrics collection.")
              .mixed()
              .no({json{{"enabled", false}}, false}),
          anything("serverMetrics",
                   "Server metrics configuration for Prometheus scraping.")
              .mixed()
              .no({json{{"enabled", false}}, false}),
          anything("networkLatency",
                   "Network latency calibration configuration.")
              .mixed()
              .no({json{{"enabled", false}}, false}),
          obj("otel", "OpenTelemetry metrics streaming configuration.")
              .no()
              .props(
                  {str("metricsUrl", "OTLP/HTTP metrics endpoint URL."),
                   flag("streamMetricsEnabled",
                        "Stream metric records to OTel.")
                       .def(true),
                   flag("streamTimingEnabled", "Stream timing records to OTel.")
                       .def(true),
                   map("customResourceAttributes",
                       "Custom OTel resource attributes.")
                       .of(string_value()),
                   str("genAiProvider",
                       "GenAI semantic convention provider override.")}),
          obj("mlflow", "MLflow tracking and artifact-upload configuration.")
              .no()
              .props(
                  {str("trackingUri", "MLflow tracking URI."),
                   str("experiment", "MLflow experiment name.").def("aiperf"),
                   str("runName", "MLflow run name."),
                   map("tags", "Additional MLflow run tags.")
                       .of(string_value()),
                   str("parentRunId", "Optional MLflow parent run ID."),
                   arr("artifactGlobs", "Artifact glob overrides.")
                       .of(string_value())}),
          obj("wandb", "Weights & Biases run-upload configuration.")
              .no()
              .props({str("project", "Weights & Biases project name."),
                      str("entity", "Weights & Biases entity."),
                      str("runName", "Weights & Biases run name."),
                      arr("tags", "Additional run tags.").of(string_value())}),
          runtime(),
          obj("logging",
              "Logging configuration for verbosity and debug settings.")
              .props({str("level", "Global logging verbosity level.")
                          .one_of({"TRACE", "DEBUG", "INFO", "NOTICE",
                                   "WARNING", "SUCCESS", "ERROR", "CRITICAL"})
                          .def("INFO")
                          .only({"TRACE", "DEBUG", "INFO", "WARNING", "ERROR",
                                 "CRITICAL"})}),
          obj("metrics",
              "Metrics aggregation configuration for benchmark summaries.")
              .no({json::object()}),
          obj("accuracy", "Configuration for accuracy benchmarking mode.")
              .no()
              .props({str("benchmark", "Accuracy benchmark to run."),
                      arr("tasks", "Tasks within the benchmark to evaluate.")
                          .of(string_value()),
                      integer("nShots", "Few-shot examples.").min(0).max(32),
                      flag("enableCot", "Enable chain-of-thought prompting."),
                      str("grader", "Override the default grader."),
                      str("systemPrompt", "Custom system prompt."),
                      flag("verbose", "Verbose accuracy output.").def(false)}),
          str("scenario", "Lock all benchmark invariants for a named scenario.")
              .no(),
          flag("unsafeOverride", "Convert scenario lock errors to warnings.")
              .def(false)
              .no({false}),
      });
}

field multi_run() {
  return obj("multiRun",
             "Multi-run benchmarking configuration for statistical reporting.")
      .at(shape::multi_run)
      .props({
          integer("numRuns", "Upper bound on trials per variation.")
              .def(1)
              .min(1)
              .max(10)
              .no({1}),
          num("cooldownSeconds", "Cooldown between trials.")
              .def(0.0)
              .min(0)
              .max(86400)
              .no({0}),
          num("confidenceLevel", "Confidence level for aggregate statistics.")
              .def(0.95)
              .min(0, true)
              .max(1, true)
              .no({0.95}),
          flag("setConsistentSeed",
               "Auto-set a random seed when none is given.")
              .def(true)
              .no({true}),
          flag("varySeedPerTrial", "Derive a distinct seed for each trial.")
              .def(false)
              .no({false}),
          flag("disableWarmupAfterFirst", "Skip warmup on trials 2..N.")
              .def(true)
              .no({true}),
          obj("convergence", "Adaptive trial-stopping criterion.")
              .no()
              .props({str("metric", "Metric tag to evaluate convergence on.")
                          .req(),
                      str("stat", "Statistic on the metric to inspect.")
                          .one_of(
                              {"avg", "p50", "p90", "p95", "p99", "min", "max"})
                          .def("avg"),
                      str("mode", "Convergence criterion plugin name.")
                          .one_of({"ci_width", "cv", "distribution"})
                          .def("ci_width"),
                      num("threshold", "Criterion threshold.")
                          .min(0, true)
                          .max(1, true),
                      integer("minRuns",
                              "Minimum trials before the criterion is checked.")
                          .def(2)
                          .min(2)}),
      });
}

// AIPerfConfig's envelope keys, in AIPerf's order, without `benchmark`.
std::vector<field> envelope() {
  std::vector<field> out;
  out.push_back(str("schemaVersion", "AIPerf config schema version.")
                    .one_of({"2.0"})
                    .def("2.0"));
  out.push_back(
      anything("sweep", "Sweep configuration for parameter exploration.").no());
  out.push_back(multi_run());
  out.push_back(
      anything("plot", "Plot configuration for this run/sweep.").no());
  out.push_back(anything("variables",
                         "User-defined values exposed to Jinja2 during config "
                         "load.")
                    .no());
  out.push_back(
      integer("randomSeed", "Global random seed for reproducibility.").min(0));
  out.push_back(
      flag("noSweepTable", "Suppress the per-cell streaming sweep table.")
          .def(false)
          .no({false}));
  return out;
}

field build_config() {
  auto env = envelope();
  std::vector<field> props;
  props.push_back(std::move(env[0])); // schemaVersion
  props.push_back(build_benchmark());
  for (size_t i = 1; i < env.size(); ++i)
    props.push_back(std::move(env[i]));
  return obj("", "AIPerfConfig: the document `aiperf profile -f FILE` reads.")
      .props(std::move(props));
}

field pod_template() {
  auto items = [](std::string n, std::string d) {
    return arr(std::move(n), std::move(d)).of(anything("", "").x);
  };
  auto typed_any = [](std::string n, std::string d) {
    // Objects of Kubernetes' own types, kept verbatim.
    return anything(std::move(n), std::move(d));
  };
  return obj("podTemplate", "Pod template configuration")
      .props({
          items("env", "Environment variables in K8s EnvVar format"),
          items("volumes", "Pod volumes in K8s Volume format"),
          items("volumeMounts", "Volume mounts in K8s VolumeMount format"),
          map("nodeSelector", "Node selector labels").of(string_value()),
          items("tolerations",
                "Pod tolerations for scheduling on tainted nodes"),
          typed_any("affinity",
                    "Pod affinity/anti-affinity rules in K8s Affinity format"),
          map("annotations", "Additional pod annotations").of(string_value()),
          map("labels", "Additional pod labels").of(string_value()),
          items("imagePullSecrets",
                "Image pull secrets, K8s LocalObjectReference shape"),
          str("serviceAccountName", "Service account name for pods"),
          typed_any("containerSecurityContext",
                    "Container securityContext overrides"),
          flag("shareProcessNamespace",
               "All containers in the pod share a single PID namespace")
              .def(false),
          str("priorityClassName", "Native K8s PriorityClass name for the pod"),
          str("runtimeClassName", "K8s RuntimeClass name"),
          str("schedulerName", "Name of the scheduler to dispatch the pod to"),
          items("topologySpreadConstraints",
                "Pod TopologySpreadConstraints in K8s format"),
          items("hostAliases", "Entries appended to the pod's /etc/hosts"),
          str("dnsPolicy", "Pod DNS policy")
              .one_of({"ClusterFirst", "ClusterFirstWithHostNet", "Default",
                       "None"}),
          typed_any("dnsConfig", "Pod DNS config (K8s PodDNSConfig format)"),
          integer("terminationGracePeriodSeconds",
                  "Seconds the kubelet waits before SIGKILL")
              .min(0),
          typed_any("podSecurityContext", "Pod-level securityContext"),
          items("initContainers",
                "InitContainers that run to completion before the main "
                "containers start"),
          typed_any("extraPodSpec",
                    "Raw PodSpec keys merged into the rendered pod spec last"),
      });
}

field build_job_spec() {
  auto env = envelope();
  std::vector<field> p;
  p.push_back(str("image", "Container image for AIPerf").min_len(1));
  p.push_back(str("imagePullPolicy", "Kubernetes image pull policies.")
                  .one_of({"Always", "Never", "IfNotPresent"}));
  p.push_back(build_benchmark());
  p.push_back(str("resourceMode",
                  "CPU/memory resource mode for controller and worker pods.")
                  .one_of({"guaranteed", "burstable", "none"})
                  .def("burstable"));
  p.push_back(integer("connectionsPerWorker",
                      "Maximum concurrent connections each worker "
                      "handles.")
                  .def(100)
                  .min(1));
  p.push_back(num("timeoutSeconds", "Job timeout in seconds (0 = no timeout)")
                  .def(0)
                  .min(0));
  p.push_back(integer("ttlSecondsAfterFinished", "TTL after finished (seconds)")
                  .min(0)
                  .def(300));
  p.push_back(
      integer("resultsTtlDays", "Days to retain result files before cleanup")
          .min(1)
          .max(365));
  p.push_back(flag("keepFailedPods",
                   "Preserve failed JobSet pod attempts for debugging.")
                  .def(false));
  p.push_back(flag("cancel", "Set to true to cancel the job").def(false));
  p.push_back(pod_template());
  p.push_back(
      obj("scheduling", "Kueue gang-scheduling configuration.")
          .props({str("queueName", "Kueue LocalQueue name for gang-scheduling"),
                  str("priorityClass", "Kueue WorkloadPriorityClass name")}));
  for (auto& e : env)
    p.push_back(std::move(e));
  p.push_back(flag("skipEndpointCheck",
                   "Skip the operator-side endpoint reachability probe "
                   "before deploying.")
                  .def(false));
  p.push_back(
      obj("failurePolicy", "Failure handling policy.")
          .props(
              {str("onChildFailure", "continue: advance to the next variation. "
                                     "abort: terminate the sweep.")
                   .one_of({"continue", "abort"})
                   .def("continue"),
               integer("maxFailures", "Hard failure budget (0 = unbounded).")
                   .def(0)
                   .min(0)}));
  return obj("spec", "AIPerfJob specification.")
      .at(shape::job_spec)
      .props(std::move(p));
}

} // namespace

const field& benchmark_schema() {
  static const field root = build_benchmark();
  return root;
}

const field& config_schema() {
  static const field root = build_config();
  return root;
}

const field& job_spec_schema() {
  static const field root = build_job_spec();
  return root;
}

const std::vector<std::string>& operator_managed_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    for_each_field(benchmark_schema(), "benchmark",
                   [&](const std::string& path, const field& x) {
                     if (x.status == support::operator_managed)
                       out.push_back(path);
                   });
    return out;
  }();
  return paths;
}

} // namespace aiperf::config::benchmark
