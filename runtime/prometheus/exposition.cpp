#include "runtime/prometheus/exposition.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>

namespace aiperf::prometheus {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_exposition:
      return "bad_exposition";
  }
  return "unknown";
}

const char* to_string(metric_type t) noexcept {
  switch (t) {
    case metric_type::counter:
      return "counter";
    case metric_type::gauge:
      return "gauge";
    case metric_type::histogram:
      return "histogram";
    case metric_type::gaugehistogram:
      return "gaugehistogram";
    case metric_type::summary:
      return "summary";
    case metric_type::info:
      return "info";
    case metric_type::stateset:
      return "stateset";
    case metric_type::untyped:
      return "untyped";
  }
  return "untyped";
}

const std::string* sample::label(std::string_view key) const {
  for (const auto& [k, v] : labels)
    if (k == key)
      return &v;
  return nullptr;
}

namespace {

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
         || c == ':';
}
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
bool blank(char c) { return c == ' ' || c == '\t'; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + 32) : a[i];
    if (x != b[i])
      return false;
  }
  return true;
}

/// A float as Go's strconv.ParseFloat reads one (what Prometheus uses):
/// decimal or exponent notation, NaN and Inf in any case, with a sign.
std::optional<double> parse_float(std::string_view s) {
  if (s.empty())
    return std::nullopt;
  std::string_view body = s;
  bool negative = false;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (iequals(body, "inf") || iequals(body, "infinity"))
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  if (iequals(body, "nan"))
    return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec != std::errc{} || end != body.data() + body.size())
    return std::nullopt;
  return negative ? -v : v;
}

/// The suffixes by which a sample's name extends its family's.
bool suffix_allowed(metric_type t, std::string_view suffix) {
  switch (t) {
    case metric_type::counter:
      return suffix == "_total" || suffix == "_created";
    case metric_type::histogram:
      return suffix == "_bucket" || suffix == "_sum" || suffix == "_count"
             || suffix == "_created";
    case metric_type::gaugehistogram:
      return suffix == "_bucket" || suffix == "_gsum" || suffix == "_gcount";
    case metric_type::summary:
      return suffix == "_sum" || suffix == "_count" || suffix == "_created";
    case metric_type::info:
      return suffix == "_info";
    default:
      return false;
  }
}

constexpr std::string_view suffixes[] = {"_bucket", "_count",  "_sum",
                                         "_total",  "_created", "_gsum",
                                         "_gcount", "_info"};

class parser {
public:
  explicit parser(std::string_view text) : text_(text) {
    // OpenMetrics ends with "# EOF" and writes timestamps in seconds;
    // 0.0.4 writes them in milliseconds.
    auto end = text.find_last_not_of(" \t\r\n");
    open_metrics_ = end != std::string_view::npos && end >= 4
                    && text.substr(end - 4, 5) == "# EOF";
  }

  caf::expected<std::vector<family>> run() {
    std::size_t pos = 0;
    while (pos <= text_.size()) {
      auto nl = text_.find('\n', pos);
      auto line = text_.substr(pos, nl == std::string_view::npos
                                        ? std::string_view::npos
                                        : nl - pos);
      ++line_no_;
      if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
      if (auto err = parse_line(line))
        return std::move(*err);
      if (nl == std::string_view::npos)
        break;
      pos = nl + 1;
    }
    return std::move(families_);
  }

private:
  caf::error fail(const std::string& why) const {
    return make_error(errc::bad_exposition,
                      "line " + std::to_string(line_no_) + ": " + why);
  }

