#include "config/profile/profile_json.hpp"
#include "proto/redact.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace aiperf::config {

namespace {

// One list of (section, key, field) drives both directions, so writer and
// reader cannot drift apart. `secret` marks values that redaction hides.
template <class Cfg, class Visitor> void visit_fields(Cfg& c, Visitor&& v) {
  v("endpoint", "model_names", c.model_names);
  v("endpoint", "model_selection_strategy", c.model_selection_strategy);
  v.secret_urls("endpoint", "urls", c.urls);
  v("endpoint", "url_strategy", c.url_strategy);
  v("endpoint", "endpoint_type", c.endpoint_type);
  v("endpoint", "custom_endpoint", c.custom_endpoint);
  v("endpoint", "streaming", c.streaming);
  v.secret("endpoint", "api_key", c.api_key);
  v("endpoint", "headers", c.headers);
  v("endpoint", "extra_inputs", c.extra_inputs);
  v("endpoint", "request_timeout_seconds", c.request_timeout_seconds);
  v("endpoint", "use_legacy_max_tokens", c.use_legacy_max_tokens);
  v("endpoint", "use_server_token_count", c.use_server_token_count);
  v("endpoint", "include_usage", c.include_usage);
  v("endpoint", "ca_file", c.ca_file);
  v("endpoint", "insecure", c.insecure);
  v("input", "input_file", c.input_file);
  v("input", "custom_dataset_type", c.custom_dataset_type);
  v("input", "fixed_schedule", c.fixed_schedule);
  v("input", "fixed_schedule_auto_offset", c.fixed_schedule_auto_offset);
  v("input", "fixed_schedule_start_offset", c.fixed_schedule_start_offset);
  v("input", "fixed_schedule_end_offset", c.fixed_schedule_end_offset);
  v("input", "random_seed", c.random_seed);
  v("input", "num_dataset_entries", c.num_dataset_entries);
  v("input", "isl_mean", c.isl_mean);
  v("input", "isl_stddev", c.isl_stddev);
  v("input", "prompt_corpus", c.prompt_corpus);
  v("input", "osl_mean", c.osl_mean);
  v("input", "osl_stddev", c.osl_stddev);
  v("input", "conversation_num", c.conversation_num);
  v("input", "conversation_turn_mean", c.conversation_turn_mean);
  v("input", "conversation_turn_stddev", c.conversation_turn_stddev);
  v("input", "conversation_turn_delay_mean", c.conversation_turn_delay_mean);
  v("input", "conversation_turn_delay_stddev",
    c.conversation_turn_delay_stddev);
  v("input", "conversation_turn_delay_ratio", c.conversation_turn_delay_ratio);
  v("input", "tokenizer", c.tokenizer);
  v("input", "tokenizer_revision", c.tokenizer_revision);
  v("loadgen", "concurrency", c.concurrency);
  v("loadgen", "request_rate", c.request_rate);
  v("loadgen", "arrival_pattern", c.arrival_pattern);
  v("loadgen", "arrival_smoothness", c.arrival_smoothness);
  v("loadgen", "request_count", c.request_count);
  v("loadgen", "benchmark_duration", c.benchmark_duration);
  v("loadgen", "benchmark_grace_period", c.benchmark_grace_period);
  v("loadgen", "warmup_request_count", c.warmup_request_count);
  v("loadgen", "prefill_concurrency", c.prefill_concurrency);
  v("loadgen", "user_centric_rate", c.user_centric_rate);
  v("loadgen", "num_users", c.num_users);
  v("loadgen", "goodput", c.goodput);
  v("loadgen", "failed_request_threshold", c.failed_request_threshold);
  v("loadgen", "request_cancellation_rate", c.request_cancellation_rate);
  v("loadgen", "request_cancellation_delay", c.request_cancellation_delay);
  v("output", "output_artifact_dir", c.output_artifact_dir);
  v("output", "profile_export_prefix", c.profile_export_prefix);
  v("output", "export_level", c.export_level);
  v("output", "slice_duration", c.slice_duration);
  v("output", "ui", c.ui);
  v("output", "log_level", c.log_level);
  v("runtime", "workers_max", c.workers_max);
  v("runtime", "record_processors", c.record_processors);
  v("runtime", "io_threads", c.io_threads);
  v("runtime", "io_priority", c.io_priority);
  v("runtime", "scheduler_policy", c.scheduler_policy);
  v("runtime", "scheduler_threads", c.scheduler_threads);
  v("runtime", "worker_pods", c.worker_pods);
  v("runtime", "workers_per_pod", c.workers_per_pod);
}

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

// -- writing ------------------------------------------------------------------

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

class field_writer {
public:
  field_writer(json_writer& w, bool redact) : w_(w), redact_(redact) {}

  template <class T>
  void operator()(std::string_view section, std::string_view key,
                  const T& value) {
    if constexpr (is_optional<T>::value) {
      if (!value)
        return;
      enter(section, key);
      write(*value);
    } else {
      enter(section, key);
      write(value);
    }
  }

