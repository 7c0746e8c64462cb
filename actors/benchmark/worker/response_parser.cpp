#include "actors/benchmark/worker/response_parser.hpp"

#include <rapidjson/document.h>

#include <cstring>

namespace aiperf::worker {

namespace {

// -- targeted scanner ----------------------------------------------------------

/// Deepest nesting the scanner skips itself; deeper goes to RapidJSON.
constexpr int max_skip_depth = 64;

/// One message's walk. Every member returns false for "not the shape I
/// handle" and the caller falls back to RapidJSON, which is the authority on
/// validity; so the scanner must only ever accept a subset of what RapidJSON
/// accepts, and fill the fields exactly as the DOM path does.
class scanner {
public:
  /// Byte range [begin, end) of a string value in the input, quotes
  /// included; empty when the value was not a string.
  struct span {
    const char* begin = nullptr;
    const char* end = nullptr;
  };

  scanner(std::string_view in, std::string& scratch)
    : begin_(in.data()), p_(in.data()), end_(in.data() + in.size()),
      scratch_(scratch) {
    // Decoded strings are never longer than their escaped form, so this
    // reservation keeps every view into scratch_ stable.
    scratch_.clear();
    scratch_.reserve(in.size());
  }

  bool run(proto::endpoint_kind kind, message_fields& out) {
    kind_ = kind;
    ws();
    if (!eat('{'))
      return false;
    bool seen_usage = false;
    bool seen_choices = false;
    if (!members([&](std::string_view key) {
          if (key == "error")
            return false; // rare: RapidJSON reads the error's shapes
          if (key == "usage" && !seen_usage) {
            seen_usage = true;
            if (peek() != '{')
              return skip_value(0);
            out.has_usage = true;
            return usage(out.usage);
          }
          if (key == "choices" && !seen_choices) {
            seen_choices = true;
            return choices(out);
          }
          return skip_value(0);
        }))
      return false;
    ws();
    return p_ == end_;
  }

  /// Where run() read the content it returned (choices[0]'s text, or the
  /// picked delta/message content), when that was a string.
  [[nodiscard]] span content_at() const noexcept { return content_at_; }

  /// Decodes the string starting at offset `at` of the input; `end` gets
  /// the offset after its closing quote.
  bool string_at(std::size_t at, std::string_view& out, std::size_t& end) {
    p_ = begin_ + at;
    if (!string<true>(out))
      return false;
    end = static_cast<std::size_t>(p_ - begin_);
    return true;
  }

private:
  /// content, reasoning_content, reasoning of one delta/message object.
  struct texts {
    std::string_view content;
    std::string_view reasoning_content;
    std::string_view reasoning;
    span content_at; // where `content` was read, when it was a string
  };

  char peek() const noexcept { return p_ < end_ ? *p_ : '\0'; }

  void ws() noexcept {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t'))
      ++p_;
  }

  bool eat(char c) noexcept {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }

  /// Walks `{ "key": value, ... }` after the '{'; `on_member(key)` must
  /// consume the value (p_ is at it, whitespace skipped).
  template <class F>
  bool members(F&& on_member) {
    ws();
    if (eat('}'))
      return true;
    for (;;) {
      ws();
      std::string_view key;
      if (!raw_key(key))
        return false;
      ws();
      if (!eat(':'))
        return false;
      ws();
      if (!on_member(key))
        return false;
      ws();
      if (eat(','))
        continue;
      return eat('}');
    }
  }

  /// A key without escapes (keys we look for never have any).
  bool raw_key(std::string_view& key) noexcept {
    if (!eat('"'))
      return false;
    auto* start = p_;
    p_ = detail::skip_plain(p_, end_);
    if (p_ == end_ || *p_ != '"')
      return false;
    key = {start, static_cast<std::size_t>(p_ - start)};
    ++p_;
    return true;
  }

  static int hex(char c) noexcept {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool hex4(unsigned& cp) noexcept {
    if (end_ - p_ < 4)
      return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex(p_[i]);
      if (h < 0)
        return false;
      cp = cp << 4 | static_cast<unsigned>(h);
    }
    p_ += 4;
    return true;
  }

