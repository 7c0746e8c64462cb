#include "config/benchmark/validate.hpp"

#include "config/benchmark/cel_rules.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

namespace aiperf::config::benchmark {

std::string to_string(const problem& p) {
  return p.path.empty() ? p.message : p.path + ": " + p.message;
}

std::optional<double> parse_duration(const json& value, bool allow_inf) {
  if (value.is_number())
    return value.get<double>();
  if (!value.is_string())
    return std::nullopt;
  auto s = value.get<std::string>();
  if (s == "inf" || s == "infinity")
    return allow_inf ? std::optional<double>{INFINITY} : std::nullopt;
  static const std::regex re{
      "^\\s*([0-9]+(\\.[0-9]*)?|\\.[0-9]+)\\s*(ms|s|m|h)?\\s*$"};
  std::smatch m;
  if (!std::regex_match(s, m, re))
    return std::nullopt;
  double x = std::stod(m[1].str());
  auto unit = m[3].str();
  if (unit == "ms")
    x /= 1000;
  else if (unit == "m")
    x *= 60;
  else if (unit == "h")
    x *= 3600;
  return x;
}

namespace {

constexpr std::string_view not_supported = "not supported by aiperf-node";

std::string show(const json& v) {
  auto s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string choices(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values)
    out += (out.empty() ? "" : "|") + v;
  return out;
}

std::string type_name(value_type t) {
  switch (t) {
  case value_type::object:
  case value_type::map:
    return "a mapping";
  case value_type::array:
    return "a list";
  case value_type::string:
    return "a string";
  case value_type::integer:
    return "an integer";
  case value_type::number:
    return "a number";
  case value_type::boolean:
    return "true or false";
  case value_type::int_or_string:
    return "an integer or a string";
  case value_type::any:
    return "a value";
  }
  return "a value";
}

std::string fmt(double x) {
  auto s = json(x).dump();
  if (s.size() > 2 && s.ends_with(".0"))
    s.resize(s.size() - 2);
  return s;
}

class checker {
public:
  explicit checker(document_kind kind) : kind_(kind) {}

  std::vector<problem> out;

  void add(std::string path, std::string message, errc code = errc::invalid) {
    out.push_back({code, std::move(path), std::move(message), false});
  }
  void warn(std::string path, std::string message) {
    out.push_back({errc::invalid, std::move(path), std::move(message), true});
  }
  void unsupported(const std::string& path, const std::string& why = {}) {
    add(path, std::string{not_supported} + (why.empty() ? "" : " (" + why + ")")
                  + "; remove it");
  }

