#include "config/profile/profile_config.hpp"
#include "proto/redact.hpp"

#include <openssl/err.h>
#include <openssl/x509_vfy.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sys/resource.h>
#include <system_error>
#include <thread>

namespace aiperf::config {

// -- errors -------------------------------------------------------------------

const char* to_string(errc x) noexcept {
  switch (x) {
  case errc::invalid:
    return "invalid";
  case errc::missing:
    return "missing";
  case errc::conflict:
    return "conflict";
  case errc::unreadable:
    return "unreadable";
  }
  return "unknown";
}

caf::error flag_error(errc code, std::string_view flag,
                      std::string_view message) {
  std::string line;
  if (!flag.empty()) {
    line += flag;
    line += ": ";
  }
  line += message;
  return make_error(code, std::move(line), std::string{flag});
}

std::string_view error_flag(const caf::error& err) {
  const auto* flag = error_payload<std::string>(err);
  return flag != nullptr ? std::string_view{*flag} : std::string_view{};
}

namespace {

// A bad value of `flag`.
caf::error fail(std::string_view flag, std::string_view message) {
  return flag_error(errc::invalid, flag, message);
}

// `flag` excludes, needs or does not add up with another flag.
caf::error conflict(std::string_view flag, std::string_view message) {
  return flag_error(errc::conflict, flag, message);
}

// The file `flag` names is missing or unreadable.
caf::error unreadable(std::string_view flag, std::string_view message) {
  return flag_error(errc::unreadable, flag, message);
}

// Integers print plainly; doubles via python_float so messages match input.
std::string show(std::int64_t x) {
  return std::to_string(x);
}

std::string show(int x) {
  return std::to_string(x);
}

std::string show(double x) {
  return python_float(x);
}

// "5", "0.05", "500": the shortest spelling, for numbers quoted back in a
// sentence.
std::string shortest(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string_view trim(std::string_view s) {
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
           || c == '\v';
  };
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
    auto start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
    if (i > start)
      out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string compact_json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  v.Accept(writer);
  return {buf.GetString(), buf.GetSize()};
}

std::string json_string(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return {buf.GetString(), buf.GetSize()};
}

// Parses `text` as one complete JSON value (full precision, so numbers
// survive a round trip exactly).
bool parse_json(std::string_view text, rapidjson::Document& doc) {
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
  return !doc.HasParseError();
}

// RFC 7230 token characters: anything else in a header name would corrupt
// the request line-up on the wire.
bool is_header_name(std::string_view name) {
  if (name.empty())
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return std::isalnum(u)
           || std::string_view{"!#$%&'*+-.^_`|~"}.find(c)
                  != std::string_view::npos;
  });
}

bool has_line_break(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

} // namespace

// -- enumerations -------------------------------------------------------------

namespace {

template <class Enum> struct enum_names;

template <> struct enum_names<endpoint_type> {
  static constexpr std::array<std::string_view, 3> values{"chat", "completions",
                                                          "embeddings"};
};
template <> struct enum_names<model_selection_strategy> {
  static constexpr std::array<std::string_view, 2> values{"round_robin",
                                                          "random"};
};
template <> struct enum_names<arrival_pattern> {
  static constexpr std::array<std::string_view, 3> values{"constant", "poisson",
                                                          "gamma"};
};
template <> struct enum_names<custom_dataset_type> {
  static constexpr std::array<std::string_view, 3> values{
      "single_turn", "multi_turn", "mooncake_trace"};
};
template <> struct enum_names<export_level> {
  static constexpr std::array<std::string_view, 3> values{"summary", "records",
                                                          "raw"};
};
template <> struct enum_names<ui_type> {
  static constexpr std::array<std::string_view, 2> values{"simple", "none"};
};
template <> struct enum_names<scheduler_policy> {
  static constexpr std::array<std::string_view, 4> values{
      "auto", "io-thread", "sharing", "stealing"};
};

template <> struct enum_names<prompt_corpus> {
  static constexpr std::array<std::string_view, 2> values{"sonnet", "coding"};
};

template <> struct enum_names<url_strategy> {
  static constexpr std::array<std::string_view, 1> values{"round_robin"};
};

template <> struct enum_names<io_priority> {
  static constexpr std::array<std::string_view, 3> values{"auto", "normal",
                                                          "high"};
};

template <class Enum> std::string_view name_of(Enum x) noexcept {
  const auto& names = enum_names<Enum>::values;
  auto i = static_cast<std::size_t>(x);
  return i < names.size() ? names[i] : std::string_view{"?"};
}

} // namespace

std::string_view to_string(endpoint_type x) noexcept {
  return name_of(x);
}
std::string_view to_string(model_selection_strategy x) noexcept {
  return name_of(x);
}
std::string_view to_string(arrival_pattern x) noexcept {
  return name_of(x);
}
std::string_view to_string(custom_dataset_type x) noexcept {
  return name_of(x);
}
std::string_view to_string(export_level x) noexcept {
  return name_of(x);
}
std::string_view to_string(ui_type x) noexcept {
  return name_of(x);
}
std::string_view to_string(prompt_corpus x) noexcept {
  return name_of(x);
}
std::string_view to_string(scheduler_policy x) noexcept {
  return name_of(x);
}
std::string_view to_string(io_priority x) noexcept {
  return name_of(x);
}
std::string_view to_string(url_strategy x) noexcept {
  return name_of(x);
}

template <class Enum>
std::optional<Enum> enum_from_string(std::string_view text) {
  const auto& names = enum_names<Enum>::values;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == text)
      return static_cast<Enum>(i);
  return std::nullopt;
}

template <class Enum> std::string enum_choices() {
  std::string out;
  for (auto name : enum_names<Enum>::values) {
    if (!out.empty())
      out += '|';
    out += name;
  }
  return out;
}

#define AIPERF_CONFIG_INSTANTIATE(Enum)                                        \
  template std::optional<Enum> enum_from_string<Enum>(std::string_view);       \
  template std::string enum_choices<Enum>();
AIPERF_CONFIG_INSTANTIATE(endpoint_type)
AIPERF_CONFIG_INSTANTIATE(model_selection_strategy)
AIPERF_CONFIG_INSTANTIATE(arrival_pattern)
AIPERF_CONFIG_INSTANTIATE(custom_dataset_type)
AIPERF_CONFIG_INSTANTIATE(export_level)
AIPERF_CONFIG_INSTANTIATE(ui_type)
AIPERF_CONFIG_INSTANTIATE(scheduler_policy)
AIPERF_CONFIG_INSTANTIATE(io_priority)
AIPERF_CONFIG_INSTANTIATE(url_strategy)
AIPERF_CONFIG_INSTANTIATE(prompt_corpus)
#undef AIPERF_CONFIG_INSTANTIATE