  void put_utf8(unsigned cp) {
    if (cp < 0x80) {
      scratch_.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      scratch_.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      scratch_.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      scratch_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      scratch_.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      scratch_.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  /// A string at p_ ('"'). With `decode`, `out` views the input when there
  /// are no escapes, else the decoded copy in scratch_.
  template <bool decode>
  bool string(std::string_view& out) {
    if (!eat('"'))
      return false;
    auto* start = p_;
    p_ = detail::skip_plain(p_, end_);
    if (p_ == end_)
      return false;
    if (*p_ == '"') {
      if constexpr (decode)
        out = {start, static_cast<std::size_t>(p_ - start)};
      ++p_;
      return true;
    }
    std::size_t first = scratch_.size();
    if constexpr (decode)
      scratch_.append(start, p_);
    for (;;) {
      auto* run = p_;
      p_ = detail::skip_plain(p_, end_);
      if constexpr (decode)
        scratch_.append(run, p_);
      if (p_ == end_)
        return false;
      char c = *p_++;
      if (c == '"')
        break;
      if (c != '\\')
        return false; // unescaped control character
      if (p_ == end_)
        return false;
      char e = *p_++;
      char plain = 0;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          plain = e;
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp))
            return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned low = 0;
            if (!eat('\\') || !eat('u') || !hex4(low) || low < 0xDC00
                || low > 0xDFFF)
              return false;
            cp = ((cp - 0xD800) << 10 | (low - 0xDC00)) + 0x10000;
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false; // lone low surrogate: RapidJSON's call
          }
          if constexpr (decode)
            put_utf8(cp);
          continue;
        }
        default:
          return false;
      }
      if constexpr (decode)
        scratch_.push_back(plain);
    }
    if constexpr (decode)
      out = std::string_view{scratch_}.substr(first);
    return true;
  }

  /// A JSON number in the strict grammar; `value` gets it when it is an
  /// integer RapidJSON would also call Int64 (else the number form is rare
  /// enough to leave to RapidJSON: exponents, "-0", > 18 digits).
  bool number(std::int64_t* value) noexcept {
    bool minus = eat('-');
    auto* digits = p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9')
      return false;
    if (*p_ == '0')
      ++p_;
    else
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9')
        ++p_;
    auto ndigits = p_ - digits;
    bool fraction = false;
    if (eat('.')) {
      fraction = true;
      if (p_ == end_ || *p_ < '0' || *p_ > '9')
        return false;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9')
        ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E'))
      return false;
    if (ndigits > 18 || (minus && ndigits == 1 && *digits == '0' && !fraction))
      return false;
    if (value == nullptr)
      return true;
    if (fraction) {
      *value = -1; // a double: never an Int64 for the DOM path either
      return true;
    }
    std::int64_t v = 0;
    for (auto* d = digits; d < digits + ndigits; ++d)
      v = v * 10 + (*d - '0');
    *value = minus ? -v : v;
    return true;
  }

  bool literal(const char* word, std::size_t n) noexcept {
    if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0)
      return false;
    p_ += n;
    return true;
  }

  bool skip_value(int depth) {
    std::string_view ignored;
    switch (peek()) {
      case '"':
        return string<false>(ignored);
      case '{':
        if (depth >= max_skip_depth)
          return false;
        ++p_;
        return members([&](std::string_view) { return skip_value(depth + 1); });
      case '[':
        if (depth >= max_skip_depth)
          return false;
        ++p_;
        return elements([&](std::size_t) { return skip_value(depth + 1); });
      case 't':
        return literal("true", 4);
      case 'f':
        return literal("false", 5);
      case 'n':
        return literal("null", 4);
      default:
        return number(nullptr);
    }
  }

  /// Walks `[ value, ... ]` after the '['; `on_element(index)` consumes.
  template <class F>
  bool elements(F&& on_element) {
    ws();
    if (eat(']'))
      return true;
    for (std::size_t i = 0;; ++i) {
      ws();
      if (!on_element(i))
        return false;
      ws();
      if (eat(','))
        continue;
      return eat(']');
    }
  }

  /// A member the DOM path reads with string_member(): the first one
  /// counts, and a non-string value reads as empty.
  bool first_text(bool& seen, std::string_view& out, span* at = nullptr) {
    bool first = !seen;
    seen = true;
    if (!first || peek() != '"')
      return skip_value(0);
    auto* begin = p_;
    if (!string<true>(out))
      return false;
    if (at != nullptr)
      *at = span{begin, p_};
    return true;
  }

  bool message(texts& t) {
    ++p_; // '{'
    bool c = false;
    bool rc = false;
    bool r = false;
    return members([&](std::string_view key) {
      if (key == "content")
        return first_text(c, t.content, &t.content_at);
      if (key == "reasoning_content")
        return first_text(rc, t.reasoning_content);
      if (key == "reasoning")
        return first_text(r, t.reasoning);
      return skip_value(0);
    });
  }

  bool choice(message_fields& out) {
    ++p_; // '{'
    bool seen_text = false;
    bool seen_delta = false;
    bool seen_message = false;
    bool delta_obj = false;
    bool message_obj = false;
    texts delta;
    texts msg;
    std::string_view text;
    span text_at;
    bool chat = kind_ == proto::endpoint_kind::chat;
    if (!members([&](std::string_view key) {
          if (!chat && key == "text")
            return first_text(seen_text, text, &text_at);
          if (chat && key == "delta" && !seen_delta) {
            seen_delta = true;
            delta_obj = peek() == '{';
            return delta_obj ? message(delta) : skip_value(0);
          }
          if (chat && key == "message" && !seen_message) {
            seen_message = true;
            message_obj = peek() == '{';
            return message_obj ? message(msg) : skip_value(0);
          }
          return skip_value(0);
        }))
      return false;
    if (!chat) {
      out.content = text;
      content_at_ = text_at;
      return true;
    }
    // As the DOM path: `delta` wins when present, whatever its type.
    const texts* picked = seen_delta ? (delta_obj ? &delta : nullptr)
                                     : (message_obj ? &msg : nullptr);
    if (picked != nullptr) {
      out.content = picked->content;
      content_at_ = picked->content_at;
      out.reasoning = picked->reasoning_content.empty()
                        ? picked->reasoning
                        : picked->reasoning_content;
    }
    return true;
  }

  bool choices(message_fields& out) {
    if (peek() != '[')
      return skip_value(0);
    ++p_;
    return elements([&](std::size_t i) {
      if (i == 0 && peek() == '{')
        return choice(out);
      return skip_value(1);
    });
  }

  bool usage(proto::usage_counts& u) {
    ++p_; // '{'
    bool pt = false;
    bool ct = false;
    bool tt = false;
    bool details = false;
    auto int_member = [&](bool& seen, std::int64_t& dst) {
      bool first = !seen;
      seen = true;
      char c = peek();
      if (c == '-' || (c >= '0' && c <= '9')) {
        std::int64_t v = -1;
        if (!number(&v))
          return false;
        if (first)
          dst = v;
        return true;
      }
      return skip_value(1); // null, string, ...: -1 as in the DOM path
    };
    return members([&](std::string_view key) {
      if (key == "prompt_tokens")
        return int_member(pt, u.prompt_tokens);
      if (key == "completion_tokens")
        return int_member(ct, u.completion_tokens);
      if (key == "total_tokens")
        return int_member(tt, u.total_tokens);
      if (key == "completion_tokens_details" && !details) {
        details = true;
        if (peek() != '{')
          return skip_value(1);
        ++p_;
        bool rt = false;
        return members([&](std::string_view k) {
          if (k == "reasoning_tokens")
            return int_member(rt, u.reasoning_tokens);
          return skip_value(2);
        });
      }
      return skip_value(1);
    });
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  std::string& scratch_;
  span content_at_;
  proto::endpoint_kind kind_ = proto::endpoint_kind::chat;
};