  void walk(const json& v, const field& f, const std::string& path) {
    if (f.status == support::unsupported) {
      for (const auto& ok : f.accepted_values)
        if (v == ok
            || (v.is_number() && ok.is_number()
                && v.get<double>() == ok.get<double>()))
          return;
      std::string alt;
      if (!f.accepted_values.empty())
        alt = " or set it to " + show(f.accepted_values.front());
      add(path, std::string{not_supported} + "; remove it" + alt);
      return;
    }
    if (f.status == support::operator_managed) {
      if (kind_ == document_kind::job_spec)
        return; // the operator sets it, as AIPerf's does
      if (f.name == "serviceRunType" && v == "multiprocessing")
        return;
      add(path, "set by the AIPerf operator for Kubernetes runs; remove it "
                "from the file");
      return;
    }
    switch (f.type) {
    case value_type::object:
      if (!v.is_object())
        return mismatch(v, f, path);
      for (const auto& [k, x] : v.items()) {
        auto sub = path.empty() ? k : path + "." + k;
        if (const auto* p = f.find(k))
          walk(x, *p, sub);
        else
          add(sub, "unknown field; remove it or correct its spelling (AIPerf's "
                   "names, "
                   "camelCase or snake_case)");
      }
      for (const auto& p : f.properties)
        if (p.required && !v.contains(p.name) && !mock_allowed(path, p.name))
          add(path.empty() ? p.name : path + "." + p.name, "required; add it",
              errc::missing);
      return;
    case value_type::array:
      if (!v.is_array())
        return mismatch(v, f, path);
      if (f.min_items && static_cast<std::int64_t>(v.size()) < *f.min_items)
        add(path, "needs at least " + std::to_string(*f.min_items) + " entr"
                      + (*f.min_items == 1 ? "y" : "ies"));
      if (f.max_items && static_cast<std::int64_t>(v.size()) > *f.max_items)
        add(path, "takes at most " + std::to_string(*f.max_items) + " entr"
                      + (*f.max_items == 1 ? "y" : "ies") + " (got "
                      + std::to_string(v.size()) + ")");
      if (f.items)
        for (size_t i = 0; i < v.size(); ++i)
          walk(v[i], *f.items, path + "[" + std::to_string(i) + "]");
      return;
    case value_type::map:
      if (!v.is_object())
        return mismatch(v, f, path);
      if (f.items)
        for (const auto& [k, x] : v.items())
          walk(x, *f.items, path + "." + k);
      return;
    case value_type::string:
      if (!v.is_string())
        return mismatch(v, f, path);
      scalar_string(v.get<std::string>(), f, path);
      return;
    case value_type::integer:
      if (!v.is_number_integer())
        return mismatch(v, f, path);
      bounds(v.get<double>(), f, path);
      return;
    case value_type::number:
      if (f.duration && v.is_string()) {
        auto secs = parse_duration(v, f.name == "gracePeriod");
        if (!secs)
          return add(path,
                     "must be seconds or a duration such as 30s, 5m, 2h (got "
                         + show(v) + ")");
        bounds(*secs, f, path);
        return;
      }
      if (!v.is_number())
        return mismatch(v, f, path);
      bounds(v.get<double>(), f, path);
      return;
    case value_type::boolean:
      if (!v.is_boolean())
        return mismatch(v, f, path);
      return;
    case value_type::int_or_string:
      if (!v.is_number_integer() && !v.is_string())
        return mismatch(v, f, path);
      return;
    case value_type::any:
      // Shorthands and mixed unions: read their declared parts when given
      // in the long form.
      if (v.is_object() && !f.properties.empty()) {
        for (const auto& [k, x] : v.items()) {
          if (const auto* p = f.find(k))
            walk(x, *p, path + "." + k);
          else
            add(path + "." + k,
                "unknown field; remove it or correct its spelling");
        }
      } else if (v.is_array() && f.items) {
        for (size_t i = 0; i < v.size(); ++i)
          walk(v[i], *f.items, path + "[" + std::to_string(i) + "]");
      }
      return;
    }
  }

  /// A file without endpoint URLs benchmarks the built-in mock server, as
  /// `profile` without --url does; an AIPerfJob needs them (AIPerf's rule).
  bool mock_allowed(const std::string& path, const std::string& name) const {
    return kind_ == document_kind::config_file
           && ((path == "benchmark" && name == "endpoint")
               || (path == "benchmark.endpoint" && name == "urls"));
  }

  void mismatch(const json& v, const field& f, const std::string& path) {
    add(path, "must be " + type_name(f.type) + " (got " + show(v) + ")");
  }

  void scalar_string(const std::string& s, const field& f,
                     const std::string& path) {
    if (!f.enum_values.empty()
        && std::find(f.enum_values.begin(), f.enum_values.end(), s)
               == f.enum_values.end())
      return add(path, "must be one of " + choices(f.enum_values) + " (got '"
                           + s + "')");
    if (!f.supported_values.empty()
        && std::find(f.supported_values.begin(), f.supported_values.end(), s)
               == f.supported_values.end())
      return add(path, "'" + s + "' is " + std::string{not_supported}
                           + "; use one of " + choices(f.supported_values));
    if (f.min_length && static_cast<std::int64_t>(s.size()) < *f.min_length)
      add(path, "must not be empty");
    if (!f.pattern.empty() && !std::regex_match(s, std::regex{f.pattern}))
      add(path, "must match " + f.pattern + " (got '" + s + "')");
  }

