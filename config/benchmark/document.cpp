#include "config/benchmark/document.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>
#include <yaml-cpp/yaml.h>

namespace aiperf::config::benchmark {

const field& schema_of(document_kind kind) {
  return kind == document_kind::job_spec ? job_spec_schema() : config_schema();
}

// -- JSON ---------------------------------------------------------------------

caf::expected<json> parse_json(std::string_view text, std::string_view source) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return flag_error(errc::invalid, source,
                      std::string{"not valid JSON: "} + e.what()
                          + "; fix the file's syntax");
  }
}

std::string write_json(const json& doc) {
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// -- YAML ---------------------------------------------------------------------

namespace {

/// The JSON value of a plain (unquoted) YAML scalar under the YAML 1.2 core
/// schema.
json plain_scalar(const std::string& s) {
  static const std::regex null_re{"^(~|null|Null|NULL)$"};
  static const std::regex true_re{"^(true|True|TRUE)$"};
  static const std::regex false_re{"^(false|False|FALSE)$"};
  static const std::regex int_re{"^[-+]?[0-9]+$"};
  static const std::regex float_re{
      "^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$"};
  if (s.empty() || std::regex_match(s, null_re))
    return nullptr;
  if (std::regex_match(s, true_re))
    return true;
  if (std::regex_match(s, false_re))
    return false;
  if (std::regex_match(s, int_re)) {
    auto text = s[0] == '+' ? s.substr(1) : s;
    std::int64_t i = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
    if (ec == std::errc{} && p == text.data() + text.size())
      return i;
    std::uint64_t u = 0;
    auto [q, ec2] = std::from_chars(text.data(), text.data() + text.size(), u);
    if (ec2 == std::errc{} && q == text.data() + text.size())
      return u;
    return std::stod(text);
  }
  if (std::regex_match(s, float_re))
    return std::stod(s);
  return s;
}

json from_yaml(const YAML::Node& node) {
  switch (node.Type()) {
  case YAML::NodeType::Null:
  case YAML::NodeType::Undefined:
    return nullptr;
  case YAML::NodeType::Scalar:
    // yaml-cpp tags quoted scalars "!" and plain ones "?".
    if (node.Tag() == "!")
      return node.Scalar();
    return plain_scalar(node.Scalar());
  case YAML::NodeType::Sequence: {
    json out = json::array();
    for (const auto& item : node)
      out.push_back(from_yaml(item));
    return out;
  }
  case YAML::NodeType::Map: {
    json out = json::object();
    for (const auto& kv : node)
      out[kv.first.Scalar()] = from_yaml(kv.second);
    return out;
  }
  }
  return nullptr;
}

void emit(YAML::Emitter& out, const json& v) {
  switch (v.type()) {
  case json::value_t::object:
    if (v.empty()) {
      out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
      return;
    }
    out << YAML::BeginMap;
    for (const auto& [k, x] : v.items()) {
      out << YAML::Key;
      if (plain_scalar(k).is_string())
        out << k;
      else
        out << YAML::DoubleQuoted << k;
      out << YAML::Value;
      emit(out, x);
    }
    out << YAML::EndMap;
    return;
  case json::value_t::array:
    if (v.empty()) {
      out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
      return;
    }
    out << YAML::BeginSeq;
    for (const auto& x : v)
      emit(out, x);
    out << YAML::EndSeq;
    return;
  case json::value_t::string: {
    const auto& s = v.get_ref<const std::string&>();
    if (plain_scalar(s).is_string())
      out << s;
    else
      out << YAML::DoubleQuoted << s;
    return;
  }
  case json::value_t::boolean:
    out << (v.get<bool>() ? "true" : "false");
    return;
  case json::value_t::null:
    out << YAML::Null;
    return;
  default:
    // Numbers as JSON spells them: a float keeps its '.', so it reads back
    // as a float.
    out << v.dump();
    return;
  }
}

} // namespace

caf::expected<json> parse_yaml(std::string_view text, std::string_view source) {
  try {
    auto node = YAML::Load(std::string{text});
    return from_yaml(node);
  } catch (const YAML::Exception& e) {
    std::string where{source};
    if (!e.mark.is_null())
      where += ":" + std::to_string(e.mark.line + 1) + ":"
               + std::to_string(e.mark.column + 1);
    return flag_error(errc::invalid, where,
                      "not valid YAML: " + e.msg + "; fix the file's syntax");
  } catch (const std::exception& e) {
    return flag_error(errc::invalid, source,
                      std::string{"not valid YAML: "} + e.what());
  }
}

std::string write_yaml(const json& doc) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, doc);
  return std::string{out.c_str()} + "\n";
}

