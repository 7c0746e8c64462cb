#include "tools/commands/endpoint_credentials.hpp"

#include "config/profile/profile_json.hpp"
#include "proto/benchmark_errors.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>

namespace aiperf::endpoint_credentials {

namespace {

constexpr std::string_view secret_hint
  = ": map it from a Secret in the pod (env valueFrom.secretKeyRef, e.g. "
    "`--env-from-secrets.";

caf::error bad(std::string msg) {
  return make_error(benchmark::errc::invalid_config, std::move(msg));
}

// How to supply `var` from a Secret (the message tail of a missing one).
std::string fix_for(std::string_view var, std::string_view example_key) {
  return std::string{secret_hint} + std::string{var} + " llm-credentials/"
         + std::string{example_key} + "`), or set it in the environment";
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size()
         && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
              return std::tolower(static_cast<unsigned char>(x))
                     == std::tolower(static_cast<unsigned char>(y));
            });
}

// Whether the authority of `url` carries user-info (user:password@host).
bool has_userinfo(std::string_view url) {
  auto scheme = url.find("://");
  auto rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  auto authority = rest.substr(0, rest.find('/'));
  return authority.find('@') != std::string_view::npos;
}

std::optional<std::string> non_empty(const system::env_lookup& env, std::string_view var) {
  auto v = env(var);
  if (!v || v->empty())
    return std::nullopt;
  return v;
}

std::string json_string_list(const std::vector<std::string>& xs) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w{sb};
  w.StartArray();
  for (const auto& x : xs)
    w.String(x.data(), static_cast<rapidjson::SizeType>(x.size()));
  w.EndArray();
  return {sb.GetString(), sb.GetSize()};
}

} // namespace

std::vector<std::pair<std::string, std::string>> child_env(const config::profile_config& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  if (cfg.api_key)
    out.emplace_back(api_key_variable, *cfg.api_key);
  if (!cfg.headers.empty()) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w{sb};
    w.StartObject();
    for (const auto& h : cfg.headers) {
      w.Key(h.name.data(), static_cast<rapidjson::SizeType>(h.name.size()));
      w.String(h.value.data(), static_cast<rapidjson::SizeType>(h.value.size()));
    }
    w.EndObject();
    out.emplace_back(headers_variable, std::string{sb.GetString(), sb.GetSize()});
  }
  if (std::any_of(cfg.urls.begin(), cfg.urls.end(), has_userinfo))
    out.emplace_back(urls_variable, json_string_list(cfg.urls));
  return out;
}

caf::expected<config::profile_config>
load_run(std::string_view json, const system::env_lookup& env, std::string_view source) {
  const std::string where{source};
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject())
    return bad(where + ": not a JSON object (write it with `aiperf-node kube generate` or "
                       "`profile --worker-pods`)");
  // run_meta (job name, namespace, epoch key) is the manifests' frozen
  // record of where the run belongs, not a benchmark setting.
  if (doc.HasMember("run_meta")) {
    if (!doc["run_meta"].IsObject())
      return bad(where + ": run_meta must be an object (job_name, namespace, epoch_key); "
                         "regenerate the file with `aiperf-node kube generate`");
    doc.RemoveMember("run_meta");
  }
  // URLs first: a redacted URL does not pass --url validation, so the real
  // list goes into the document before it is parsed.
  auto* endpoint = doc.HasMember("endpoint") && doc["endpoint"].IsObject() ? &doc["endpoint"]
                                                                           : nullptr;
  if (auto urls = non_empty(env, urls_variable)) {
    rapidjson::Document list;
    list.Parse(urls->data(), urls->size());
    bool strings = !list.HasParseError() && list.IsArray() && !list.Empty();
    if (strings)
      for (auto& u : list.GetArray())
        strings = strings && u.IsString();
    if (!strings)
      return bad(std::string{urls_variable}
                 + " must be a non-empty JSON list of URL strings, e.g. "
                   "[\"http://user:password@server:8000\"]");
    if (!endpoint) {
      doc.AddMember("endpoint", rapidjson::Value{rapidjson::kObjectType}, doc.GetAllocator());
      endpoint = &doc["endpoint"];
    }
    rapidjson::Value copy{list, doc.GetAllocator()};
    if (endpoint->HasMember("urls"))
      (*endpoint)["urls"] = std::move(copy);
    else
      endpoint->AddMember("urls", std::move(copy), doc.GetAllocator());
  } else if (endpoint && endpoint->HasMember("urls") && (*endpoint)["urls"].IsArray()) {
    for (auto& u : (*endpoint)["urls"].GetArray())
      if (u.IsString()
          && std::string_view{u.GetString()}.find(config::redacted) != std::string_view::npos)
        return bad(where + " has a redacted endpoint URL and " + std::string{urls_variable}
                   + " is not set" + fix_for(urls_variable, "urls")
                   + " (a JSON list of the full URLs)");
  }
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w{sb};
  doc.Accept(w);
  auto parsed = config::from_json({sb.GetString(), sb.GetSize()});
  if (!parsed)
    return bad(where + ": error: " + error_message(parsed.error()));
  auto cfg = std::move(*parsed);

  // The private variable fills an unset or redacted key; the conventional
  // OPENAI_API_KEY only a redacted one: an ambient shell variable must not
  // become the key of an endpoint configured without one.
  if (auto key = non_empty(env, api_key_variable))
    cfg.api_key = *key;
  else if (auto alias = non_empty(env, openai_api_key_variable);
           alias && cfg.api_key && *cfg.api_key == config::redacted)
    cfg.api_key = *alias;

  if (auto raw = non_empty(env, headers_variable)) {
    rapidjson::Document obj;
    obj.Parse(raw->data(), raw->size());
    bool ok = !obj.HasParseError() && obj.IsObject();
    if (ok)
      for (auto& m : obj.GetObject())
        ok = ok && m.value.IsString();
    if (!ok)
      return bad(std::string{headers_variable}
                 + " must be a JSON object of header strings, e.g. "
                   "{\"Authorization\": \"Bearer ...\"}");
    for (auto& m : obj.GetObject()) {
      std::string_view name{m.name.GetString(), m.name.GetStringLength()};
      std::string value{m.value.GetString(), m.value.GetStringLength()};
      bool found = false;
      for (auto& h : cfg.headers)
        if (iequal(h.name, name)) {
          h.value = value;
          found = true;
        }
      if (!found)
        cfg.headers.push_back({std::string{name}, std::move(value)});
    }
  }

  std::string missing;
  auto add = [&](std::string what) {
    missing += (missing.empty() ? "" : "; ") + std::move(what);
  };
  if (cfg.api_key && *cfg.api_key == config::redacted)
    add("the API key is redacted and neither " + std::string{api_key_variable} + " nor "
        + std::string{openai_api_key_variable} + " is set"
        + fix_for(api_key_variable, "api-key"));
  std::string headers;
  for (const auto& h : cfg.headers)
    if (h.value == config::redacted)
      headers += (headers.empty() ? "" : ", ") + h.name;
  if (!headers.empty())
    add("header(s) " + headers + " are redacted and " + std::string{headers_variable}
        + " does not name them" + fix_for(headers_variable, "headers")
        + " (a JSON object of header strings)");
  if (!missing.empty())
    return bad(where + ": " + missing);
  return cfg;
}

} // namespace aiperf::endpoint_credentials