  void bounds(double x, const field& f, const std::string& path) {
    if (f.minimum
        && (f.exclusive_minimum ? !(x > *f.minimum) : !(x >= *f.minimum)))
      add(path, std::string{"must be "} + (f.exclusive_minimum ? "> " : "≥ ")
                    + fmt(*f.minimum) + " (got " + fmt(x) + ")");
    else if (f.maximum
             && (f.exclusive_maximum ? !(x < *f.maximum) : !(x <= *f.maximum)))
      add(path, std::string{"must be "} + (f.exclusive_maximum ? "< " : "≤ ")
                    + fmt(*f.maximum) + " (got " + fmt(x) + ")");
  }

  // -- semantic rules ---------------------------------------------------------

  void rule(const std::string& path, std::string_view id) {
    const auto* r = find_cel_rule(id);
    add(path, r ? r->message : std::string{id});
  }

  void benchmark(const json& b, const std::string& path) {
    if (!b.is_object())
      return;
    models(b, path);
    if (b.contains("endpoint") && b["endpoint"].is_object())
      endpoint(b["endpoint"], path + ".endpoint");
    std::string dataset_name = "default";
    if (b.contains("datasets") && b["datasets"].is_array())
      for (size_t i = 0; i < b["datasets"].size(); ++i) {
        const auto& d = b["datasets"][i];
        if (d.is_object() && d.contains("name") && d["name"].is_string()
            && i == 0)
          dataset_name = d["name"].get<std::string>();
        dataset(d, path + ".datasets[" + std::to_string(i) + "]");
      }
    if (b.contains("phases") && b["phases"].is_array())
      phases(b["phases"], path + ".phases", dataset_name,
             b.contains("datasets") && b["datasets"].is_array());
    else if (!b.contains("phases"))
      add(path + ".phases",
          "required; add a profiling phase (e.g. {name: profiling, type: "
          "concurrency, concurrency: 8, requests: 100})",
          errc::missing);
    if (b.contains("artifacts") && b["artifacts"].is_object())
      artifacts(b["artifacts"], path + ".artifacts");
    if (b.contains("slos") && b["slos"].is_object()) {
      const auto& tags = goodput_tags();
      for (const auto& [k, v] : b["slos"].items())
        if (std::find(tags.begin(), tags.end(), k) == tags.end()) {
          std::string all;
          for (auto t : tags)
            all += (all.empty() ? "" : ", ") + std::string{t};
          add(path + ".slos." + k, "unknown metric tag; use one of " + all);
        }
    }
    if (b.contains("runtime") && b["runtime"].is_object()) {
      const auto& r = b["runtime"];
      if (r.contains("workers") && r["workers"].is_string()) {
        auto s = r["workers"].get<std::string>();
        if (s.empty() || !std::all_of(s.begin(), s.end(), ::isdigit))
          add(path + ".runtime.workers",
              "must be a whole number of workers (got '" + s + "')");
      } else if (r.contains("workers") && r["workers"].is_number_integer()
                 && r["workers"].get<std::int64_t>() < 1) {
        add(path + ".runtime.workers",
            "must be ≥ 1 (got " + r["workers"].dump() + ")");
      }
    }
  }