caf::expected<json> parse_document(std::string_view text,
                                   std::string_view source) {
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)))
      continue;
    if (c == '{' || c == '[')
      return parse_json(text, source);
    break;
  }
  return parse_yaml(text, source);
}

caf::expected<json> read_document(const std::filesystem::path& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return flag_error(
        errc::unreadable, path.string(),
        "cannot read the file; check the path and its permissions");
  std::stringstream buf;
  buf << in.rdbuf();
  auto doc = parse_document(buf.str(), path.string());
  if (doc && !doc->is_object())
    return flag_error(
        errc::invalid, path.string(),
        "the file must hold a mapping of AIPerf config keys (schemaVersion, "
        "benchmark, ...)");
  return doc;
}

// -- normalization ------------------------------------------------------------

namespace {

caf::error twice(const std::string& path, const std::string& a,
                 const std::string& b) {
  return flag_error(errc::conflict, path,
                    "'" + a + "' and '" + b + "' both given; keep one of them");
}

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

/// Renames snake_case keys of declared properties to camelCase, recursively,
/// leaving free-form nodes alone.
caf::expected<void> camelize(json& node, const field& schema,
                             const std::string& path) {
  if (schema.type == value_type::array || schema.type == value_type::map) {
    if (!schema.items)
      return caf::unit;
    if (node.is_array() && schema.type == value_type::array) {
      for (size_t i = 0; i < node.size(); ++i)
        if (auto ok = camelize(node[i], *schema.items,
                               path + "[" + std::to_string(i) + "]");
            !ok)
          return ok;
    } else if (node.is_object() && schema.type == value_type::map) {
      for (auto& [k, v] : node.items())
        if (auto ok = camelize(v, *schema.items, join(path, k)); !ok)
          return ok;
    }
    return caf::unit;
  }
  if (!node.is_object() || schema.properties.empty())
    return caf::unit;
  json out = json::object();
  for (auto& [k, v] : node.items()) {
    std::string key = k;
    if (!schema.find(key))
      for (const auto& p : schema.properties)
        if (snake_case(p.name) == key) {
          key = p.name;
          break;
        }
    if (out.contains(key))
      return twice(join(path, key), k, key);
    out[key] = std::move(v);
  }
  for (auto& [k, v] : out.items())
    if (const auto* p = schema.find(k))
      if (auto ok = camelize(v, *p, join(path, k)); !ok)
        return ok;
  node = std::move(out);
  return caf::unit;
}

/// Moves `from` to `to` in `obj` (same position), refusing both.
caf::expected<void> rename(json& obj, const std::string& path,
                           const std::string& from, const std::string& to) {
  if (!obj.contains(from))
    return caf::unit;
  if (obj.contains(to))
    return twice(join(path, to), from, to);
  json out = json::object();
  for (auto& [k, v] : obj.items())
    out[k == from ? to : k] = std::move(v);
  obj = std::move(out);
  return caf::unit;
}

/// A phase with its name and kind first.
json named_phase(const std::string& name, const std::string& kind, json body) {
  if (!body.is_object())
    return body; // validation names the entry that is not a mapping
  json out = json::object();
  out["name"] = body.contains("name") ? body["name"] : json(name);
  if (body.contains("kind"))
    out["kind"] = body["kind"];
  else if (!kind.empty())
    out["kind"] = kind;
  for (auto& [k, v] : body.items())
    if (k != "name" && k != "kind")
      out[k] = std::move(v);
  return out;
}

caf::expected<void> normalize_benchmark(json& b, const std::string& path) {
  if (!b.is_object())
    return caf::unit;
  if (auto ok = rename(b, path, "model", "models"); !ok)
    return ok;
  if (b.contains("models") && b["models"].is_string())
    b["models"] = json::array({b["models"]});
  if (b.contains("endpoint") && b["endpoint"].is_object()) {
    auto& e = b["endpoint"];
    if (auto ok = rename(e, join(path, "endpoint"), "url", "urls"); !ok)
      return ok;
    if (e.contains("urls") && e["urls"].is_string())
      e["urls"] = json::array({e["urls"]});
  }
  if (b.contains("dataset")) {
    if (b.contains("datasets"))
      return twice(join(path, "datasets"), "dataset", "datasets");
    json entry = json::object();
    if (b["dataset"].is_object()) {
      entry["name"] = b["dataset"].contains("name") ? b["dataset"]["name"]
                                                    : json("default");
      for (auto& [k, v] : b["dataset"].items())
        if (k != "name")
          entry[k] = v;
    } else {
      entry = b["dataset"];
    }
    if (auto ok = rename(b, path, "dataset", "datasets"); !ok)
      return ok;
    b["datasets"] = json::array({std::move(entry)});
  }
  if (b.contains("datasets") && b["datasets"].is_array()) {
    for (size_t i = 0; i < b["datasets"].size(); ++i) {
      auto& d = b["datasets"][i];
      if (!d.is_object())
        continue;
      auto dpath = join(path, "datasets[" + std::to_string(i) + "]");
      for (const char* key : {"isl", "osl"}) {
        if (!d.contains(key))
          continue;
        if (!d.contains("prompts"))
          d["prompts"] = json::object();
        if (!d["prompts"].is_object())
          continue;
        if (d["prompts"].contains(key))
          return twice(dpath + ".prompts." + key, key,
                       std::string{"prompts."} + key);
        d["prompts"][key] = d[key];
        d.erase(key);
      }
    }
  }
  bool shorthand = b.contains("warmup") || b.contains("profiling");
  if (shorthand) {
    if (b.contains("phases"))
      return twice(join(path, "phases"),
                   b.contains("warmup") ? "warmup" : "profiling", "phases");
    json phases = json::array();
    if (b.contains("warmup"))
      phases.push_back(named_phase("warmup", "warmup", b["warmup"]));
    if (b.contains("profiling"))
      phases.push_back(named_phase("profiling", "profiling", b["profiling"]));
    json out = json::object();
    for (auto& [k, v] : b.items()) {
      if (k == "warmup" || k == "profiling") {
        if (!out.contains("phases"))
          out["phases"] = phases;
        continue;
      }
      out[k] = std::move(v);
    }
    b = std::move(out);
  }
  if (b.contains("phases") && b["phases"].is_object())
    b["phases"]
        = json::array({named_phase("default", "profiling", b["phases"])});
  if (b.contains("phases") && b["phases"].is_array())
    for (auto& p : b["phases"])
      if (p.is_object() && !p.contains("kind") && p.contains("name")
          && p["name"].is_string()
          && (p["name"] == "warmup" || p["name"] == "profiling"))
        p = named_phase("", p["name"].get<std::string>(), p);
  return caf::unit;
}

} // namespace