  void secret(std::string_view section, std::string_view key,
              const std::optional<std::string>& value) {
    if (!value)
      return;
    enter(section, key);
    write(redact_ ? std::string_view{redacted} : std::string_view{*value});
  }

  void secret_urls(std::string_view section, std::string_view key,
                   const std::vector<std::string>& urls) {
    enter(section, key);
    w_.StartArray();
    for (const auto& u : urls)
      write(redact_ ? proto::redact_url(u) : u);
    w_.EndArray();
  }

  void finish() {
    if (!section_.empty())
      w_.EndObject();
  }

private:
  // Fields arrive grouped by section; open a new object on each change.
  void enter(std::string_view section, std::string_view key) {
    if (section != section_) {
      if (!section_.empty())
        w_.EndObject();
      section_ = section;
      write(section);
      w_.StartObject();
    }
    write(key);
  }

  void write(std::string_view s) {
    w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  void write(const std::string& s) { write(std::string_view{s}); }
  void write(bool x) { w_.Bool(x); }
  void write(int x) { w_.Int(x); }
  void write(std::int64_t x) { w_.Int64(x); }
  void write(std::uint64_t x) { w_.Uint64(x); }
  void write(double x) {
    if (std::isfinite(x))
      w_.Double(x);
    else
      write(python_float(x));
  }
  template <class Enum, class = std::enable_if_t<std::is_enum_v<Enum>>>
  void write(Enum x) {
    write(to_string(x));
  }
  void write(const std::vector<std::string>& xs) {
    w_.StartArray();
    for (const auto& x : xs)
      write(x);
    w_.EndArray();
  }
  void write(const std::vector<http_header>& xs) {
    w_.StartArray();
    for (const auto& h : xs) {
      w_.StartObject();
      write(std::string_view{"name"});
      write(h.name);
      write(std::string_view{"value"});
      write(redact_ ? std::string_view{redacted} : std::string_view{h.value});
      w_.EndObject();
    }
    w_.EndArray();
  }
  void write(const std::vector<extra_input>& xs) {
    w_.StartObject();
    for (const auto& x : xs) {
      write(x.key);
      w_.RawValue(x.json.data(), x.json.size(), rapidjson::kObjectType);
    }
    w_.EndObject();
  }
  void write(const std::vector<goodput_slo>& xs) {
    w_.StartObject();
    for (const auto& x : xs) {
      write(x.tag);
      write(x.value);
    }
    w_.EndObject();
  }

  json_writer& w_;
  bool redact_;
  std::string_view section_;
};

// -- reading ------------------------------------------------------------------

std::string compact(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  json_writer w(buf);
  v.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

class field_reader {
public:
  explicit field_reader(const rapidjson::Value& root) : root_(root) {}

  template <class T>
  void operator()(std::string_view section, std::string_view key, T& value) {
    if (error_)
      return;
    const auto* v = find(section, key);
    if (!v)
      return;
    if constexpr (is_optional<T>::value) {
      typename T::value_type x{};
      if (read(*v, x))
        value = std::move(x);
    } else {
      read(*v, value);
    }
  }

  void secret(std::string_view section, std::string_view key,
              std::optional<std::string>& value) {
    (*this)(section, key, value);
  }

  void secret_urls(std::string_view section, std::string_view key,
                   std::vector<std::string>& urls) {
    (*this)(section, key, urls);
  }

  [[nodiscard]] const caf::error& error() const { return error_; }

  // Rejects keys no field claimed: a typo must not silently become a default.
  void check_unknown_keys() {
    if (error_)
      return;
    for (const auto& s : root_.GetObject()) {
      std::string section{s.name.GetString(), s.name.GetStringLength()};
      auto in_section = [&](const std::string& path) {
        return path.compare(0, section.size() + 1, section + ".") == 0;
      };
      if (std::none_of(known_.begin(), known_.end(), in_section)) {
        fail_at("input_config." + section,
                "unknown section; use endpoint, input, loadgen, output or "
                "runtime");
        return;
      }
      if (!s.value.IsObject()) {
        fail_at("input_config." + section, "must be an object");
        return;
      }
      for (const auto& k : s.value.GetObject()) {
        auto path = section + "." + k.name.GetString();
        if (std::find(known_.begin(), known_.end(), path) == known_.end()) {
          fail_at("input_config." + path, "unknown key; check its spelling");
          return;
        }
      }
    }
  }

  // Records every (section, key) pair a field claims, without reading.
  void claim(std::string_view section, std::string_view key) {
    known_.push_back(std::string{section} + "." + std::string{key});
  }

private:
  const rapidjson::Value* find(std::string_view section, std::string_view key) {
    path_ = "input_config." + std::string{section} + "." + std::string{key};
    claim(section, key);
    auto s = root_.FindMember(rapidjson::Value(
        section.data(), static_cast<rapidjson::SizeType>(section.size())));
    if (s == root_.MemberEnd() || !s->value.IsObject())
      return nullptr;
    auto k = s->value.FindMember(rapidjson::Value(
        key.data(), static_cast<rapidjson::SizeType>(key.size())));
    if (k == s->value.MemberEnd())
      return nullptr;
    return &k->value;
  }

  bool fail_at(std::string path, std::string message) {
    if (!error_)
      error_ = flag_error(errc::invalid, path, message);
    return false;
  }
  bool fail(std::string message) { return fail_at(path_, std::move(message)); }

  bool read(const rapidjson::Value& v, bool& x) {
    if (!v.IsBool())
      return fail("must be true or false");
    x = v.GetBool();
    return true;
  }
  bool read(const rapidjson::Value& v, int& x) {
    if (!v.IsInt())
      return fail("must be an integer");
    x = v.GetInt();
    return true;
  }
  bool read(const rapidjson::Value& v, std::int64_t& x) {
    if (!v.IsInt64())
      return fail("must be an integer");
    x = v.GetInt64();
    return true;
  }
  bool read(const rapidjson::Value& v, std::uint64_t& x) {
    if (!v.IsUint64())
      return fail("must be a non-negative integer");
    x = v.GetUint64();
    return true;
  }
  bool read(const rapidjson::Value& v, double& x) {
    if (v.IsNumber()) {
      x = v.GetDouble();
      return true;
    }
    if (v.IsString()) {
      std::string_view s{v.GetString(), v.GetStringLength()};
      constexpr auto inf = std::numeric_limits<double>::infinity();
      if (s == "inf")
        x = inf;
      else if (s == "-inf")
        x = -inf;
      else if (s == "nan")
        x = std::numeric_limits<double>::quiet_NaN();
      else
        return fail("must be a number or \"inf\"");
      return true;
    }
    return fail("must be a number");
  }
  bool read(const rapidjson::Value& v, std::string& x) {
    if (!v.IsString())
      return fail("must be a string");
    x.assign(v.GetString(), v.GetStringLength());
    return true;
  }
  template <class Enum, class = std::enable_if_t<std::is_enum_v<Enum>>>
  bool read(const rapidjson::Value& v, Enum& x) {
    std::string s;
    if (!read(v, s))
      return false;
    auto parsed = enum_from_string<Enum>(s);
    if (!parsed)
      return fail("'" + s + "' is not one of " + enum_choices<Enum>());
    x = *parsed;
    return true;
  }
  bool read(const rapidjson::Value& v, std::vector<std::string>& xs) {
    if (!v.IsArray())
      return fail("must be an array of strings");
    xs.clear();
    for (const auto& item : v.GetArray()) {
      if (!item.IsString())
        return fail("must be an array of strings");
      xs.emplace_back(item.GetString(), item.GetStringLength());
    }
    return true;
  }
  bool read(const rapidjson::Value& v, std::vector<http_header>& xs) {
    if (!v.IsArray())
      return fail("must be an array of {\"name\", \"value\"} objects");
    xs.clear();
    for (const auto& item : v.GetArray()) {
      if (!item.IsObject() || item.MemberCount() != 2 || !item.HasMember("name")
          || !item["name"].IsString() || !item.HasMember("value")
          || !item["value"].IsString())
        return fail("must be an array of {\"name\", \"value\"} objects");
      xs.push_back(
          http_header{item["name"].GetString(), item["value"].GetString()});
    }
    return true;
  }
  bool read(const rapidjson::Value& v, std::vector<extra_input>& xs) {
    if (!v.IsObject())
      return fail("must be an object");
    xs.clear();
    for (const auto& m : v.GetObject())
      xs.push_back(
          extra_input{std::string{m.name.GetString(), m.name.GetStringLength()},
                      compact(m.value)});
    return true;
  }
  bool read(const rapidjson::Value& v, std::vector<goodput_slo>& xs) {
    if (!v.IsObject())
      return fail("must be an object of tag: number");
    xs.clear();
    for (const auto& m : v.GetObject()) {
      if (!m.value.IsNumber())
        return fail("must be an object of tag: number");
      xs.push_back(
          goodput_slo{std::string{m.name.GetString(), m.name.GetStringLength()},
                      m.value.GetDouble()});
    }
    return true;
  }

  const rapidjson::Value& root_;
  std::string path_;
  std::vector<std::string> known_;
  caf::error error_;
};

} // namespace

std::string to_json(const profile_config& cfg, bool redact_secrets) {
  rapidjson::StringBuffer buf;
  json_writer w(buf);
  w.StartObject();
  field_writer fields{w, redact_secrets};
  visit_fields(cfg, fields);
  fields.finish();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

caf::expected<profile_config> from_json(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(json.data(), json.size());
  if (doc.HasParseError())
    return flag_error(errc::invalid, "input_config",
                      std::string{"invalid JSON at offset "}
                          + std::to_string(doc.GetErrorOffset()) + ": "
                          + rapidjson::GetParseError_En(doc.GetParseError()));
  if (!doc.IsObject())
    return flag_error(errc::invalid, "input_config", "must be a JSON object");
  profile_config cfg;
  field_reader reader{doc};
  visit_fields(cfg, reader);
  reader.check_unknown_keys();
  if (const auto& err = reader.error())
    return err;
  if (auto valid = validate(cfg); !valid)
    return valid.error();
  return cfg;
}

} // namespace aiperf::config