  void models(const json& b, const std::string& path) {
    if (!b.contains("models"))
      return add(path + ".models", "required; add models: [<model name>]",
                 errc::missing);
    const auto& m = b["models"];
    auto mpath = path + ".models";
    auto names = [&](const json& list, const std::string& p, bool objects) {
      if (!list.is_array() || list.empty())
        return add(p, "must be a non-empty list of model names");
      for (size_t i = 0; i < list.size(); ++i) {
        auto ip = p + "[" + std::to_string(i) + "]";
        const auto& x = list[i];
        if (objects && x.is_object()) {
          for (const auto& [k, v] : x.items()) {
            if (k == "name") {
              if (!v.is_string() || v.get<std::string>().empty())
                add(ip + ".name", "must be a non-empty model name");
            } else if (k == "weight") {
              unsupported(ip + ".weight", "requests pick models by strategy");
            } else {
              add(ip + "." + k, "unknown field; remove it");
            }
          }
          if (!x.contains("name"))
            add(ip + ".name", "required; add it", errc::missing);
        } else if (!x.is_string() || x.get<std::string>().empty()) {
          add(ip, "must be a non-empty model name (got " + show(x) + ")");
        }
      }
    };
    if (m.is_array())
      return names(m, mpath, false);
    if (!m.is_object())
      return add(
          mpath,
          "must be a model name, a list of names or {strategy, items} (got "
              + show(m) + ")");
    for (const auto& [k, v] : m.items()) {
      if (k == "strategy") {
        if (v != "round_robin" && v != "random")
          add(mpath + ".strategy",
              "must be one of round_robin|random (got " + show(v) + ")");
      } else if (k != "items") {
        add(mpath + "." + k, "unknown field; remove it");
      }
    }
    if (!m.contains("items"))
      return add(mpath + ".items", "required; add items: [{name: <model>}]",
                 errc::missing);
    names(m["items"], mpath + ".items", true);
  }

  void endpoint(const json& e, const std::string& path) {
    if (e.contains("urls")) {
      const auto& u = e["urls"];
      if (!u.is_array() || u.empty()) {
        add(path + ".urls", "must be a non-empty list of server URLs");
      } else {
        for (size_t i = 0; i < u.size(); ++i) {
          auto ip = path + ".urls[" + std::to_string(i) + "]";
          if (!u[i].is_string())
            add(ip, "must be a URL string (got " + show(u[i]) + ")");
          else if (auto parsed = parse_url(u[i].get<std::string>()); !parsed) {
            auto msg = error_message(parsed.error());
            if (msg.starts_with("--url: "))
              msg.erase(0, 7);
            add(ip, msg);
          }
        }
      }
    }
    auto type = e.contains("type") && e["type"].is_string()
                    ? e["type"].get<std::string>()
                    : "";
    if (type == "template" && !e.contains("template"))
      rule(path + ".template", "endpoint.template-required");
    if (e.contains("template") && !type.empty() && type != "template")
      rule(path + ".template", "endpoint.template-only-for-template");
    if (e.contains("requestContentType")
        && e["requestContentType"] == "multipart/form-data" && !type.empty()
        && type != "audio_transcription" && type != "image_edit"
        && type != "video_generation")
      rule(path + ".requestContentType", "endpoint.multipart-types");
    if (e.contains("path") && e["path"].is_string()
        && !e["path"].get<std::string>().starts_with("/"))
      rule(path + ".path", "endpoint.path-absolute");
  }

  void dataset(const json& d, const std::string& path) {
    if (!d.is_object() || !d.contains("type") || !d["type"].is_string())
      return;
    auto type = d["type"].get<std::string>();
    static const std::set<std::string> synthetic_only{
        "prompts", "turns", "turnDelay", "turnDelayRatio"};
    static const std::set<std::string> file_only{"path", "format"};
    for (const auto& [k, v] : d.items()) {
      if (type == "file" && synthetic_only.count(k))
        add(path + "." + k, "only used by type synthetic datasets; remove it");
      if (type == "synthetic" && file_only.count(k))
        add(path + "." + k,
            "only used by type file datasets; remove it or set type: file");
    }
    if (type == "file" && !d.contains("path"))
      add(path + ".path",
          "required for a type file dataset; add the JSONL file's path",
          errc::missing);
    for (const char* key : {"turns"})
      if (d.contains(key) && d[key].is_object() && d[key].contains("mean")
          && d[key]["mean"].is_number() && d[key]["mean"].get<double>() < 1)
        add(path + "." + key + ".mean",
            "turns expected value must be >= 1 (got " + d[key]["mean"].dump()
                + ")");
    for (const char* key : {"turns", "turnDelay"})
      if (d.contains(key) && !d[key].is_number() && !d[key].is_object())
        add(path + "." + key,
            "must be a number or {mean, stddev} (got " + show(d[key]) + ")");
    if (d.contains("prompts") && d["prompts"].is_object())
      for (const char* key : {"isl", "osl"})
        if (d["prompts"].contains(key) && !d["prompts"][key].is_number_integer()
            && !d["prompts"][key].is_object())
          add(path + ".prompts." + key,
              "must be a token count or {mean, stddev} (got "
                  + show(d["prompts"][key]) + ")");
  }