namespace {

caf::expected<json> normalize_document(json doc, document_kind kind) {
  if (!doc.is_object())
    return doc;
  const auto& root = schema_of(kind);
  const auto& bench = *root.find("benchmark");
  if (kind == document_kind::config_file) {
    // Keys of BenchmarkConfig written at the top level of a file belong to
    // `benchmark` (AIPerf's templates write `model:`, `dataset:` there).
    json top = json::object();
    json hoisted = json::object();
    for (auto& [k, v] : doc.items()) {
      bool envelope = root.find(k) != nullptr;
      if (!envelope)
        for (const auto& p : root.properties)
          envelope = envelope || snake_case(p.name) == k;
      bool body = bench.find(k) != nullptr;
      if (!body)
        for (const auto& p : bench.properties)
          body = body || snake_case(p.name) == k;
      if (!envelope && body)
        hoisted[k] = std::move(v);
      else
        top[k] = std::move(v);
    }
    if (!hoisted.empty()) {
      if (!top.contains("benchmark"))
        top["benchmark"] = json::object();
      auto& b = top["benchmark"];
      if (b.is_object())
        for (auto& [k, v] : hoisted.items()) {
          if (b.contains(k))
            return twice("benchmark." + k, k, "benchmark." + k);
          b[k] = std::move(v);
        }
    }
    doc = std::move(top);
  }
  if (auto ok = camelize(doc, root, ""); !ok)
    return ok.error();
  if (doc.contains("benchmark"))
    if (auto ok = normalize_benchmark(doc["benchmark"], "benchmark"); !ok)
      return ok.error();
  // The shorthands may have brought snake_case keys (a dataset's isl moved,
  // a phase built from `profiling:`) to declared places: one more pass.
  if (auto ok = camelize(doc, root, ""); !ok)
    return ok.error();
  return doc;
}

} // namespace