  std::optional<caf::error> parse_line(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && blank(line[i]))
      ++i;
    line.remove_prefix(i);
    if (line.empty())
      return std::nullopt;
    if (eof_)
      return fail("text after # EOF");
    if (line.front() == '#')
      return parse_comment(line);
    return parse_sample(line);
  }

  std::optional<caf::error> parse_comment(std::string_view line) {
    line.remove_prefix(1);
    auto words = split_word(line);
    if (words.first == "EOF" && words.second.empty()) {
      eof_ = true;
      return std::nullopt;
    }
    if (words.first != "HELP" && words.first != "TYPE" && words.first != "UNIT")
      return std::nullopt; // a plain comment
    auto [name, rest] = split_word(words.second);
    if (!valid_name(name))
      return fail("# " + std::string{words.first}
                  + " needs a metric name, got '" + std::string{name} + "'");
    auto& f = family_named(name);
    if (words.first == "HELP") {
      f.help = unescape_help(rest);
      return std::nullopt;
    }
    if (words.first == "UNIT") {
      f.unit = std::string{rest};
      return std::nullopt;
    }
    if (typed_.count(f.name) != 0)
      return fail("a second TYPE line for " + f.name);
    if (!f.samples.empty())
      return fail("the TYPE line of " + f.name + " comes after its samples");
    static const std::pair<std::string_view, metric_type> types[] = {
        {"counter", metric_type::counter},
        {"gauge", metric_type::gauge},
        {"histogram", metric_type::histogram},
        {"gaugehistogram", metric_type::gaugehistogram},
        {"summary", metric_type::summary},
        {"info", metric_type::info},
        {"stateset", metric_type::stateset},
        {"untyped", metric_type::untyped},
        {"unknown", metric_type::untyped},
    };
    auto type_word = split_word(rest).first;
    for (const auto& [word, type] : types)
      if (type_word == word) {
        f.type = type;
        typed_[f.name] = true;
        return std::nullopt;
      }
    return fail("unknown metric type '" + std::string{type_word} + "' for "
                + f.name);
  }

  std::optional<caf::error> parse_sample(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && name_char(line[i]))
      ++i;
    sample s;
    s.name = std::string{line.substr(0, i)};
    if (!valid_name(s.name))
      return fail("a sample needs a metric name first, got '"
                  + std::string{line.substr(0, 40)} + "'");
    while (i < line.size() && blank(line[i]))
      ++i;
    if (i < line.size() && line[i] == '{') {
      ++i;
      if (auto err = parse_labels(line, i, s.labels))
        return err;
    }
    auto rest = line.substr(i);
    auto [value_text, after] = split_word(rest);
    auto value = parse_float(value_text);
    if (!value)
      return fail("the value of " + s.name + " is not a number: '"
                  + std::string{value_text} + "'");
    s.value = *value;
    auto [ts_text, tail] = split_word(after);
    if (!ts_text.empty() && ts_text != "#") {
      auto ts = parse_float(ts_text);
      if (!ts || !std::isfinite(*ts))
        return fail("the timestamp of " + s.name + " is not a number: '"
                    + std::string{ts_text} + "'");
      s.timestamp_ms = static_cast<std::int64_t>(
          open_metrics_ ? std::llround(*ts * 1000.0) : std::llround(*ts));
      ts_text = split_word(tail).first;
    }
    // What follows " # " is an OpenMetrics exemplar: tolerated, not kept.
    if (!ts_text.empty() && ts_text != "#")
      return fail("unexpected text after the value of " + s.name + ": '"
                  + std::string{ts_text} + "'");
    family_of(s.name).samples.push_back(std::move(s));
    return std::nullopt;
  }

  std::optional<caf::error> parse_labels(std::string_view line, std::size_t& i,
                                         label_set& out) {
    auto skip_blanks = [&] {
      while (i < line.size() && blank(line[i]))
        ++i;
    };
    for (;;) {
      skip_blanks();
      if (i < line.size() && line[i] == '}') {
        ++i;
        return std::nullopt;
      }
      auto start = i;
      while (i < line.size() && name_char(line[i]))
        ++i;
      std::string key{line.substr(start, i - start)};
      if (key.empty() || (key[0] >= '0' && key[0] <= '9'))
        return fail("a label name is expected at column "
                    + std::to_string(start + 1));
      skip_blanks();
      if (i >= line.size() || line[i] != '=')
        return fail("label " + key + " has no '='");
      ++i;
      skip_blanks();
      if (i >= line.size() || line[i] != '"')
        return fail("the value of label " + key + " is not quoted");
      ++i;
      std::string value;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          value += c;
          continue;
        }
        if (i >= line.size())
          break;
        char e = line[i++];
        if (e == '\\' || e == '"')
          value += e;
        else if (e == 'n')
          value += '\n';
        else
          return fail("label " + key + " has an invalid escape '\\"
                      + std::string(1, e) + "'");
      }
      if (!closed)
        return fail("the value of label " + key + " is not closed");
      for (const auto& [k, v] : out)
        if (k == key)
          return fail("label " + key + " is given twice");
      out.emplace_back(std::move(key), std::move(value));
      skip_blanks();
      if (i < line.size() && line[i] == ',') {
        ++i;
        continue;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        return std::nullopt;
      }
      return fail("labels must be separated by ',' and closed by '}'");
    }
  }

  static std::pair<std::string_view, std::string_view>
  split_word(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && blank(s[i]))
      ++i;
    std::size_t j = i;
    while (j < s.size() && !blank(s[j]))
      ++j;
    std::size_t k = j;
    while (k < s.size() && blank(s[k]))
      ++k;
    return {s.substr(i, j - i), s.substr(k)};
  }

  static bool valid_name(std::string_view n) {
    if (n.empty() || !name_start(n[0]))
      return false;
    for (char c : n)
      if (!name_char(c))
        return false;
    return true;
  }

  static std::string unescape_help(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        char e = s[++i];
        out += e == 'n' ? '\n' : e;
        continue;
      }
      out += s[i];
    }
    return out;
  }

  family& family_named(std::string_view name) {
    auto it = index_.find(std::string{name});
    if (it != index_.end())
      return families_[it->second];
    families_.push_back(family{std::string{name}, metric_type::untyped, {}, {}, {}});
    index_[std::string{name}] = families_.size() - 1;
    return families_.back();
  }

  family& family_of(const std::string& sample_name) {
    if (auto it = index_.find(sample_name); it != index_.end())
      return families_[it->second];
    for (auto suffix : suffixes) {
      if (sample_name.size() <= suffix.size()
          || sample_name.compare(sample_name.size() - suffix.size(),
                                 suffix.size(), suffix)
                 != 0)
        continue;
      auto base = sample_name.substr(0, sample_name.size() - suffix.size());
      auto it = index_.find(base);
      if (it != index_.end() && suffix_allowed(families_[it->second].type, suffix))
        return families_[it->second];
    }
    return family_named(sample_name);
  }

  std::string_view text_;
  bool open_metrics_ = false;
  bool eof_ = false;
  std::size_t line_no_ = 0;
  std::vector<family> families_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, bool> typed_;
};

} // namespace

caf::expected<std::vector<family>> parse_exposition(std::string_view text) {
  return parser{text}.run();
}

} // namespace aiperf::prometheus