  void phases(const json& ps, const std::string& path,
              const std::string& dataset_name, bool datasets_given) {
    std::set<std::string> names;
    int warmups = 0;
    int profilings = 0;
    std::optional<std::int64_t> warmup_concurrency;
    std::string warmup_path;
    std::optional<std::int64_t> profiling_concurrency;
    for (size_t i = 0; i < ps.size(); ++i) {
      const auto& p = ps[i];
      auto pp = path + "[" + std::to_string(i) + "]";
      if (!p.is_object())
        continue;
      auto name = p.contains("name") && p["name"].is_string()
                      ? p["name"].get<std::string>()
                      : "";
      if (!name.empty() && !names.insert(name).second)
        add(pp + ".name", "phase names must be unique ('" + name + "' repeats)",
            errc::conflict);
      std::string kind = p.contains("kind") && p["kind"].is_string()
                             ? p["kind"].get<std::string>()
                             : "";
      if (kind.empty() && (name == "warmup" || name == "profiling"))
        kind = name;
      if (kind.empty()) {
        add(pp + ".kind",
            "kind is required for non-canonical phase names; set kind to "
            "'warmup' "
            "or 'profiling'",
            errc::missing);
        continue;
      }
      if ((name == "warmup" || name == "profiling") && kind != name)
        add(pp + ".kind", "phase name '" + name + "' is reserved for kind '"
                              + name + "'; got kind '" + kind + "'");
      if (p.contains("excludeFromResults")
          && p["excludeFromResults"].is_boolean()
          && p["excludeFromResults"].get<bool>() != (kind == "warmup"))
        add(pp + ".excludeFromResults",
            std::string{"must be "} + (kind == "warmup" ? "true" : "false")
                + " for kind '" + kind
                + "' (warmup is always excluded; profiling is always "
                  "included)");
      if (p.contains("dataset") && p["dataset"].is_string() && datasets_given
          && p["dataset"] != dataset_name)
        add(pp + ".dataset", "names no dataset; the benchmark's dataset is '"
                                 + dataset_name + "'");
      auto type = p.contains("type") && p["type"].is_string()
                      ? p["type"].get<std::string>()
                      : "";
      if (kind == "warmup") {
        ++warmups;
        if (warmups > 1)
          add(pp, "more than one warmup phase is " + std::string{not_supported}
                      + "; merge them into one");
        if (profilings > 0)
          add(pp, "a warmup phase after the profiling phase is "
                      + std::string{not_supported} + "; move it first");
        static const std::set<std::string> allowed{
            "name",     "kind",        "type",
            "requests", "concurrency", "excludeFromResults",
            "dataset"};
        for (const auto& [k, v] : p.items())
          if (!allowed.count(k))
            add(pp + "." + k,
                std::string{not_supported}
                    + " in a warmup phase (aiperf-node's warmup sends a number "
                      "of "
                      "requests at the profiling phase's load); remove it");
        if (!type.empty() && type != "concurrency")
          add(pp + ".type", "a '" + type + "' warmup is "
                                + std::string{not_supported}
                                + "; use type: concurrency");
        if (!p.contains("requests"))
          add(pp + ".requests",
              "required for the warmup phase; add the number of warmup "
              "requests",
              errc::missing);
        if (p.contains("concurrency") && p["concurrency"].is_number_integer()) {
          warmup_concurrency = p["concurrency"].get<std::int64_t>();
          warmup_path = pp + ".concurrency";
        }
        continue;
      }
      ++profilings;
      if (profilings > 1)
        add(pp, "more than one profiling phase is " + std::string{not_supported}
                    + "; run one profiling phase per benchmark");
      if (p.contains("concurrency") && p["concurrency"].is_number_integer())
        profiling_concurrency = p["concurrency"].get<std::int64_t>();
      profiling_phase(p, pp, type);
    }
    if (profilings == 0 && !ps.empty())
      add(path, "needs a profiling phase (kind: profiling)", errc::missing);
    if (warmup_concurrency && warmup_concurrency != profiling_concurrency)
      warn(
          warmup_path,
          "aiperf-node runs the warmup at the profiling phase's load; a warmup "
          "concurrency of its own ("
              + std::to_string(*warmup_concurrency) + ") is "
              + std::string{not_supported} + " and is not used");
  }

