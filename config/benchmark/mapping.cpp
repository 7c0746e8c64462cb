#include "config/benchmark/mapping.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace aiperf::config::benchmark {

namespace {

caf::error bad(std::string_view where, std::string_view message) {
  return flag_error(errc::invalid, where, message);
}

/// {mean, stddev}, or the bare mean when stddev is 0 and `bare` allows it.
json distribution(double mean, double stddev) {
  json out = json::object();
  out["mean"] = mean;
  out["stddev"] = stddev;
  return out;
}

json integral_distribution(std::int64_t mean, double stddev) {
  json out = json::object();
  out["mean"] = mean;
  out["stddev"] = stddev;
  return out;
}

/// Reads a distribution field: a number, or {mean, stddev}.
void read_distribution(const json& v, double& mean, double& stddev) {
  if (v.is_number()) {
    mean = v.get<double>();
    stddev = 0;
    return;
  }
  if (v.contains("mean"))
    mean = v["mean"].get<double>();
  stddev = v.contains("stddev") ? v["stddev"].get<double>() : 0.0;
}

caf::expected<std::int64_t> whole(double x, const std::string& path) {
  if (std::floor(x) != x || !std::isfinite(x))
    return bad(path, "must be a whole number here (got " + json(x).dump()
                         + "); aiperf-node's flags take integers");
  return static_cast<std::int64_t>(x);
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// `err` with the file named first; the field path stays its payload.
caf::error prefixed(const std::filesystem::path& file, const caf::error& err) {
  return make_error(error_code(err, errc::invalid),
                    file.string() + ": " + error_message(err),
                    std::string{error_flag(err)});
}

json seconds(double x) {
  if (std::isinf(x))
    return "inf";
  return x;
}

} // namespace

caf::expected<profile_config> with_cli_text_parsed(profile_config cfg) {
  if (auto ok = consume_cli_text(cfg); !ok)
    return ok.error();
  return cfg;
}

caf::expected<json> from_profile_config(const profile_config& raw) {
  auto parsed = with_cli_text_parsed(raw);
  if (!parsed)
    return parsed.error();
  const auto& cfg = *parsed;
  const profile_config d; // the defaults
  // Settings the document model does not carry yet are refused rather than
  // dropped, so `-f`, `kube generate --operator` and an AIPerfJob never run
  // a different benchmark than the flags asked for.
  if (cfg.request_cancellation_rate != d.request_cancellation_rate)
    return bad("--request-cancellation-rate",
               "has no benchmark-document field in aiperf-node yet; pass it "
               "as a profile flag (kube direct mode runs flags as given)");
  if (cfg.request_cancellation_delay != d.request_cancellation_delay)
    return bad("--request-cancellation-delay",
               "has no benchmark-document field in aiperf-node yet; pass it "
               "as a profile flag (kube direct mode runs flags as given)");
  if (cfg.profile_export_prefix)
    return bad("--profile-export-prefix",
               "has no benchmark-document field in aiperf-node yet; pass it "
               "as a profile flag");
  json doc = json::object();
  if (cfg.random_seed)
    doc["randomSeed"] = *cfg.random_seed;
  json b = json::object();

  // models
  if (cfg.model_selection_strategy != d.model_selection_strategy) {
    json items = json::array();
    for (const auto& m : cfg.model_names)
      items.push_back(json{{"name", m}});
    b["models"] = json{
        {"strategy", std::string{to_string(cfg.model_selection_strategy)}},
        {"items", std::move(items)}};
  } else if (!cfg.model_names.empty()) {
    b["models"] = cfg.model_names;
  }

  // endpoint
  json e = json::object();
  if (!cfg.urls.empty())
    e["urls"] = cfg.urls;
  if (cfg.endpoint_type != d.endpoint_type)
    e["type"] = std::string{to_string(cfg.endpoint_type)};
  if (cfg.custom_endpoint)
    e["path"] = *cfg.custom_endpoint;
  if (cfg.api_key)
    e["apiKey"] = *cfg.api_key;
  if (cfg.request_timeout_seconds != d.request_timeout_seconds)
    e["timeout"] = cfg.request_timeout_seconds;
  if (cfg.streaming)
    e["streaming"] = true;
  if (cfg.use_legacy_max_tokens)
    e["useLegacyMaxTokens"] = true;
  if (cfg.use_server_token_count)
    e["useServerTokenCount"] = true;
  if (!cfg.headers.empty()) {
    json h = json::object();
    for (const auto& x : cfg.headers)
      h[x.name] = x.value;
    e["headers"] = std::move(h);
  }
  if (!cfg.extra_inputs.empty()) {
    json x = json::object();
    for (const auto& in : cfg.extra_inputs)
      x[in.key] = json::parse(in.json, nullptr, false);
    e["extra"] = std::move(x);
  }
  if (cfg.ca_file)
    e["caFile"] = *cfg.ca_file;
  if (cfg.insecure)
    e["insecure"] = true;
  b["endpoint"] = std::move(e);

  // dataset
  json ds = json::object();
  ds["name"] = "default";
  if (cfg.input_file) {
    ds["type"] = "file";
    ds["path"] = *cfg.input_file;
    if (cfg.custom_dataset_type)
      ds["format"] = std::string{to_string(*cfg.custom_dataset_type)};
  } else {
    ds["type"] = "synthetic";
  }
  if (cfg.num_dataset_entries != d.num_dataset_entries)
    ds["entries"] = cfg.num_dataset_entries;
  json prompts = json::object();
  if (cfg.isl_mean != d.isl_mean || cfg.isl_stddev != d.isl_stddev)
    prompts["isl"] = integral_distribution(cfg.isl_mean, cfg.isl_stddev);
  if (cfg.osl_mean || cfg.osl_stddev != d.osl_stddev) {
    if (!cfg.osl_mean)
      return bad("--osl-stddev",
                 "needs --osl (a Config-v2 file gives osl as {mean, stddev})");
    prompts["osl"] = integral_distribution(*cfg.osl_mean, cfg.osl_stddev);
  }
  if (cfg.prompt_corpus != d.prompt_corpus)
    prompts["corpus"] = std::string{to_string(cfg.prompt_corpus)};
  if (!prompts.empty()) {
    if (cfg.input_file)
      return bad("--isl", "applies to synthetic prompts, not to --input-file");
    ds["prompts"] = std::move(prompts);
  }
  if (cfg.conversation_turn_mean != d.conversation_turn_mean
      || cfg.conversation_turn_stddev != d.conversation_turn_stddev)
    ds["turns"] = integral_distribution(cfg.conversation_turn_mean,
                                        cfg.conversation_turn_stddev);
  if (cfg.conversation_turn_delay_mean != d.conversation_turn_delay_mean
      || cfg.conversation_turn_delay_stddev != d.conversation_turn_delay_stddev)
    ds["turnDelay"] = distribution(cfg.conversation_turn_delay_mean,
                                   cfg.conversation_turn_delay_stddev);
  if (cfg.conversation_turn_delay_ratio != d.conversation_turn_delay_ratio)
    ds["turnDelayRatio"] = cfg.conversation_turn_delay_ratio;
  b["datasets"] = json::array({std::move(ds)});

  // phases
  json phases = json::array();
  if (cfg.warmup_request_count > 0)
    phases.push_back(json{{"name", "warmup"},
                          {"kind", "warmup"},
                          {"type", "concurrency"},
                          {"requests", cfg.warmup_request_count}});
  json p = json::object();
  p["name"] = "profiling";
  p["kind"] = "profiling";
  if (cfg.fixed_schedule) {
    p["type"] = "fixed_schedule";
    p["autoOffset"] = cfg.fixed_schedule_auto_offset;
    if (cfg.fixed_schedule_start_offset)
      p["startOffset"] = *cfg.fixed_schedule_start_offset;
    if (cfg.fixed_schedule_end_offset)
      p["endOffset"] = *cfg.fixed_schedule_end_offset;
  } else if (cfg.user_centric_rate || cfg.num_users) {
    p["type"] = "user_centric";
    if (cfg.user_centric_rate)
      p["rate"] = *cfg.user_centric_rate;
    if (cfg.num_users)
      p["users"] = *cfg.num_users;
  } else if (cfg.request_rate) {
    p["type"] = std::string{to_string(cfg.arrival_pattern)};
    p["rate"] = *cfg.request_rate;
  } else {
    if (cfg.arrival_pattern != d.arrival_pattern)
      return bad("--arrival-pattern", "needs --request-rate");
    p["type"] = "concurrency";
  }
  if (cfg.arrival_smoothness) {
    if (p["type"] != "gamma")
      return bad("--arrival-smoothness",
                 "needs --arrival-pattern gamma and --request-rate");
    p["smoothness"] = *cfg.arrival_smoothness;
  }
  if (cfg.concurrency)
    p["concurrency"] = *cfg.concurrency;
  if (cfg.prefill_concurrency)
    p["prefillConcurrency"] = *cfg.prefill_concurrency;
  if (cfg.request_count)
    p["requests"] = *cfg.request_count;
  if (cfg.benchmark_duration)
    p["duration"] = seconds(*cfg.benchmark_duration);
  if (cfg.benchmark_grace_period)
    p["gracePeriod"] = seconds(*cfg.benchmark_grace_period);
  if (cfg.conversation_num)
    p["sessions"] = *cfg.conversation_num;
  if (cfg.failed_request_threshold)
    p["failedRequestThreshold"] = *cfg.failed_request_threshold;
  phases.push_back(std::move(p));
  b["phases"] = std::move(phases);

  if (!cfg.goodput.empty()) {
    json slos = json::object();
    for (const auto& g : cfg.goodput)
      slos[g.tag] = g.value;
    b["slos"] = std::move(slos);
  }
  if (cfg.tokenizer != d.tokenizer
      || cfg.tokenizer_revision != d.tokenizer_revision) {
    json t = json::object();
    if (cfg.tokenizer != d.tokenizer)
      t["name"] = cfg.tokenizer;
    if (cfg.tokenizer_revision != d.tokenizer_revision)
      t["revision"] = cfg.tokenizer_revision;
    b["tokenizer"] = std::move(t);
  }

  json a = json::object();
  if (cfg.output_artifact_dir != d.output_artifact_dir)
    a["dir"] = cfg.output_artifact_dir;
  if (cfg.export_level == export_level::summary)
    a["records"] = false;
  if (cfg.export_level == export_level::raw)
    a["raw"] = true;
  if (cfg.slice_duration)
    a["sliceDuration"] = seconds(*cfg.slice_duration);
  if (!a.empty())
    b["artifacts"] = std::move(a);

  json r = json::object();
  if (cfg.ui != d.ui)
    r["ui"] = std::string{to_string(cfg.ui)};
  if (cfg.workers_max)
    r["workers"] = *cfg.workers_max;
  if (cfg.record_processors)
    r["recordProcessors"] = *cfg.record_processors;
  if (cfg.workers_per_pod)
    r["workersPerPod"] = *cfg.workers_per_pod;
  if (cfg.worker_pods != d.worker_pods)
    r["workerPods"] = cfg.worker_pods;
  if (cfg.io_threads)
    r["ioThreads"] = *cfg.io_threads;
  if (cfg.io_priority != d.io_priority)
    r["ioPriority"] = std::string{to_string(cfg.io_priority)};
  if (cfg.scheduler_policy != d.scheduler_policy)
    r["schedulerPolicy"] = std::string{to_string(cfg.scheduler_policy)};
  if (cfg.scheduler_threads)
    r["schedulerThreads"] = *cfg.scheduler_threads;
  if (!r.empty())
    b["runtime"] = std::move(r);

  if (cfg.log_level != d.log_level) {
    if (cfg.log_level == "off")
      return bad("--log-level",
                 "'off' has no Config-v2 equivalent (AIPerf's levels are "
                 "TRACE..CRITICAL); use critical");
    b["logging"] = json{{"level", upper(cfg.log_level)}};
  }

  // AIPerf's order: schemaVersion, benchmark, then the envelope's other keys.
  json out = json::object();
  out["schemaVersion"] = "2.0";
  out["benchmark"] = std::move(b);
  for (auto& [k, v] : doc.items())
    out[k] = std::move(v);
  return out;
}

namespace {

caf::expected<profile_config> map_document(const json& doc) {
  profile_config cfg;
  if (doc.contains("randomSeed"))
    cfg.random_seed = doc["randomSeed"].get<std::uint64_t>();
  if (!doc.contains("benchmark") || !doc["benchmark"].is_object())
    return flag_error(errc::missing, "benchmark", "required; add it");
  const auto& b = doc["benchmark"];

  if (b.contains("models")) {
    const auto& m = b["models"];
    if (m.is_array()) {
      cfg.model_names = m.get<std::vector<std::string>>();
    } else if (m.is_object()) {
      if (m.contains("strategy")) {
        auto s = enum_from_string<model_selection_strategy>(
            m["strategy"].get<std::string>());
        if (!s)
          return bad("benchmark.models.strategy",
                     "must be round_robin or random");
        cfg.model_selection_strategy = *s;
      }
      for (const auto& item : m["items"])
        cfg.model_names.push_back(item["name"].get<std::string>());
    }
  }

  if (b.contains("endpoint")) {
    const auto& e = b["endpoint"];
    if (e.contains("urls"))
      cfg.urls = e["urls"].get<std::vector<std::string>>();
    if (e.contains("type")) {
      auto t = enum_from_string<endpoint_type>(e["type"].get<std::string>());
      if (!t)
        return bad("benchmark.endpoint.type",
                   "is not supported by aiperf-node");
      cfg.endpoint_type = *t;
    }
    if (e.contains("path"))
      cfg.custom_endpoint = e["path"].get<std::string>();
    if (e.contains("apiKey"))
      cfg.api_key = e["apiKey"].get<std::string>();
    if (e.contains("timeout"))
      cfg.request_timeout_seconds = e["timeout"].get<double>();
    if (e.contains("streaming"))
      cfg.streaming = e["streaming"].get<bool>();
    if (e.contains("useLegacyMaxTokens"))
      cfg.use_legacy_max_tokens = e["useLegacyMaxTokens"].get<bool>();
    if (e.contains("useServerTokenCount"))
      cfg.use_server_token_count = e["useServerTokenCount"].get<bool>();
    if (e.contains("headers"))
      for (const auto& [k, v] : e["headers"].items())
        cfg.headers.push_back({k, v.get<std::string>()});
    if (e.contains("extra"))
      for (const auto& [k, v] : e["extra"].items())
        cfg.extra_inputs.push_back({k, v.dump()});
    if (e.contains("caFile"))
      cfg.ca_file = e["caFile"].get<std::string>();
    if (e.contains("insecure"))
      cfg.insecure = e["insecure"].get<bool>();
  }

  if (b.contains("datasets") && !b["datasets"].empty()) {
    const auto& ds = b["datasets"][0];
    const std::string dp = "benchmark.datasets[0]";
    if (ds.value("type", "") == "file") {
      cfg.input_file = ds["path"].get<std::string>();
      if (ds.contains("format"))
        cfg.custom_dataset_type = enum_from_string<custom_dataset_type>(
            ds["format"].get<std::string>());
    }
    if (ds.contains("entries"))
      cfg.num_dataset_entries = ds["entries"].get<std::int64_t>();
    if (ds.contains("prompts")) {
      const auto& pr = ds["prompts"];
      if (pr.contains("corpus"))
        if (auto c = enum_from_string<prompt_corpus>(
                pr["corpus"].get<std::string>()))
          cfg.prompt_corpus = *c;
      if (pr.contains("isl")) {
        double mean = static_cast<double>(cfg.isl_mean);
        read_distribution(pr["isl"], mean, cfg.isl_stddev);
        auto m = whole(mean, dp + ".prompts.isl");
        if (!m)
          return m.error();
        cfg.isl_mean = *m;
      }
      if (pr.contains("osl")) {
        double mean = 0;
        read_distribution(pr["osl"], mean, cfg.osl_stddev);
        auto m = whole(mean, dp + ".prompts.osl");
        if (!m)
          return m.error();
        cfg.osl_mean = *m;
      }
    }
    if (ds.contains("turns")) {
      double mean = 1;
      read_distribution(ds["turns"], mean, cfg.conversation_turn_stddev);
      auto m = whole(mean, dp + ".turns");
      if (!m)
        return m.error();
      cfg.conversation_turn_mean = *m;
    }
    if (ds.contains("turnDelay"))
      read_distribution(ds["turnDelay"], cfg.conversation_turn_delay_mean,
                        cfg.conversation_turn_delay_stddev);
    if (ds.contains("turnDelayRatio"))
      cfg.conversation_turn_delay_ratio = ds["turnDelayRatio"].get<double>();
  }

  if (b.contains("phases"))
    for (size_t i = 0; i < b["phases"].size(); ++i) {
      const auto& p = b["phases"][i];
      auto pp = "benchmark.phases[" + std::to_string(i) + "]";
      auto name = p.value("name", "");
      auto kind = p.value("kind", name == "warmup" ? std::string{"warmup"}
                                                   : "profiling");
      if (kind == "warmup") {
        cfg.warmup_request_count = p.value("requests", std::int64_t{0});
        continue;
      }
      auto type = p.value("type", "concurrency");
      if (type == "fixed_schedule") {
        cfg.fixed_schedule = true;
        cfg.fixed_schedule_auto_offset = p.value("autoOffset", true);
        if (p.contains("startOffset"))
          cfg.fixed_schedule_start_offset
              = p["startOffset"].get<std::int64_t>();
        if (p.contains("endOffset"))
          cfg.fixed_schedule_end_offset = p["endOffset"].get<std::int64_t>();
      } else if (type == "user_centric") {
        if (p.contains("rate"))
          cfg.user_centric_rate = p["rate"].get<double>();
        if (p.contains("users"))
          cfg.num_users = p["users"].get<std::int64_t>();
      } else if (type != "concurrency") {
        auto pattern = enum_from_string<arrival_pattern>(type);
        if (!pattern)
          return bad(pp + ".type", "is not supported by aiperf-node");
        cfg.arrival_pattern = *pattern;
        if (p.contains("rate"))
          cfg.request_rate = p["rate"].get<double>();
      }
      if (p.contains("smoothness"))
        cfg.arrival_smoothness = p["smoothness"].get<double>();
      if (p.contains("concurrency"))
        cfg.concurrency = p["concurrency"].get<std::int64_t>();
      if (p.contains("prefillConcurrency"))
        cfg.prefill_concurrency = p["prefillConcurrency"].get<std::int64_t>();
      if (p.contains("requests"))
        cfg.request_count = p["requests"].get<std::int64_t>();
      if (p.contains("duration")) {
        auto s = parse_duration(p["duration"], false);
        if (!s)
          return bad(pp + ".duration",
                     "must be seconds or a duration such as 30s, 5m, 2h");
        cfg.benchmark_duration = *s;
      }
      if (p.contains("gracePeriod")) {
        auto s = parse_duration(p["gracePeriod"], true);
        if (!s)
          return bad(pp + ".gracePeriod",
                     "must be seconds, a duration such as 30s, or inf");
        cfg.benchmark_grace_period = *s;
      }
      if (p.contains("sessions"))
        cfg.conversation_num = p["sessions"].get<std::int64_t>();
      if (p.contains("failedRequestThreshold"))
        cfg.failed_request_threshold
            = p["failedRequestThreshold"].get<double>();
    }

  if (b.contains("slos"))
    for (const auto& [k, v] : b["slos"].items())
      cfg.goodput.push_back({k, v.get<double>()});
  if (b.contains("tokenizer") && b["tokenizer"].contains("name"))
    cfg.tokenizer = b["tokenizer"]["name"].get<std::string>();
  if (b.contains("tokenizer") && b["tokenizer"].contains("revision"))
    cfg.tokenizer_revision = b["tokenizer"]["revision"].get<std::string>();

  if (b.contains("artifacts")) {
    const auto& a = b["artifacts"];
    if (a.contains("dir"))
      cfg.output_artifact_dir = a["dir"].get<std::string>();
    bool raw = a.value("raw", false);
    bool records = !(a.contains("records")
                     && (a["records"] == false || a["records"].empty()));
    if (raw && !records)
      return flag_error(
          errc::conflict, "benchmark.artifacts.raw",
          "raw: true needs the records export; remove records: false");
    cfg.export_level
        = raw ? export_level::raw
              : (records ? export_level::records : export_level::summary);
    if (a.contains("sliceDuration")) {
      auto s = parse_duration(a["sliceDuration"], false);
      if (!s)
        return bad("benchmark.artifacts.sliceDuration",
                   "must be seconds or a duration such as 10s, 1m");
      cfg.slice_duration = *s;
    }
  }

  if (b.contains("runtime")) {
    const auto& r = b["runtime"];
    if (r.contains("ui")) {
      auto u = enum_from_string<ui_type>(r["ui"].get<std::string>());
      if (!u)
        return bad("benchmark.runtime.ui",
                   "'dashboard' is not supported by aiperf-node; use "
                   "simple or none");
      cfg.ui = *u;
    }
    if (r.contains("workers"))
      cfg.workers_max = r["workers"].is_string()
                            ? std::stoi(r["workers"].get<std::string>())
                            : r["workers"].get<int>();
    if (r.contains("recordProcessors"))
      cfg.record_processors = r["recordProcessors"].get<int>();
    if (r.contains("workersPerPod"))
      cfg.workers_per_pod = r["workersPerPod"].get<int>();
    if (r.contains("workerPods"))
      cfg.worker_pods = r["workerPods"].get<int>();
    if (r.contains("ioThreads"))
      cfg.io_threads = r["ioThreads"].get<int>();
    if (r.contains("ioPriority"))
      cfg.io_priority
          = *enum_from_string<io_priority>(r["ioPriority"].get<std::string>());
    if (r.contains("schedulerPolicy"))
      cfg.scheduler_policy = *enum_from_string<scheduler_policy>(
          r["schedulerPolicy"].get<std::string>());
    if (r.contains("schedulerThreads"))
      cfg.scheduler_threads = r["schedulerThreads"].get<int>();
  }
  if (b.contains("logging") && b["logging"].contains("level"))
    cfg.log_level = lower(b["logging"]["level"].get<std::string>());
  return cfg;
}

} // namespace

caf::expected<profile_config> to_profile_config(const json& doc) {
  try {
    return map_document(doc);
  } catch (const std::exception& e) {
    // Only a document validate() refused gets here.
    return flag_error(errc::invalid, "",
                      std::string{"the document does not fit the model ("}
                          + e.what() + "); validate it first");
  }
}

caf::expected<std::vector<std::string>>
load_profile_file(const std::filesystem::path& path, profile_config& cfg) {
  auto doc = read_document(path);
  if (!doc)
    return doc.error();
  auto canonical = normalize(std::move(*doc), document_kind::config_file);
  if (!canonical)
    return prefixed(path, canonical.error());
  canonical = substitute_environment(
      std::move(*canonical), document_kind::config_file, process_environment());
  if (!canonical)
    return prefixed(path, canonical.error());
  std::vector<std::string> warnings;
  auto found = check(*canonical, document_kind::config_file);
  for (const auto& p : found)
    if (p.warning)
      warnings.push_back(path.string() + ": " + to_string(p));
  if (auto ok = validate(*canonical, document_kind::config_file); !ok)
    return prefixed(path, ok.error());
  auto mapped = to_profile_config(*canonical);
  if (!mapped)
    return prefixed(path, mapped.error());
  cfg = std::move(*mapped);
  return warnings;
}

caf::expected<std::vector<std::string>>
apply_file_then_flags(const std::filesystem::path& path, CLI::App& cmd,
                      profile_config& cfg, const CLI::Option* skip) {
  profile_config from_file;
  auto warnings = load_profile_file(path, from_file);
  if (!warnings)
    return warnings;
  cfg = std::move(from_file);
  try {
    for (auto* opt : cmd.get_options())
      if (opt != skip && opt->count() > 0)
        opt->run_callback(); // writes the flag's value over the file's
  } catch (const CLI::Error& e) {
    return flag_error(errc::invalid, "", e.what());
  }
  return warnings;
}

} // namespace aiperf::config::benchmark