namespace {

caf::expected<void> substitute(json& node, const field* schema,
                               const std::string& path, const env_lookup& env) {
  if (node.is_object()) {
    for (auto& [k, v] : node.items()) {
      const field* sub = nullptr;
      if (schema
          && (schema->type == value_type::map
              || schema->type == value_type::any))
        sub = schema->items ? schema->items.get() : nullptr;
      else if (schema)
        sub = schema->find(k);
      if (schema && schema->type == value_type::any && !sub)
        sub = schema->find(k);
      if (auto ok = substitute(v, sub, join(path, k), env); !ok)
        return ok;
    }
    return caf::unit;
  }
  if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i)
      if (auto ok = substitute(
              node[i], schema && schema->items ? schema->items.get() : nullptr,
              path + "[" + std::to_string(i) + "]", env);
          !ok)
        return ok;
    return caf::unit;
  }
  if (!node.is_string())
    return caf::unit;
  static const std::regex pattern{
      "\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\\}"};
  const auto& text = node.get_ref<const std::string&>();
  std::string out;
  bool whole = false;
  auto begin = std::sregex_iterator(text.begin(), text.end(), pattern);
  auto end = std::sregex_iterator();
  if (begin == end)
    return caf::unit;
  size_t last = 0;
  for (auto it = begin; it != end; ++it) {
    const auto& m = *it;
    whole
        = m.position(0) == 0 && static_cast<size_t>(m.length(0)) == text.size();
    out += text.substr(last, static_cast<size_t>(m.position(0)) - last);
    auto value = env(m[1].str());
    if (value)
      out += *value;
    else if (m[2].matched)
      out += m[2].str();
    else
      return flag_error(errc::missing, path,
                        "environment variable " + m[1].str()
                            + " is not set; export it or write ${" + m[1].str()
                            + ":default}");
    last = static_cast<size_t>(m.position(0) + m.length(0));
  }
  out += text.substr(last);
  json typed = out;
  if (whole && schema) {
    auto as = plain_scalar(out);
    bool numeric = schema->type == value_type::number
                   || schema->type == value_type::integer
                   || schema->type == value_type::int_or_string;
    if ((numeric && as.is_number())
        || (schema->type == value_type::boolean && as.is_boolean()))
      typed = as;
  }
  node = std::move(typed);
  return caf::unit;
}

} // namespace

env_lookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    if (const char* v = std::getenv(name.c_str()))
      return std::string{v};
    return std::nullopt;
  };
}

caf::expected<json> substitute_environment(json doc, document_kind kind,
                                           const env_lookup& env) {
  try {
    if (auto ok = substitute(doc, &schema_of(kind), "", env); !ok)
      return ok.error();
    return doc;
  } catch (const std::exception& e) {
    return flag_error(errc::invalid, "",
                      std::string{"cannot substitute: "} + e.what());
  }
}

caf::expected<json> normalize(json doc, document_kind kind) {
  try {
    return normalize_document(std::move(doc), kind);
  } catch (const std::exception& e) {
    return flag_error(errc::invalid, "",
                      std::string{"cannot normalize the document: "}
                          + e.what());
  }
}

} // namespace aiperf::config::benchmark