  void profiling_phase(const json& p, const std::string& pp,
                       const std::string& type) {
    bool rate_type = type == "poisson" || type == "gamma" || type == "constant"
                     || type == "user_centric";
    if (rate_type && !p.contains("rate"))
      add(pp + ".rate",
          "rate-controlled phases require rate; add it (requests per second)",
          errc::missing);
    if (!rate_type && !type.empty() && p.contains("rate"))
      add(pp + ".rate", "only used by poisson, gamma, constant and "
                        "user_centric phases; remove it");
    if (p.contains("smoothness") && type != "gamma")
      add(pp + ".smoothness",
          "only used by gamma phases; remove it or set type: gamma");
    if (type == "user_centric" && !p.contains("users"))
      add(pp + ".users",
          "required for a user_centric phase; add the number of users",
          errc::missing);
    if (p.contains("users") && type != "user_centric")
      add(pp + ".users", "only used by user_centric phases; remove it");
    for (const char* k : {"autoOffset", "startOffset", "endOffset"})
      if (p.contains(k) && type != "fixed_schedule")
        add(pp + "." + k, "only used by fixed_schedule phases; remove it");
    if (type == "fixed_schedule") {
      bool auto_offset = !p.contains("autoOffset") || p["autoOffset"] == true;
      if (auto_offset && p.contains("startOffset"))
        add(pp + ".startOffset",
            "auto_offset cannot be True when start_offset is set; set "
            "autoOffset: false",
            errc::conflict);
      if (p.contains("startOffset") && p.contains("endOffset")
          && p["startOffset"].is_number() && p["endOffset"].is_number()
          && p["startOffset"] > p["endOffset"])
        add(pp + ".endOffset", "start_offset must be <= end_offset",
            errc::conflict);
    } else if (!type.empty() && !p.contains("requests")
               && !p.contains("duration") && !p.contains("sessions")) {
      add(pp, "needs a stop condition: set requests, duration or sessions",
          errc::missing);
    }
    if (p.contains("gracePeriod") && !p.contains("duration"))
      add(pp + ".gracePeriod", "grace_period requires duration to be set",
          errc::conflict);
    if (p.contains("prefillConcurrency") && p.contains("concurrency")
        && p["prefillConcurrency"].is_number() && p["concurrency"].is_number()
        && p["prefillConcurrency"] > p["concurrency"])
      add(pp + ".prefillConcurrency",
          "prefill_concurrency must be <= concurrency", errc::conflict);
    if (type == "user_centric" && p.contains("users")
        && p["users"].is_number()) {
      for (const char* k : {"requests", "sessions"})
        if (p.contains(k) && p[k].is_number() && p[k] < p["users"])
          add(pp + "." + k,
              std::string{k}
                  + " must be >= users; each user needs at least one",
              errc::conflict);
    }
  }

  void artifacts(const json& a, const std::string& path) {
    if (a.contains("summary")) {
      const auto& s = a["summary"];
      auto sp = path + ".summary";
      if (s == false)
        add(sp, std::string{"false is "} + std::string{not_supported}
                    + " (the summary is always written); remove it");
      else if (s.is_array()) {
        for (const auto& x : s)
          if (x != "json" && x != "csv")
            add(sp, "unknown summary format " + show(x) + "; use json or csv");
      } else if (s != true && s != "json") {
        add(sp,
            "must be a list of formats such as [json] (got " + show(s) + ")");
      }
    }
    if (a.contains("records")) {
      const auto& r = a["records"];
      auto rp = path + ".records";
      if (r.is_array()) {
        for (const auto& x : r)
          if (x == "csv" || x == "parquet")
            add(rp, "format " + show(x) + " is " + std::string{not_supported}
                        + " (records are written as JSONL); use [jsonl]");
          else if (x != "jsonl")
            add(rp, "unknown records format " + show(x) + "; use [jsonl]");
      } else if (!r.is_boolean() && r != "jsonl") {
        add(rp, "must be [jsonl], true or false (got " + show(r) + ")");
      }
    }
  }