// -- parsers ------------------------------------------------------------------

caf::expected<std::vector<http_header>> parse_headers(std::string_view text) {
  constexpr std::string_view flag = "-H/--header";
  std::vector<http_header> out;
  auto add = [&](std::string_view name,
                 std::string_view value) -> caf::expected<void> {
    name = trim(name);
    value = trim(value);
    if (!is_header_name(name))
      return fail(std::string{flag},
                  "invalid header name '" + std::string{name}
                      + "'; use Name:Value with a name of letters, digits or "
                        "-_.");
    if (has_line_break(value))
      return fail(std::string{flag},
                  "value of header '" + std::string{name}
                      + "' contains a line break; remove it");
    out.push_back(http_header{std::string{name}, std::string{value}});
    return caf::unit;
  };
  auto body = trim(text);
  if (!body.empty() && body.front() == '{') {
    rapidjson::Document doc;
    if (!parse_json(body, doc) || !doc.IsObject())
      return fail(std::string{flag},
                  "'" + std::string{body}
                      + "' is not a valid JSON object; use "
                        "{\"Name\":\"Value\"} or Name:Value");
    for (const auto& m : doc.GetObject()) {
      if (!m.value.IsString())
        return fail(std::string{flag}, "JSON value of header '"
                                           + std::string{m.name.GetString()}
                                           + "' must be a string");
      if (auto added = add({m.name.GetString(), m.name.GetStringLength()},
                           {m.value.GetString(), m.value.GetStringLength()});
          !added)
        return added.error();
    }
    return out;
  }
  auto colon = body.find(':');
  if (colon == std::string_view::npos)
    return fail(std::string{flag},
                "'" + std::string{body} + "' has no ':'; use Name:Value");
  if (auto added = add(body.substr(0, colon), body.substr(colon + 1)); !added)
    return added.error();
  return out;
}

caf::expected<std::vector<extra_input>>
parse_extra_inputs(std::string_view text) {
  constexpr std::string_view flag = "--extra-inputs";
  std::vector<extra_input> out;
  auto body = trim(text);
  if (!body.empty() && body.front() == '{') {
    rapidjson::Document doc;
    if (!parse_json(body, doc) || !doc.IsObject())
      return fail(std::string{flag},
                  "'" + std::string{body}
                      + "' is not a valid JSON object; use {\"key\": value} "
                        "or key:value");
    for (const auto& m : doc.GetObject())
      out.push_back(
          extra_input{std::string{m.name.GetString(), m.name.GetStringLength()},
                      compact_json(m.value)});
    return out;
  }
  auto colon = body.find(':');
  if (colon == std::string_view::npos || trim(body.substr(0, colon)).empty())
    return fail(std::string{flag},
                "'" + std::string{body}
                    + "' is not key:value; use e.g. ignore_eos:true");
  auto key = trim(body.substr(0, colon));
  auto value = trim(body.substr(colon + 1));
  rapidjson::Document doc;
  if (!value.empty() && parse_json(value, doc))
    out.push_back(extra_input{std::string{key}, compact_json(doc)});
  else
    out.push_back(extra_input{std::string{key}, json_string(value)});
  return out;
}

const std::vector<std::string_view>& goodput_tags() {
  static const std::vector<std::string_view> tags{
      "request_latency",
      "time_to_first_token",
      "time_to_second_token",
      "inter_token_latency",
      "output_token_throughput_per_user",
      "prefill_throughput_per_user",
      "e2e_output_token_throughput",
      "output_sequence_length",
      "input_sequence_length",
  };
  return tags;
}

bool goodput_tag_applies(std::string_view tag, endpoint_type type,
                         bool streaming) {
  // Mirrors AIPerf's metric flags: STREAMING_ONLY metrics need --streaming,
  // PRODUCES_TOKENS_ONLY metrics have no values for embeddings.
  static constexpr std::array<std::string_view, 5> streaming_only{
      "time_to_first_token", "time_to_second_token", "inter_token_latency",
      "output_token_throughput_per_user", "prefill_throughput_per_user"};
  static constexpr std::array<std::string_view, 2> produces_tokens{
      "e2e_output_token_throughput", "output_sequence_length"};
  auto in = [&](const auto& list) {
    return std::find(list.begin(), list.end(), tag) != list.end();
  };
  if (in(streaming_only))
    return streaming && type != endpoint_type::embeddings;
  if (in(produces_tokens))
    return type != endpoint_type::embeddings;
  const auto& all = goodput_tags();
  return std::find(all.begin(), all.end(), tag) != all.end();
}

caf::expected<std::vector<goodput_slo>> parse_goodput(std::string_view text) {
  constexpr std::string_view flag = "--goodput";
  std::vector<goodput_slo> out;
  for (auto item : split_whitespace(text)) {
    auto colon = item.find(':');
    if (colon == std::string_view::npos)
      return fail(std::string{flag}, "'" + std::string{item}
                                         + "' is not tag:value; use e.g. "
                                           "\"request_latency:250\"");
    auto tag = item.substr(0, colon);
    auto value_text = item.substr(colon + 1);
    const auto& tags = goodput_tags();
    if (std::find(tags.begin(), tags.end(), tag) == tags.end()) {
      std::string valid;
      for (auto t : tags)
        valid += (valid.empty() ? "" : ", ") + std::string{t};
      return fail(std::string{flag}, "unknown metric tag '" + std::string{tag}
                                         + "'; valid tags: " + valid);
    }
    double value = 0;
    auto [ptr, ec] = std::from_chars(
        value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc{} || ptr != value_text.data() + value_text.size()
        || !std::isfinite(value) || value <= 0)
      return fail(std::string{flag},
                  "value of '" + std::string{tag}
                      + "' must be a positive number in the metric's display "
                        "unit (ms or tokens/s), got '"
                      + std::string{value_text} + "'");
    for (const auto& slo : out)
      if (slo.tag == tag)
        return fail(std::string{flag},
                    "'" + std::string{tag} + "' is given twice; keep one");
    out.push_back(goodput_slo{std::string{tag}, value});
  }
  return out;
}

namespace {

/// "user:password" of a URL as typed ("" = none).
std::string userinfo_of(std::string_view text) {
  auto scheme = text.find("://");
  auto start = scheme == std::string_view::npos ? 0 : scheme + 3;
  auto authority = text.substr(start, text.find('/', start) - start);
  auto at = authority.rfind('@');
  return at == std::string_view::npos ? std::string{} : std::string{authority.substr(0, at)};
}

} // namespace