// -- RapidJSON (the authority) -------------------------------------------------

using value = rapidjson::Value;

std::string_view string_member(const value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString())
    return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

std::int64_t int_member(const value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsInt64())
    return -1;
  return it->value.GetInt64();
}

} // namespace

const char* response_parser::decode_string_at(const char* first,
                                              const char* last,
                                              std::size_t at,
                                              std::string_view& content) {
  scanner s{{first, static_cast<std::size_t>(last - first)}, scratch_};
  std::size_t end = 0;
  if (!s.string_at(at, content, end))
    return nullptr;
  return first + end;
}

bool response_parser::match_template(std::string_view json,
                                    proto::endpoint_kind kind,
                                    message_fields& out) {
  auto np = template_prefix_.size();
  auto ns = template_suffix_.size();
  // The shortest string is `""`.
  if (!has_template_ || kind != template_kind_ || json.size() < np + ns + 2
      || std::memcmp(json.data(), template_prefix_.data(), np) != 0)
    return false;
  // The scanner is deterministic: the same prefix leaves it in the same
  // state at the string, and the same suffix after it gives the same
  // outcome, which the template's own scan showed to be "this string only".
  if (json[np] != '"')
    return false;
  const char* first = json.data();
  const char* last = first + json.size();
  std::string_view content;
  const char* string_end = string_at(first, last, np, content);
  if (string_end == nullptr
      || static_cast<std::size_t>(last - string_end) != ns
      || std::memcmp(string_end, template_suffix_.data(), ns) != 0)
    return false;
  out = message_fields{};
  out.content = content;
  ++template_hits_;
  return true;
}