  void job_spec(const json& spec) {
    if (spec.contains("sweep"))
      rule("sweep", "job.no-sweep");
    if (spec.contains("multiRun") && spec["multiRun"].is_object()) {
      const auto& m = spec["multiRun"];
      if ((m.contains("numRuns") && m["numRuns"].is_number()
           && m["numRuns"] > 1)
          || m.contains("convergence"))
        rule("multiRun", "job.one-run");
    }
  }

  void multi_run(const json& m) {
    if (m.contains("convergence") && m["convergence"].is_object()
        && m["convergence"].contains("minRuns") && m.contains("numRuns")
        && m["convergence"]["minRuns"].is_number() && m["numRuns"].is_number()
        && m["convergence"]["minRuns"] > m["numRuns"])
      rule("multiRun.convergence.minRuns", "multiRun.min-runs");
  }

private:
  document_kind kind_;
};

} // namespace

namespace {

std::vector<problem> check_document(const json& doc, document_kind kind) {
  checker c{kind};
  if (!doc.is_object()) {
    c.add("", "the document must be a mapping of AIPerf config keys "
              "(schemaVersion, benchmark, "
              "...)");
    return c.out;
  }
  if (kind == document_kind::job_spec) {
    c.job_spec(doc);
    // The CEL message already says what to do with a sweep.
    json rest = doc;
    rest.erase("sweep");
    c.walk(rest, schema_of(kind), "");
  } else {
    c.walk(doc, schema_of(kind), "");
  }
  if (doc.contains("benchmark"))
    c.benchmark(doc["benchmark"], "benchmark");
  if (doc.contains("multiRun") && doc["multiRun"].is_object())
    c.multi_run(doc["multiRun"]);
  // One finding per path and message, in document order.
  std::vector<problem> unique;
  for (auto& p : c.out)
    if (std::find(unique.begin(), unique.end(), p) == unique.end())
      unique.push_back(std::move(p));
  return unique;
}

} // namespace

std::vector<problem> check(const json& doc, document_kind kind) {
  try {
    return check_document(doc, kind);
  } catch (const std::exception& e) {
    return {{errc::invalid, "",
             std::string{"cannot check the document: "} + e.what(), false}};
  }
}

caf::expected<void> validate(const json& doc, document_kind kind) {
  auto found = check(doc, kind);
  const problem* first = nullptr;
  size_t errors = 0;
  for (const auto& p : found)
    if (!p.warning) {
      if (!first)
        first = &p;
      ++errors;
    }
  if (!first)
    return caf::unit;
  auto message = first->message;
  if (errors > 1)
    message += " (and " + std::to_string(errors - 1) + " more problem"
               + (errors > 2 ? "s" : "") + ")";
  return flag_error(first->code, first->path, message);
}

caf::expected<void> validate_update(const json& old_spec,
                                    const json& new_spec) {
  const auto& mutable_fields = job_mutable_fields();
  for (const auto& p : job_spec_schema().properties) {
    if (std::find(mutable_fields.begin(), mutable_fields.end(), p.name)
        != mutable_fields.end())
      continue;
    bool had = old_spec.contains(p.name);
    bool has = new_spec.contains(p.name);
    if (had != has || (has && old_spec[p.name] != new_spec[p.name])) {
      const auto* r = find_cel_rule("job.immutable." + p.name);
      return make_error(errc::conflict,
                        r ? r->message
                          : "spec." + p.name + " is immutable after creation",
                        "spec." + p.name);
    }
  }
  return caf::unit;
}

} // namespace aiperf::config::benchmark