caf::expected<parsed_url> parse_url(std::string_view text) {
  constexpr std::string_view flag = "--url";
  auto bad = [&](const std::string& why) {
    return fail(std::string{flag}, "'" + proto::redact_url(text) + "' " + why
                                       + "; use e.g. http://127.0.0.1:8000");
  };
  auto s = text;
  if (s.empty())
    return bad("is empty");
  if (s.find_first_of(" \t\r\n") != std::string_view::npos)
    return bad("contains whitespace");
  parsed_url out;
  if (auto pos = s.find("://"); pos != std::string_view::npos) {
    out.scheme = std::string{s.substr(0, pos)};
    std::transform(out.scheme.begin(), out.scheme.end(), out.scheme.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (out.scheme != "http" && out.scheme != "https")
      return bad("has scheme '" + out.scheme + "' (only http and https)");
    s.remove_prefix(pos + 3);
  } else {
    out.scheme = "http";
  }
  auto slash = s.find('/');
  auto authority = s.substr(0, slash);
  auto path
      = slash == std::string_view::npos ? std::string_view{} : s.substr(slash);
  // As aiohttp: user-info becomes HTTP Basic auth. The last '@' ends it, so
  // an unencoded '@' in a password still parses.
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    auto info = authority.substr(0, at);
    for (std::size_t i = 0; i < info.size(); ++i)
      if (info[i] == '%'
          && (i + 2 >= info.size() || !std::isxdigit(static_cast<unsigned char>(info[i + 1]))
              || !std::isxdigit(static_cast<unsigned char>(info[i + 2]))))
        return bad("has a '%' in its user info that is no %XX escape (write '%' as %25)");
    authority.remove_prefix(at + 1);
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return bad("has an unterminated IPv6 address");
    out.host = std::string{authority.substr(1, close - 1)};
    auto rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':')
        return bad("has text after the IPv6 address");
      port_text = rest.substr(1);
      if (port_text.empty())
        return bad("has an empty port");
    }
  } else {
    auto colon = authority.find(':');
    out.host = std::string{authority.substr(0, colon)};
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty())
        return bad("has an empty port");
    }
  }
  if (out.host.empty())
    return bad("has no host");
  if (!port_text.empty()) {
    unsigned port = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(),
                                     port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || ptr != port_text.data() + port_text.size()
        || port < 1 || port > 65535)
      return bad("has port '" + std::string{port_text} + "' (must be 1-65535)");
    out.port = static_cast<std::uint16_t>(port);
  } else {
    out.port = out.scheme == "https" ? 443 : 80;
  }
  if (path.find_first_of("?#") != std::string_view::npos)
    return bad("has a query or fragment (use --endpoint for the path)");
  while (!path.empty() && path.back() == '/')
    path.remove_suffix(1);
  out.path = std::string{path};
  return out;
}

std::string to_string(const parsed_url& url) {
  auto host = url.host.find(':') != std::string::npos ? "[" + url.host + "]"
                                                      : url.host;
  return url.scheme + "://" + host + ":" + std::to_string(url.port) + url.path;
}

// -- naming -------------------------------------------------------------------

std::string_view default_endpoint_path(endpoint_type type) {
  switch (type) {
  case endpoint_type::chat:
    return "/v1/chat/completions";
  case endpoint_type::completions:
    return "/v1/completions";
  case endpoint_type::embeddings:
    return "/v1/embeddings";
  }
  return "/v1/chat/completions";
}

std::string endpoint_path(const profile_config& cfg) {
  if (cfg.custom_endpoint)
    return *cfg.custom_endpoint;
  return std::string{default_endpoint_path(cfg.endpoint_type)};
}

std::string python_float(double x) {
  if (std::isnan(x))
    return "nan";
  if (std::isinf(x))
    return x > 0 ? "inf" : "-inf";
  std::array<char, 64> buf{};
  // Python's repr is the shortest round-tripping form, in fixed notation for
  // 1e-4 <= |x| < 1e16 and scientific otherwise.
  auto ax = std::fabs(x);
  bool scientific = ax != 0 && (ax < 1e-4 || ax >= 1e16);
  auto fmt
      = scientific ? std::chars_format::scientific : std::chars_format::fixed;
  auto [ptr, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x, fmt);
  std::string out(buf.data(), ec == std::errc{} ? ptr : buf.data());
  if (!scientific && out.find('.') == std::string::npos)
    out += ".0";
  return out;
}

std::string effective_tokenizer(const profile_config& cfg) {
  if (!cfg.tokenizer.empty())
    return cfg.tokenizer;
  // The mock answers every model name and advertises `mock-model` when
  // given none (tools/mock_server responses.cpp render_models).
  if (uses_mock_server(cfg) || cfg.model_names.empty()
      || cfg.model_names[0] == "mock-model")
    return "whitespace8";
  return cfg.model_names[0];
}

std::string run_name(const profile_config& cfg) {
  std::string model = cfg.model_names.empty() ? "model" : cfg.model_names[0];
  std::replace(model.begin(), model.end(), '/', '_');
  if (cfg.model_names.size() > 1)
    model += "_multi";
  std::string stimulus;
  if (cfg.fixed_schedule) {
    stimulus = "fixed_schedule";
  } else if (cfg.user_centric_rate) {
    stimulus = "user_centric-users" + std::to_string(cfg.num_users.value_or(0))
               + "-qps" + python_float(*cfg.user_centric_rate);
  } else {
    if (cfg.concurrency)
      stimulus = "concurrency" + std::to_string(*cfg.concurrency);
    if (cfg.request_rate) {
      if (!stimulus.empty())
        stimulus += '-';
      stimulus += "request_rate" + python_float(*cfg.request_rate);
    }
  }
  return model + "-openai-" + std::string{to_string(cfg.endpoint_type)} + "-"
         + stimulus;
}

std::filesystem::path artifact_dir(const profile_config& cfg) {
  return std::filesystem::path{cfg.output_artifact_dir} / run_name(cfg);
}

// -- validation ---------------------------------------------------------------