bool response_parser::parse(std::string_view json, proto::endpoint_kind kind,
                            message_fields& out) {
  if (match_template(json, kind, out))
    return true;
  if (kind != proto::endpoint_kind::embeddings
      && scan(json, kind, out) == scan_result::ok)
    return true;
  ++fallbacks_;
  return parse_dom(json, kind, out);
}

scan_result response_parser::scan(std::string_view json,
                                  proto::endpoint_kind kind,
                                  message_fields& out) {
  out = message_fields{};
  if (kind == proto::endpoint_kind::embeddings)
    return scan_result::fallback;
  scanner s{json, scratch_};
  if (s.run(kind, out)) {
    // Template only from a message whose one output is a string: whatever
    // else it carried would be lost or (as views) left dangling.
    // A message that cannot serve (the usage chunk at a stream's end)
    // keeps the last template: matching compares bytes only, so the next
    // stream's first content event still takes the template path.
    auto at = s.content_at();
    if (at.begin != nullptr && out.reasoning.empty() && !out.has_usage
        && !out.is_error && !out.has_embedding) {
      has_template_ = true;
      template_kind_ = kind;
      template_prefix_.assign(json.data(), at.begin);
      template_suffix_.assign(at.end, json.data() + json.size());
      template_one_line_
        = template_prefix_.find_first_of("\r\n") == std::string::npos
          && template_suffix_.find_first_of("\r\n") == std::string::npos;
      block_head_.assign("data: ").append(template_prefix_).append(1, '"');
      block_gap_.assign(template_suffix_).append("\n\n").append(block_head_);
    }
    return scan_result::ok;
  }
  out = message_fields{};
  return scan_result::fallback;
}

bool response_parser::parse_dom(std::string_view json,
                                proto::endpoint_kind kind,
                                message_fields& out) {
  out = message_fields{};
  // In-situ parsing decodes strings in place: no allocation per string.
  scratch_.assign(json);
  char buffer[4096];
  rapidjson::MemoryPoolAllocator<> pool{buffer, sizeof(buffer)};
  rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>>
    doc{&pool};
  doc.ParseInsitu(scratch_.data());
  if (doc.HasParseError() || !doc.IsObject())
    return false;
  // `"error": null` (some servers send it on every chunk) is no error.
  if (auto err = doc.FindMember("error");
      err != doc.MemberEnd() && !err->value.IsNull()) {
    out.is_error = true;
    if (err->value.IsObject())
      out.error_message = string_member(err->value, "message");
    else if (err->value.IsString())
      out.error_message = {err->value.GetString(),
                           err->value.GetStringLength()};
  }
  if (auto usage = doc.FindMember("usage");
      usage != doc.MemberEnd() && usage->value.IsObject()) {
    const auto& u = usage->value;
    out.has_usage = true;
    out.usage.prompt_tokens = int_member(u, "prompt_tokens");
    out.usage.completion_tokens = int_member(u, "completion_tokens");
    out.usage.total_tokens = int_member(u, "total_tokens");
    if (auto d = u.FindMember("completion_tokens_details");
        d != u.MemberEnd() && d->value.IsObject())
      out.usage.reasoning_tokens = int_member(d->value, "reasoning_tokens");
  }
  if (kind == proto::endpoint_kind::embeddings) {
    auto data = doc.FindMember("data");
    out.has_embedding = data != doc.MemberEnd() && data->value.IsArray()
                        && !data->value.Empty();
    return true;
  }
  auto choices = doc.FindMember("choices");
  if (choices == doc.MemberEnd() || !choices->value.IsArray()
      || choices->value.Empty() || !choices->value[0].IsObject())
    return true;
  const auto& choice = choices->value[0];
  if (kind == proto::endpoint_kind::completions) {
    out.content = string_member(choice, "text");
    return true;
  }
  auto msg = choice.FindMember("delta");
  if (msg == choice.MemberEnd())
    msg = choice.FindMember("message");
  if (msg == choice.MemberEnd() || !msg->value.IsObject())
    return true;
  out.content = string_member(msg->value, "content");
  out.reasoning = string_member(msg->value, "reasoning_content");
  if (out.reasoning.empty())
    out.reasoning = string_member(msg->value, "reasoning");
  return true;
}

} // namespace aiperf::worker