unsigned detected_cores() noexcept {
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

constexpr std::array<std::string_view, 7> log_levels{
    "trace", "debug", "info", "warning", "error", "critical", "off"};

// Range helpers: each fails with the error naming `flag`.
template <class T>
caf::expected<void> at_least(std::string_view flag, const std::optional<T>& x,
                             T min) {
  if (x && !(*x >= min))
    return fail(std::string{flag},
                "must be ≥ " + show(min) + " (got " + show(*x) + ")");
  return caf::unit;
}

template <class T>
caf::expected<void> at_least(std::string_view flag, T x, T min) {
  return at_least(flag, std::optional<T>{x}, min);
}

caf::expected<void> positive(std::string_view flag,
                             const std::optional<double>& x) {
  if (x && !(std::isfinite(*x) && *x > 0))
    return fail(std::string{flag},
                "must be a finite number > 0 (got " + show(*x) + ")");
  return caf::unit;
}

caf::expected<void> non_negative(std::string_view flag, double x) {
  if (!(std::isfinite(x) && x >= 0))
    return fail(std::string{flag},
                "must be a finite number ≥ 0 (got " + show(x) + ")");
  return caf::unit;
}

// Rates below min_request_rate: the first gap overflows the ns clock.
caf::expected<void> slowest_rate(std::string_view flag,
                                 const std::optional<double>& x) {
  if (x && *x < min_request_rate)
    return fail(flag, "must be ≥ " + show(min_request_rate)
                          + " requests/s (one per ~11.6 days; got " + show(*x)
                          + "); slower rates cannot be timed");
  return caf::unit;
}

// Seconds above max_seconds overflow the nanosecond deadlines.
caf::expected<void> at_most_seconds(std::string_view flag, double x) {
  if (x > max_seconds)
    return fail(flag, "must be ≤ " + show(max_seconds) + " s (~115 days; got "
                          + show(x)
                          + "); longer times overflow the deadline clock");
  return caf::unit;
}

caf::expected<void> at_most_tokens(std::string_view flag,
                                   const std::optional<std::int64_t>& x) {
  if (x && *x > max_sequence_tokens)
    return fail(flag, "must be ≤ " + show(max_sequence_tokens) + " tokens (got "
                          + show(*x) + "); every prompt is built in memory");
  return caf::unit;
}

caf::expected<void> at_most_requests(std::string_view flag,
                                     const std::optional<std::int64_t>& x) {
  if (x && *x > max_planned_requests)
    return fail(flag, "must be ≤ " + show(max_planned_requests) + " (got "
                          + show(*x)
                          + "); every request's record is kept in memory "
                            "until the export; split the run");
  return caf::unit;
}

// rate × duration requests are scheduled; they must fit max_planned_requests.
caf::expected<void> planned_sends(std::string_view flag,
                                  const std::optional<double>& rate,
                                  const std::optional<double>& duration) {
  if (!rate || !duration)
    return caf::unit;
  auto sends = *rate * *duration;
  if (sends > static_cast<double>(max_planned_requests))
    return conflict(flag, show(*rate) + " requests/s × --benchmark-duration "
                              + show(*duration) + " s plans " + show(sends)
                              + " requests, above the "
                              + show(max_planned_requests)
                              + " one run can hold in memory; lower the rate "
                                "or the duration");
  return caf::unit;
}

// Widening so int fields share the int64 helpers.
std::optional<std::int64_t> wide(const std::optional<int>& x) {
  if (x)
    return *x;
  return std::nullopt;
}

caf::expected<void> validate_endpoint(const profile_config& cfg) {
  if (cfg.model_names.empty())
    return flag_error(errc::missing, "--model",
                      "is required; name the model to benchmark, e.g. "
                      "--model Qwen/Qwen3-0.6B");
  for (const auto& name : cfg.model_names)
    if (trim(name).empty())
      return fail("--model", "contains an empty model name; remove the stray "
                             "comma");
  for (const auto& url : cfg.urls)
    if (auto parsed = parse_url(url); !parsed)
      return parsed.error();
  if (cfg.custom_endpoint
      && (cfg.custom_endpoint->empty() || cfg.custom_endpoint->front() != '/'
          || cfg.custom_endpoint->find_first_of(" \t\r\n")
                 != std::string::npos))
    return fail("--endpoint", "must be a path starting with '/' without "
                              "spaces (got '"
                                  + *cfg.custom_endpoint + "')");
  if (cfg.api_key && (cfg.api_key->empty() || has_line_break(*cfg.api_key)))
    return fail("--api-key", "must be non-empty and on one line");
  for (const auto& h : cfg.headers) {
    if (!is_header_name(h.name))
      return fail("-H/--header",
                  "invalid header name '" + h.name + "'; use Name:Value");
    if (has_line_break(h.value))
      return fail("-H/--header", "value of header '" + h.name
                                     + "' contains a line break; remove it");
  }
  for (const auto& x : cfg.extra_inputs) {
    rapidjson::Document doc;
    if (x.key.empty())
      return fail("--extra-inputs", "has an empty key; use key:value");
    if (!parse_json(x.json, doc))
      return fail("--extra-inputs",
                  "value of '" + x.key + "' is not valid JSON");
  }
  if (auto ok = positive("--request-timeout-seconds",
                         std::optional{cfg.request_timeout_seconds});
      !ok)
    return ok;
  if (auto ok = at_most_seconds("--request-timeout-seconds",
                                cfg.request_timeout_seconds);
      !ok)
    return ok;
  if (cfg.ca_file && cfg.insecure)
    return conflict("--insecure",
                    "contradicts --ca-file (one verifies "
                    "certificates, the other skips it); drop one");
  if (cfg.ca_file && cfg.ca_file->empty())
    return fail("--ca-file", "is empty; give the path of a PEM bundle");
  return caf::unit;
}

// Trace datasets imply a fixed schedule even before derive() sets the flag.
bool is_fixed(const profile_config& cfg) {
  return cfg.fixed_schedule
         || cfg.custom_dataset_type == custom_dataset_type::mooncake_trace;
}

caf::expected<void> validate_input(const profile_config& cfg) {
  if (cfg.input_file && cfg.input_file->empty())
    return fail("--input-file", "is empty; give the path of a JSONL file");
  if (cfg.custom_dataset_type && !cfg.input_file)
    return conflict("--custom-dataset-type", "needs --input-file; add the file "
                                             "or drop the type");
  if (cfg.fixed_schedule && !cfg.input_file)
    return conflict("--fixed-schedule", "needs --input-file with timestamps");
  bool offsets = cfg.fixed_schedule_start_offset
                 || cfg.fixed_schedule_end_offset
                 || cfg.fixed_schedule_auto_offset;
  if (offsets && !is_fixed(cfg)) {
    auto flag
        = cfg.fixed_schedule_start_offset ? "--fixed-schedule-start-offset"
          : cfg.fixed_schedule_end_offset ? "--fixed-schedule-end-offset"
                                          : "--fixed-schedule-auto-offset";
    return conflict(flag, "only applies to a fixed schedule; add "
                          "--fixed-schedule or use a trace dataset type");
  }
  if (auto ok = at_least("--fixed-schedule-start-offset",
                         cfg.fixed_schedule_start_offset, std::int64_t{0});
      !ok)
    return ok;
  if (auto ok = at_least("--fixed-schedule-end-offset",
                         cfg.fixed_schedule_end_offset, std::int64_t{0});
      !ok)
    return ok;
  if (cfg.fixed_schedule_start_offset && cfg.fixed_schedule_end_offset
      && *cfg.fixed_schedule_start_offset > *cfg.fixed_schedule_end_offset)
    return conflict("--fixed-schedule-end-offset",
                    "must be ≥ --fixed-schedule-start-offset ("
                        + show(*cfg.fixed_schedule_start_offset) + "), got "
                        + show(*cfg.fixed_schedule_end_offset));
  if (cfg.fixed_schedule_auto_offset && cfg.fixed_schedule_start_offset)
    return conflict("--fixed-schedule-auto-offset",
                    "contradicts --fixed-schedule-start-offset; use one");
  if (auto ok = at_least("--num-dataset-entries", cfg.num_dataset_entries,
                         std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = at_least("--isl", cfg.isl_mean, std::int64_t{1}); !ok)
    return ok;
  if (auto ok = at_most_tokens("--isl", cfg.isl_mean); !ok)
    return ok;
  if (auto ok = non_negative("--isl-stddev", cfg.isl_stddev); !ok)
    return ok;
  if (cfg.isl_stddev > static_cast<double>(max_sequence_tokens))
    return fail("--isl-stddev", "must be ≤ " + show(max_sequence_tokens)
                                    + " tokens (got " + show(cfg.isl_stddev)
                                    + "); wider draws build huge prompts");
  if (auto ok = at_least("--osl", cfg.osl_mean, std::int64_t{1}); !ok)
    return ok;
  if (auto ok = at_most_tokens("--osl", cfg.osl_mean); !ok)
    return ok;
  if (auto ok = non_negative("--osl-stddev", cfg.osl_stddev); !ok)
    return ok;
  if (cfg.osl_stddev > static_cast<double>(max_sequence_tokens))
    return fail("--osl-stddev", "must be ≤ " + show(max_sequence_tokens)
                                    + " tokens (got " + show(cfg.osl_stddev)
                                    + ")");
  if (cfg.osl_stddev > 0 && !cfg.osl_mean)
    return conflict("--osl-stddev", "needs --osl (a mean to vary around)");
  if (auto ok
      = at_least("--conversation-num", cfg.conversation_num, std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = at_least("--conversation-turn-mean", cfg.conversation_turn_mean,
                         std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = non_negative("--conversation-turn-stddev",
                             cfg.conversation_turn_stddev);
      !ok)
    return ok;
  if (auto ok = non_negative("--conversation-turn-delay-mean",
                             cfg.conversation_turn_delay_mean);
      !ok)
    return ok;
  if (auto ok = non_negative("--conversation-turn-delay-stddev",
                             cfg.conversation_turn_delay_stddev);
      !ok)
    return ok;
  if (auto ok = non_negative("--conversation-turn-delay-ratio",
                             cfg.conversation_turn_delay_ratio);
      !ok)
    return ok;
  if (!cfg.input_file) {
    auto prompts = cfg.conversation_num.value_or(cfg.num_dataset_entries);
    auto tokens = static_cast<double>(prompts)
                  * static_cast<double>(cfg.conversation_turn_mean)
                  * static_cast<double>(cfg.isl_mean);
    if (tokens > max_synthetic_tokens)
      return conflict(
          cfg.conversation_num ? "--conversation-num" : "--num-dataset-entries",
          show(prompts) + " prompts × " + show(cfg.conversation_turn_mean)
              + " turns × --isl " + show(cfg.isl_mean) + " = " + show(tokens)
              + " tokens, above the " + show(max_synthetic_tokens)
              + " a synthetic dataset may hold (it is built in "
                "memory before the first send); use fewer "
                "prompts, turns or tokens");
  }
  if (cfg.tokenizer_revision.empty())
    return fail("--tokenizer-revision",
                "must not be empty; give a branch, tag or commit (default "
                "main)");
  return caf::unit;
}

caf::expected<void> validate_load(const profile_config& cfg) {
  if (auto ok = at_least("--concurrency", cfg.concurrency, std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = positive("--request-rate", cfg.request_rate); !ok)
    return ok;
  if (auto ok = slowest_rate("--request-rate", cfg.request_rate); !ok)
    return ok;
  if (auto ok = positive("--arrival-smoothness", cfg.arrival_smoothness); !ok)
    return ok;
  if (cfg.arrival_smoothness && cfg.arrival_pattern != arrival_pattern::gamma)
    return conflict("--arrival-smoothness", "only applies to --arrival-pattern "
                                            "gamma; add it or drop the "
                                            "smoothness");
  if (auto ok = at_least("--request-count", cfg.request_count, std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = at_most_requests("--request-count", cfg.request_count); !ok)
    return ok;
  if (auto ok = positive("--benchmark-duration", cfg.benchmark_duration); !ok)
    return ok;
  if (cfg.benchmark_duration)
    if (auto ok
        = at_most_seconds("--benchmark-duration", *cfg.benchmark_duration);
        !ok)
      return ok;
  if (auto ok = positive("--slice-duration", cfg.slice_duration); !ok)
    return ok;
  if (cfg.slice_duration)
    if (auto ok = at_most_seconds("--slice-duration", *cfg.slice_duration); !ok)
      return ok;
  if (auto ok = planned_sends("--request-rate", cfg.request_rate,
                              cfg.benchmark_duration);
      !ok)
    return ok;
  if (auto ok = planned_sends("--user-centric-rate", cfg.user_centric_rate,
                              cfg.benchmark_duration);
      !ok)
    return ok;
  if (cfg.benchmark_grace_period
      && (std::isnan(*cfg.benchmark_grace_period)
          || *cfg.benchmark_grace_period < 0))
    return fail("--benchmark-grace-period",
                "must be ≥ 0 seconds or inf (got "
                    + show(*cfg.benchmark_grace_period) + ")");
  if (cfg.benchmark_grace_period && !cfg.benchmark_duration)
    return conflict("--benchmark-grace-period", "needs --benchmark-duration");
  if (auto ok = at_least("--warmup-request-count", cfg.warmup_request_count,
                         std::int64_t{0});
      !ok)
    return ok;
  if (auto ok = at_most_requests("--warmup-request-count",
                                 std::optional{cfg.warmup_request_count});
      !ok)
    return ok;
  if (auto ok = at_least("--prefill-concurrency", cfg.prefill_concurrency,
                         std::int64_t{1});
      !ok)
    return ok;
  if (cfg.prefill_concurrency && !cfg.streaming)
    return conflict("--prefill-concurrency",
                    cfg.endpoint_type == endpoint_type::embeddings
                        ? "needs streaming, which embeddings cannot do"
                        : "needs --streaming (first tokens are only seen when "
                          "streaming); add --streaming");
  if (auto ok = positive("--user-centric-rate", cfg.user_centric_rate); !ok)
    return ok;
  if (auto ok = slowest_rate("--user-centric-rate", cfg.user_centric_rate); !ok)
    return ok;
  if (auto ok = at_least("--num-users", cfg.num_users, std::int64_t{1}); !ok)
    return ok;
  if (cfg.user_centric_rate) {
    if (!cfg.num_users)
      return conflict("--user-centric-rate", "needs --num-users");
    if (cfg.request_rate)
      return conflict("--user-centric-rate", "contradicts --request-rate; use "
                                             "one");
    bool file_turns
        = cfg.input_file
          && cfg.custom_dataset_type == custom_dataset_type::multi_turn;
    if (!file_turns && cfg.conversation_turn_mean < 2)
      return conflict("--user-centric-rate",
                      "needs multi-turn sessions; add --conversation-turn-mean "
                      "2 or more (got "
                          + show(cfg.conversation_turn_mean) + ")");
  } else if (cfg.num_users) {
    return conflict("--num-users", "only applies with --user-centric-rate");
  }
  if (is_fixed(cfg)) {
    if (cfg.request_rate)
      return conflict("--request-rate", "contradicts the fixed schedule (the "
                                        "file's timestamps set the pace); drop "
                                        "one");
    if (cfg.user_centric_rate)
      return conflict("--user-centric-rate", "contradicts the fixed schedule; "
                                             "drop one");
  }
  for (const auto& slo : cfg.goodput) {
    const auto& tags = goodput_tags();
    if (std::find(tags.begin(), tags.end(), slo.tag) == tags.end())
      return fail("--goodput", "unknown metric tag '" + slo.tag + "'");
    if (!(std::isfinite(slo.value) && slo.value > 0))
      return fail("--goodput", "value of '" + slo.tag + "' must be > 0");
    if (!goodput_tag_applies(slo.tag, cfg.endpoint_type, cfg.streaming))
      return conflict("--goodput",
                      "'" + slo.tag + "' has no values for "
                          + std::string{to_string(cfg.endpoint_type)}
                          + (cfg.streaming ? "" : " without --streaming")
                          + "; drop it"
                          + (cfg.endpoint_type != endpoint_type::embeddings
                                     && !cfg.streaming
                                 ? " or add --streaming"
                                 : ""));
  }
  if (!(cfg.request_cancellation_rate >= 0
        && cfg.request_cancellation_rate <= 100))
    return fail("--request-cancellation-rate",
                "must be a percentage in [0, 100] (got "
                    + show(cfg.request_cancellation_rate) + ")");
  if (auto ok = non_negative("--request-cancellation-delay",
                             cfg.request_cancellation_delay);
      !ok)
    return ok;
  if (auto ok = at_most_seconds("--request-cancellation-delay",
                                cfg.request_cancellation_delay);
      !ok)
    return ok;
  if (cfg.failed_request_threshold) {
    // AIPerf's unit is a ratio; a percentage typed out of habit (5 for 5 %)
    // would never trip, so it is refused with the ratio it meant.
    auto x = *cfg.failed_request_threshold;
    if (x > 1 && x <= 100)
      return fail("--failed-request-threshold",
                  "is a ratio in [0, 1], as in AIPerf: " + shortest(x)
                      + " means " + shortest(x * 100) + " %; pass "
                      + shortest(x / 100) + " for " + shortest(x) + " %");
    if (!(x >= 0 && x <= 1))
      return fail("--failed-request-threshold",
                  "must be a ratio in [0, 1] (0.05 = 5 % of the profiling "
                  "requests failed; got "
                      + show(x) + ")");
  }
  return caf::unit;
}

caf::expected<void> validate_runtime(const profile_config& cfg) {
  if (cfg.output_artifact_dir.empty())
    return fail("--output-artifact-dir", "is empty; give a directory");
  if (const auto& p = cfg.profile_export_prefix) {
    std::string why;
    if (p->empty() || *p == "." || *p == "..") {
      why = "must be a file name prefix such as run1 (got '";
      why += *p;
      why += "')";
    } else if (p->find('/') != std::string::npos) {
      why = "'";
      why += *p;
      why += "' names a folder; give a plain file name prefix and choose "
             "the folder with --artifact-dir";
    }
    if (!why.empty())
      return fail("--profile-export-prefix", why);
  }
  if (std::find(log_levels.begin(), log_levels.end(), cfg.log_level)
      == log_levels.end())
    return fail("--log-level", "'" + cfg.log_level
                                   + "' is not one of trace|debug|info|warning|"
                                     "error|critical|off");
  if (auto ok
      = at_least("--workers-max", wide(cfg.workers_max), std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = at_least("--record-processors", wide(cfg.record_processors),
                         std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = at_least("--io-threads", wide(cfg.io_threads), std::int64_t{1});
      !ok)
    return ok;
  if (cfg.io_threads && *cfg.io_threads > max_io_threads)
    return fail("--io-threads", "must be ≤ " + show(max_io_threads) + " (got "
                                    + show(*cfg.io_threads)
                                    + "); one thread per core is enough");
  if (auto ok = at_least("--scheduler-threads", wide(cfg.scheduler_threads),
                         std::int64_t{1});
      !ok)
    return ok;
  if (auto ok = at_least("--worker-pods", std::int64_t{cfg.worker_pods},
                         std::int64_t{1});
      !ok)
    return ok;
  // The pods' results server and ready marker look for the default names.
  if (cfg.profile_export_prefix && cfg.worker_pods > 1)
    return conflict("--profile-export-prefix",
                    "applies to single-process runs only; drop it or "
                    "--worker-pods");
  if (auto ok = at_least("--workers-per-pod", wide(cfg.workers_per_pod),
                         std::int64_t{1});
      !ok)
    return ok;
  auto pods = cfg.worker_pods;
  if (cfg.workers_max && *cfg.workers_max % pods != 0)
    return conflict("--workers-max",
                    "is a total split evenly over --worker-pods " + show(pods)
                        + "; " + show(*cfg.workers_max)
                        + " does not divide; use a multiple of " + show(pods));
  if (cfg.workers_max && cfg.workers_per_pod
      && std::int64_t{*cfg.workers_per_pod} * pods != *cfg.workers_max)
    return conflict(
        "--workers-per-pod",
        show(*cfg.workers_per_pod) + " × --worker-pods " + show(pods)
            + " ≠ --workers-max " + show(*cfg.workers_max)
            + "; give only one of --workers-max/--workers-per-pod or "
              "make them agree");
  if (cfg.record_processors && *cfg.record_processors % pods != 0)
    return conflict("--record-processors",
                    "is a total split evenly over --worker-pods " + show(pods)
                        + "; " + show(*cfg.record_processors)
                        + " does not divide; use a multiple of " + show(pods));
  return caf::unit;
}

// Reads the file once: it must exist, be readable, and hold one JSON object
// per non-empty line. Returns the type guessed from the first record.
caf::expected<custom_dataset_type>
check_input_file(const std::string& path,
                 std::optional<custom_dataset_type> declared) {
  constexpr std::string_view flag = "--input-file";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return unreadable(flag,
                      "'" + path + "' does not exist or is not a regular file");
  std::ifstream in{path};
  if (!in)
    return unreadable(flag, "'" + path
                                + "' cannot be read; check "
                                  "its permissions");
  std::optional<custom_dataset_type> type = declared;
  std::string line;
  std::size_t line_no = 0;
  std::size_t records = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty())
      continue;
    auto where = "'" + path + "' line " + std::to_string(line_no) + ": ";
    rapidjson::Document doc;
    if (!parse_json(line, doc))
      return fail(std::string{flag},
                  where + "invalid JSON ("
                      + rapidjson::GetParseError_En(doc.GetParseError())
                      + "); each line must be one JSON object");
    if (!doc.IsObject())
      return fail(std::string{flag},
                  where + "not a JSON object; each line must be one object");
    if (!type) {
      if (doc.HasMember("turns"))
        type = custom_dataset_type::multi_turn;
      else if (doc.HasMember("input_length") || doc.HasMember("hash_ids"))
        type = custom_dataset_type::mooncake_trace;
      else
        type = custom_dataset_type::single_turn;
    }
    switch (*type) {
    case custom_dataset_type::multi_turn:
      if (!doc.HasMember("turns") || !doc["turns"].IsArray()
          || doc["turns"].Empty())
        return fail(std::string{flag},
                    where
                        + "multi_turn records need a non-empty \"turns\" "
                          "array");
      break;
    case custom_dataset_type::mooncake_trace:
      if (doc.HasMember("input_length") && !doc["input_length"].IsUint64())
        return fail(std::string{flag},
                    where
                        + "\"input_length\" must be a non-negative "
                          "integer");
      for (const char* field : {"input_length", "output_length"})
        if (doc.HasMember(field) && doc[field].IsUint64()
            && doc[field].GetUint64()
                   > static_cast<std::uint64_t>(max_sequence_tokens))
          return fail(std::string{flag},
                      where + "\"" + field + "\" "
                          + std::to_string(doc[field].GetUint64())
                          + " is above the " + show(max_sequence_tokens)
                          + " tokens a prompt may have (each is built in "
                            "memory); fix or drop the line");
      if (!doc.HasMember("input_length") && !doc.HasMember("text_input")
          && !doc.HasMember("messages"))
        return fail(std::string{flag},
                    where
                        + "mooncake_trace records need \"input_length\", "
                          "\"text_input\" or \"messages\"");
      break;
    case custom_dataset_type::single_turn:
      break;
    }
    ++records;
  }
  if (records == 0)
    return fail(std::string{flag}, "'" + path + "' has no records");
  return *type;
}

void derive(profile_config& cfg, unsigned cores) {
  for (auto& name : cfg.model_names)
    name = std::string{trim(name)};
  for (auto& url : cfg.urls)
    if (auto parsed = parse_url(url)) {
      // parsed_url has no user-info: keep it as typed (the HTTP client turns
      // it into Basic auth).
      auto info = userinfo_of(url);
      url = to_string(*parsed);
      if (!info.empty())
        url.insert(url.find("://") + 3, info + "@");
    }
  if (cfg.endpoint_type == endpoint_type::embeddings)
    cfg.streaming = false;
  cfg.include_usage = cfg.streaming && cfg.use_server_token_count;
  if (cfg.custom_dataset_type == custom_dataset_type::mooncake_trace)
    cfg.fixed_schedule = true;
  // Stimulus and stop condition, as AIPerf: a bare run is concurrency 1.
  bool other_stimulus
      = cfg.request_rate || cfg.user_centric_rate || cfg.fixed_schedule;
  if (!cfg.concurrency && !other_stimulus)
    cfg.concurrency = 1;
  if (!cfg.request_count && !cfg.benchmark_duration && !cfg.fixed_schedule
      && !cfg.conversation_num) {
    if (cfg.user_centric_rate)
      cfg.request_count = std::max<std::int64_t>(10, 2 * *cfg.num_users);
    else if (cfg.concurrency)
      cfg.request_count = std::max<std::int64_t>(10, 2 * *cfg.concurrency);
    else
      cfg.request_count = 10;
  }
  if (cfg.benchmark_duration && !cfg.benchmark_grace_period)
    cfg.benchmark_grace_period = 30.0;
  // Processes: AIPerf's worker formula, then spread evenly over pods.
  auto pods = cfg.worker_pods;
  if (!cfg.workers_max) {
    if (cfg.workers_per_pod) {
      cfg.workers_max = *cfg.workers_per_pod * pods;
    } else {
      auto by_cores = std::max(1, static_cast<int>(cores * 0.75) - 1);
      std::int64_t limit = by_cores;
      if (cfg.concurrency)
        limit = std::min(limit, *cfg.concurrency);
      else if (cfg.user_centric_rate)
        limit = std::min(limit, *cfg.num_users);
      auto workers = static_cast<int>(std::min<std::int64_t>(limit, 32));
      workers = std::max(workers, pods);
      cfg.workers_max = (workers + pods - 1) / pods * pods;
    }
  }
  if (!cfg.workers_per_pod && *cfg.workers_max % pods == 0)
    cfg.workers_per_pod = *cfg.workers_max / pods;
  if (!cfg.record_processors && cfg.workers_per_pod)
    cfg.record_processors = std::max(1, *cfg.workers_per_pod / 4) * pods;
  if (!cfg.io_threads)
    cfg.io_threads = cores <= 2 ? 1 : static_cast<int>(cores / 2);
  // The cores the I/O threads do not take: on 2 cores one CAF thread, which
  // measured 10-15 % less CPU per request than two (fewer wake-ups).
  if (!cfg.scheduler_threads)
    cfg.scheduler_threads
        = std::max(1, static_cast<int>(cores) - *cfg.io_threads);
}

} // namespace

caf::expected<void> consume_cli_text(profile_config& cfg) {
  for (const auto& text : cfg.cli.headers) {
    auto parsed = parse_headers(text);
    if (!parsed)
      return parsed.error();
    cfg.headers.insert(cfg.headers.end(), parsed->begin(), parsed->end());
  }
  for (const auto& text : cfg.cli.extra_inputs) {
    auto parsed = parse_extra_inputs(text);
    if (!parsed)
      return parsed.error();
    // A later key wins, as when AIPerf merges dicts.
    for (auto& x : *parsed) {
      auto same = [&](const extra_input& y) { return y.key == x.key; };
      auto it = std::find_if(cfg.extra_inputs.begin(), cfg.extra_inputs.end(),
                             same);
      if (it != cfg.extra_inputs.end())
        it->json = std::move(x.json);
      else
        cfg.extra_inputs.push_back(std::move(x));
    }
  }
  std::string goodput_text;
  for (const auto& text : cfg.cli.goodput)
    goodput_text += text + " ";
  if (!goodput_text.empty()) {
    auto parsed = parse_goodput(goodput_text);
    if (!parsed)
      return parsed.error();
    cfg.goodput = std::move(*parsed);
  }
  if (cfg.cli.verbosity >= 2)
    cfg.log_level = "trace";
  else if (cfg.cli.verbosity == 1)
    cfg.log_level = "debug";
  cfg.cli = {};
  return caf::unit;
}

caf::expected<void> validate(const profile_config& cfg) {
  if (auto ok = validate_endpoint(cfg); !ok)
    return ok;
  if (auto ok = validate_input(cfg); !ok)
    return ok;
  if (auto ok = validate_load(cfg); !ok)
    return ok;
  return validate_runtime(cfg);
}

namespace {

// A PEM bundle OpenSSL can load with at least one certificate, so a bad
// file stops the run here instead of failing every request.
caf::expected<void> check_ca_file(const std::string& path) {
  constexpr std::string_view flag = "--ca-file";
  std::error_code ec;
  std::ifstream in{path};
  if (!in || !std::filesystem::is_regular_file(path, ec))
    return unreadable(flag, "'" + path + "' does not exist or cannot be read");
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store{
      X509_STORE_new(), &X509_STORE_free};
  ERR_clear_error();
  bool loaded
      = store
        && X509_STORE_load_locations(store.get(), path.c_str(), nullptr) == 1;
  std::string reason;
  if (auto code = ERR_peek_last_error(); code != 0) {
    std::array<char, 256> buf{};
    ERR_error_string_n(code, buf.data(), buf.size());
    reason = std::string{" ("} + buf.data() + ")";
  }
  ERR_clear_error();
  if (!loaded || X509_STORE_get0_objects(store.get()) == nullptr
      || sk_X509_OBJECT_num(X509_STORE_get0_objects(store.get())) == 0)
    return fail(flag, "'" + path + "' is not a PEM bundle of CA certificates"
                          + reason
                          + "; give a file of '-----BEGIN CERTIFICATE-----' "
                            "blocks");
  return caf::unit;
}

// Each session in flight holds a connection (two with the in-process mock
// server: its end too). The HTTP client raises the soft limit to the hard
// one, and the hard one itself only with CAP_SYS_RESOURCE: try that here.
caf::expected<void> check_open_files(const profile_config& cfg) {
  if (!cfg.concurrency)
    return caf::unit;
  auto pods = static_cast<std::uint64_t>(std::max(1, cfg.worker_pods));
  auto per_pod
      = (static_cast<std::uint64_t>(*cfg.concurrency) + pods - 1) / pods;
  auto sockets = uses_mock_server(cfg) ? 2 : 1;
  auto needed = per_pod * sockets + reserved_open_files;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max == RLIM_INFINITY
      || needed <= rl.rlim_max)
    return caf::unit;
  rlimit up{std::min<rlim_t>(rl.rlim_cur, static_cast<rlim_t>(needed)),
            static_cast<rlim_t>(needed)};
  if (::setrlimit(RLIMIT_NOFILE, &up) == 0)
    return caf::unit;
  auto hard = static_cast<std::uint64_t>(rl.rlim_max);
  auto most = hard > reserved_open_files
                  ? (hard - reserved_open_files) / sockets * pods
                  : 0;
  return fail(
      "--concurrency",
      show(*cfg.concurrency) + " sessions need " + std::to_string(needed)
          + " open files"
          + (sockets == 2 ? " (the built-in mock server holds the "
                            "other end of each connection)"
                          : "")
          + ", above this process's hard limit of " + std::to_string(hard)
          + " minus " + std::to_string(reserved_open_files)
          + " kept free; lower --concurrency to at most " + std::to_string(most)
          + " or raise the limit (ulimit -n, or CAP_SYS_RESOURCE)");
}

} // namespace

caf::expected<void> finalize(profile_config& cfg, unsigned cores) {
  return finalize(cfg, file_site{}, cores);
}

caf::expected<void> finalize(profile_config& cfg, file_site site, unsigned cores) {
  if (auto ok = consume_cli_text(cfg); !ok)
    return ok;
  if (cfg.input_file && !cfg.input_file->empty() && !site.input_file_here
      && !cfg.custom_dataset_type)
    return fail("--input-file",
                "'" + *cfg.input_file
                    + "' is not on this machine, so it is taken as a path inside the pods and "
                      "its dataset type cannot be read from it: pass --custom-dataset-type "
                      "(single_turn, multi_turn or mooncake_trace)");
  // The file decides the dataset type, which validation depends on.
  if (cfg.input_file && !cfg.input_file->empty() && site.input_file_here) {
    auto type = check_input_file(*cfg.input_file, cfg.custom_dataset_type);
    if (!type)
      return type.error();
    cfg.custom_dataset_type = *type;
  }
  // Ranges before derivation, so derive() never computes from nonsense.
  if (auto ok = validate(cfg); !ok)
    return ok;
  if (cfg.ca_file && site.ca_file_here)
    if (auto ok = check_ca_file(*cfg.ca_file); !ok)
      return ok;
  cores = std::max(1u, cores);
  if (cfg.io_threads && static_cast<unsigned>(*cfg.io_threads) > 4 * cores)
    return fail("--io-threads",
                "must be ≤ 4 × the " + std::to_string(cores)
                    + " cores = " + std::to_string(4 * cores) + " (got "
                    + show(*cfg.io_threads)
                    + "); more threads only contend for the cores");
  if (auto ok = check_open_files(cfg); !ok)
    return ok;
  derive(cfg, cores);
  // Derived values can create conflicts (e.g. embeddings turned streaming
  // off under --prefill-concurrency), so check once more.
  return validate(cfg);
}

} // namespace aiperf::config
