#include "runtime/tokenizer/hf_tokenizer.hpp"

#include <nlohmann/json.hpp>
// Oniguruma would otherwise #define UChar, which ICU declares.
#define ONIG_ESCAPE_UCHAR_COLLISION
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <oniguruma.h>
#include <queue>
#include <sstream>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>
#include <unordered_map>

namespace aiperf::tokenizer {

const char* to_string(errc x) noexcept {
  switch (x) {
  case errc::invalid_file:
    return "invalid_file";
  case errc::unsupported:
    return "unsupported";
  case errc::not_found:
    return "not_found";
  case errc::io:
    return "io";
  }
  return "unknown";
}

namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------- UTF-8 --

std::size_t utf8_len(unsigned char lead) noexcept {
  if (lead < 0x80)
    return 1;
  if ((lead >> 5) == 0x6)
    return 2;
  if ((lead >> 4) == 0xE)
    return 3;
  if ((lead >> 3) == 0x1E)
    return 4;
  return 1;
}

// Code point at `s[i]` (input is valid UTF-8: it came from a JSON string or
// through ICU); `len` receives its byte length.
char32_t decode_at(std::string_view s, std::size_t i, std::size_t& len) {
  UChar32 c = 0;
  auto j = static_cast<int32_t>(i);
  U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), j,
          static_cast<int32_t>(s.size()), c);
  len = static_cast<std::size_t>(j) - i;
  return c < 0 ? U'\uFFFD' : static_cast<char32_t>(c);
}

// Rust's String::from_utf8_lossy: each maximal invalid subsequence becomes
// one U+FFFD (the Unicode "substitution of maximal subparts" practice).
std::string utf8_lossy(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t n = in.size();
  std::size_t i = 0;
  while (i < n) {
    unsigned char b = p[i];
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0)
        lo = 0xA0;
      if (b == 0xED)
        hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0)
        lo = 0x90;
      if (b == 0xF4)
        hi = 0x8F;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    std::size_t got = 0;
    while (got < need && j < n) {
      unsigned char c = p[j];
      bool ok = got == 0 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
      if (!ok)
        break;
      ++j;
      ++got;
    }
    if (got == need)
      out.append(in.substr(i, j - i));
    else
      out += "\xEF\xBF\xBD";
    i = j;
  }
  return out;
}

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others
// for U+0100 onwards in byte order, so every byte is one visible character.
struct byte_map {
  std::array<char32_t, 256> to_char{};
  std::unordered_map<char32_t, unsigned char> to_byte;
  byte_map() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172)
                       || (b >= 174 && b <= 255);
      to_char[static_cast<std::size_t>(b)]
          = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_char[static_cast<std::size_t>(b)]]
          = static_cast<unsigned char>(b);
    }
  }
};

const byte_map& bytes() {
  static const byte_map m;
  return m;
}

// The raw bytes a byte-level vocabulary entry stands for, or false when a
// character is outside the byte alphabet.
bool from_byte_level(std::string_view token, std::string& raw) {
  raw.clear();
  const auto& m = bytes();
  for (std::size_t i = 0; i < token.size();) {
    std::size_t len = 0;
    auto c = decode_at(token, i, len);
    auto it = m.to_byte.find(c);
    if (it == m.to_byte.end())
      return false;
    raw.push_back(static_cast<char>(it->second));
    i += len;
  }
  return true;
}

bool is_unicode_space(char32_t c) {
  return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0;
}

// ---------------------------------------------------------------- regex --

void onig_init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encs[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encs, 1);
  });
}

class regex {
public:
  static caf::expected<std::shared_ptr<regex>> make(const std::string& pattern,
                                                    std::string_view origin) {
    onig_init_once();
    auto r = std::shared_ptr<regex>(new regex);
    OnigErrorInfo info;
    const auto* p = reinterpret_cast<const OnigUChar*>(pattern.data());
    int rc = onig_new(&r->re_, p, p + pattern.size(), ONIG_OPTION_NONE,
                      ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
    if (rc != ONIG_NORMAL) {
      OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig_error_code_to_str(msg, rc, &info);
      r->re_ = nullptr;
      return make_error(errc::invalid_file, std::string{origin} + ": regex "
                                                + pattern
                                                + " does not compile: "
                                                + reinterpret_cast<char*>(msg));
    }
    return r;
  }
  ~regex() {
    if (re_ != nullptr)
      onig_free(re_);
  }
  regex(const regex&) = delete;
  regex& operator=(const regex&) = delete;

  // (start, end) of every match, as the onig crate's find_iter yields them:
  // the whole text stays the search context, so look-arounds see past the
  // current position; an empty match right after the previous one is
  // skipped by one character.
  void find_all(std::string_view text,
                std::vector<std::pair<std::size_t, std::size_t>>& out) const {
    out.clear();
    OnigRegion* region = onig_region_new();
    const auto* s = reinterpret_cast<const OnigUChar*>(text.data());
    const auto* end = s + text.size();
    std::size_t pos = 0;
    bool have_last = false;
    std::size_t last_end = 0;
    while (pos <= text.size()) {
      int r = onig_search(re_, s, end, s + pos, end, region, ONIG_OPTION_NONE);
      if (r < 0)
        break;
      auto b = static_cast<std::size_t>(region->beg[0]);
      auto e = static_cast<std::size_t>(region->end[0]);
      if (b == e && have_last && last_end == e) {
        pos += pos < text.size()
                   ? utf8_len(static_cast<unsigned char>(text[pos]))
                   : 1;
        continue;
      }
      pos = e;
      have_last = true;
      last_end = e;
      out.emplace_back(b, e);
    }
    onig_region_free(region, 1);
  }

private:
  regex() = default;
  OnigRegex re_ = nullptr;
};

std::string regex_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view{"\\^$.|?*+()[]{}-#&~ "}.find(c)
        != std::string_view::npos)
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

// ----------------------------------------------------------- normalizer --

struct normalizer {
  enum class kind {
    nfc,
    nfd,
    nfkc,
    nfkd,
    lowercase,
    prepend,
    replace,
    strip,
    bert,
    sequence
  };
  kind k = kind::sequence;
  std::string a, b; // prepend: a; replace: a -> b
  std::shared_ptr<regex> re;
  bool left = false, right = false;
  // BertNormalizer
  bool clean_text = true, chinese = true, strip_accents = true, lower = true;
  std::vector<normalizer> children;

  void apply(std::string& s) const {
    switch (k) {
    case kind::nfc:
    case kind::nfd:
    case kind::nfkc:
    case kind::nfkd:
      unicode_normalize(s);
      return;
    case kind::lowercase: {
      auto u = icu::UnicodeString::fromUTF8(s);
      u.toLower(icu::Locale::getRoot());
      s.clear();
      u.toUTF8String(s);
      return;
    }
    case kind::prepend:
      if (!s.empty())
        s.insert(0, a);
      return;
    case kind::replace:
      replace(s);
      return;
    case kind::strip:
      strip(s);
      return;
    case kind::sequence:
      for (const auto& c : children)
        c.apply(s);
      return;
    case kind::bert:
      bert(s);
      return;
    }
  }

  // huggingface/tokenizers normalizers/bert.rs, in its order: clean the
  // text, pad CJK ideographs, strip accents (NFD, drop Mn), lowercase
  // (each character on its own, as Rust's char::to_lowercase).
  void bert(std::string& s) const {
    std::string out;
    auto each = [&](auto&& f) {
      out.clear();
      for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 0;
        auto c = decode_at(s, i, len);
        f(c, std::string_view{s}.substr(i, len));
        i += len;
      }
      s.swap(out);
    };
    if (clean_text)
      each([&](char32_t c, std::string_view raw) {
        auto t = u_charType(static_cast<UChar32>(c));
        bool ws = c == U'\t' || c == U'\n' || c == U'\r'
                  || u_isUWhiteSpace(static_cast<UChar32>(c));
        bool other = t == U_CONTROL_CHAR || t == U_FORMAT_CHAR
                     || t == U_SURROGATE || t == U_PRIVATE_USE_CHAR
                     || t == U_UNASSIGNED;
        if (c == 0 || c == 0xFFFD || (other && !ws))
          return;
        if (ws)
          out.push_back(' ');
        else
          out.append(raw);
      });
    if (chinese)
      each([&](char32_t c, std::string_view raw) {
        bool cjk = (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF)
                   || (c >= 0x20000 && c <= 0x2A6DF)
                   || (c >= 0x2A700 && c <= 0x2B73F)
                   || (c >= 0x2B740 && c <= 0x2B81F)
                   || (c >= 0x2B920 && c <= 0x2CEAF)
                   || (c >= 0xF900 && c <= 0xFAFF)
                   || (c >= 0x2F800 && c <= 0x2FA1F);
        if (cjk) {
          out.push_back(' ');
          out.append(raw);
          out.push_back(' ');
        } else {
          out.append(raw);
        }
      });
    if (strip_accents) {
      normalizer nfd;
      nfd.k = kind::nfd;
      nfd.apply(s);
      each([&](char32_t c, std::string_view raw) {
        if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK)
          out.append(raw);
      });
    }
    if (lower)
      each([&](char32_t c, std::string_view raw) {
        if (c < 0x80) {
          out.push_back(static_cast<char>(std::tolower(static_cast<int>(c))));
          return;
        }
        auto u = icu::UnicodeString::fromUTF8(
            icu::StringPiece(raw.data(), static_cast<int32_t>(raw.size())));
        u.toLower(icu::Locale::getRoot());
        u.toUTF8String(out);
      });
  }

  void unicode_normalize(std::string& s) const {
    if (std::all_of(s.begin(), s.end(), [](char c) {
          return static_cast<unsigned char>(c) < 0x80;
        }))
      return;
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* n = nullptr;
    switch (k) {
    case kind::nfc:
      n = icu::Normalizer2::getNFCInstance(status);
      break;
    case kind::nfd:
      n = icu::Normalizer2::getNFDInstance(status);
      break;
    case kind::nfkc:
      n = icu::Normalizer2::getNFKCInstance(status);
      break;
    default:
      n = icu::Normalizer2::getNFKDInstance(status);
      break;
    }
    if (U_FAILURE(status))
      return;
    auto u = icu::UnicodeString::fromUTF8(s);
    auto r = n->normalize(u, status);
    if (U_FAILURE(status))
      return;
    s.clear();
    r.toUTF8String(s);
  }

  void replace(std::string& s) const {
    if (re) {
      std::vector<std::pair<std::size_t, std::size_t>> m;
      re->find_all(s, m);
      if (m.empty())
        return;
      std::string out;
      std::size_t prev = 0;
      for (auto [x, y] : m) {
        out.append(s, prev, x - prev);
        out += b;
        prev = y;
      }
      out.append(s, prev);
      s = std::move(out);
      return;
    }
    if (a.empty() || s.find(a) == std::string::npos)
      return;
    std::string out;
    std::size_t prev = 0;
    for (auto p = s.find(a); p != std::string::npos; p = s.find(a, prev)) {
      out.append(s, prev, p - prev);
      out += b;
      prev = p + a.size();
    }
    out.append(s, prev);
    s = std::move(out);
  }

  void strip(std::string& s) const {
    std::size_t begin = 0, end = s.size();
    if (left) {
      while (begin < end) {
        std::size_t len = 0;
        if (!is_unicode_space(decode_at(s, begin, len)))
          break;
        begin += len;
      }
    }
    if (right) {
      while (end > begin) {
        std::size_t st = end - 1;
        while (st > begin && (static_cast<unsigned char>(s[st]) & 0xC0) == 0x80)
          --st;
        std::size_t len = 0;
        if (!is_unicode_space(decode_at(s, st, len)))
          break;
        end = st;
      }
    }
    s = s.substr(begin, end - begin);
  }
};

// -------------------------------------------------------- pre-tokenizer --

using pieces = std::vector<std::string>;

struct pre_tokenizer {
  enum class kind { split, byte_level, metaspace, bert, sequence };
  enum class prepend { always, first, never };
  enum class behavior {
    removed,
    isolated,
    merged_with_previous,
    merged_with_next,
    contiguous
  };
  kind k = kind::sequence;
  std::shared_ptr<regex> re;
  behavior how = behavior::isolated;
  bool invert = false;
  bool add_prefix_space = false;
  std::string replacement; // Metaspace
  prepend scheme = prepend::always;
  bool split_on_replacement = true;
  std::vector<pre_tokenizer> children;

  // `first_at_start`: in[0] begins the original text (Metaspace's "first"
  // scheme prepends only there).
  void apply(pieces& in, bool first_at_start) const {
    switch (k) {
    case kind::sequence:
      for (const auto& c : children)
        c.apply(in, first_at_start);
      return;
    case kind::metaspace:
      metaspace(in, first_at_start);
      return;
    case kind::bert:
      bert(in);
      return;
    case kind::byte_level:
      // The byte alphabet itself is implicit: the vocabulary is stored as
      // raw bytes. What remains is the prefix space and GPT-2's regex.
      if (add_prefix_space)
        for (auto& p : in)
          if (p.empty() || p[0] != ' ')
            p = " " + p;
      if (re)
        split_all(in);
      return;
    case kind::split:
      split_all(in);
      return;
    }
  }

  // huggingface/tokenizers pre_tokenizers/bert.rs: whitespace separates
  // (and goes), each punctuation character stands alone.
  static void bert(pieces& in) {
    pieces out;
    for (const auto& s : in) {
      std::string cur;
      for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 0;
        auto c = decode_at(s, i, len);
        auto u = static_cast<UChar32>(c);
        if (is_unicode_space(c) || c == U'\t' || c == U'\n' || c == U'\r') {
          if (!cur.empty())
            out.push_back(std::move(cur));
          cur.clear();
        } else if ((c < 0x80 && std::ispunct(static_cast<int>(c)))
                   || u_ispunct(u)) {
          if (!cur.empty())
            out.push_back(std::move(cur));
          cur.clear();
          out.emplace_back(s.substr(i, len));
        } else {
          cur.append(s, i, len);
        }
        i += len;
      }
      if (!cur.empty())
        out.push_back(std::move(cur));
    }
    in = std::move(out);
  }

  // huggingface/tokenizers pre_tokenizers/metaspace.rs
  void metaspace(pieces& in, bool first_at_start) const {
    pieces out;
    std::vector<std::pair<std::pair<std::size_t, std::size_t>, bool>> parts;
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::string s;
      for (char c : in[i]) {
        if (c == ' ')
          s += replacement;
        else
          s.push_back(c);
      }
      bool starts = s.compare(0, replacement.size(), replacement) == 0;
      if (!starts
          && (scheme == prepend::always
              || (scheme == prepend::first && i == 0 && first_at_start)))
        s.insert(0, replacement);
      if (!split_on_replacement) {
        if (!s.empty())
          out.push_back(std::move(s));
        continue;
      }
      parts.clear();
      std::size_t prev = 0;
      for (auto p = s.find(replacement); p != std::string::npos;
           p = s.find(replacement, prev)) {
        if (prev != p)
          parts.push_back({{prev, p}, false});
        parts.push_back({{p, p + replacement.size()}, true});
        prev = p + replacement.size();
      }
      if (prev != s.size())
        parts.push_back({{prev, s.size()}, false});
      pre_tokenizer merge;
      merge.how = behavior::merged_with_next;
      for (auto [off, _] : merge.arrange(parts))
        if (off.second > off.first)
          out.push_back(s.substr(off.first, off.second - off.first));
    }
    in = std::move(out);
  }

  void split_all(pieces& in) const {
    pieces out;
    out.reserve(in.size() * 2);
    std::vector<std::pair<std::size_t, std::size_t>> m;
    std::vector<std::pair<std::pair<std::size_t, std::size_t>, bool>> parts;
    for (const auto& s : in) {
      parts.clear();
      if (s.empty()) {
        parts.push_back({{0, 0}, false});
      } else {
        re->find_all(s, m);
        std::size_t prev = 0;
        for (auto [b, e] : m) {
          if (prev != b)
            parts.push_back({{prev, b}, false});
          parts.push_back({{b, e}, true});
          prev = e;
        }
        if (prev != s.size())
          parts.push_back({{prev, s.size()}, false});
      }
      if (invert)
        for (auto& p : parts)
          p.second = !p.second;
      for (auto [off, _] : arrange(parts)) {
        if (off.second > off.first)
          out.push_back(s.substr(off.first, off.second - off.first));
      }
    }
    in = std::move(out);
  }

  // huggingface/tokenizers normalizer.rs NormalizedString::split.
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, bool>> arrange(
      const std::vector<std::pair<std::pair<std::size_t, std::size_t>, bool>>&
          parts) const {
    std::vector<std::pair<std::pair<std::size_t, std::size_t>, bool>> acc;
    bool previous_match = false;
    switch (how) {
    case behavior::isolated:
      return parts;
    case behavior::removed:
      for (const auto& p : parts)
        if (!p.second)
          acc.push_back(p);
      return acc;
    case behavior::merged_with_previous:
      for (const auto& [off, is_match] : parts) {
        if (is_match && !previous_match && !acc.empty())
          acc.back().first.second = off.second;
        else
          acc.push_back({off, false});
        previous_match = is_match;
      }
      return acc;
    case behavior::merged_with_next:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        const auto& [off, is_match] = *it;
        if (is_match && !previous_match && !acc.empty())
          acc.back().first.first = off.first;
        else
          acc.push_back({off, false});
        previous_match = is_match;
      }
      std::reverse(acc.begin(), acc.end());
      return acc;
    case behavior::contiguous:
      for (const auto& [off, is_match] : parts) {
        if (is_match == previous_match && !acc.empty())
          acc.back().first.second = off.second;
        else
          acc.push_back({off, false});
        previous_match = is_match;
      }
      return acc;
    }
    return acc;
  }
};

// --------------------------------------------------------------- decoder --

struct decoder {
  enum class kind {
    byte_level,
    replace,
    byte_fallback,
    fuse,
    strip,
    metaspace,
    wordpiece,
    sequence
  };
  kind k = kind::sequence;
  std::string a, b;
  bool prepends = true; // Metaspace: its prepend_scheme is not never
  bool cleanup = true;  // WordPiece
  std::size_t start = 0, stop = 0;
  std::vector<decoder> children;

  void apply(std::vector<std::string>& tokens) const {
    switch (k) {
    case kind::sequence:
      for (const auto& c : children)
        c.apply(tokens);
      return;
    case kind::byte_level: {
      // Tokens are raw bytes already (see load_bpe).
      std::string all;
      for (const auto& t : tokens)
        all += t;
      tokens.assign(1, utf8_lossy(all));
      return;
    }
    case kind::replace:
      for (auto& t : tokens) {
        if (a.empty())
          continue;
        std::string out;
        std::size_t prev = 0;
        for (auto p = t.find(a); p != std::string::npos; p = t.find(a, prev)) {
          out.append(t, prev, p - prev);
          out += b;
          prev = p + a.size();
        }
        out.append(t, prev);
        t = std::move(out);
      }
      return;
    case kind::byte_fallback: {
      // huggingface/tokenizers decoders/byte_fallback.rs
      std::vector<std::string> out;
      std::string pending;
      bool have_pending = false;
      auto flush = [&] {
        if (!have_pending)
          return;
        auto lossy = utf8_lossy(pending);
        if (lossy == pending) {
          out.push_back(pending);
        } else {
          for (std::size_t i = 0; i < pending.size(); ++i)
            out.emplace_back("\xEF\xBF\xBD");
        }
        pending.clear();
        have_pending = false;
      };
      for (const auto& t : tokens) {
        unsigned v = 0;
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>'
            && std::sscanf(t.c_str() + 3, "%2x", &v) == 1) {
          pending.push_back(static_cast<char>(v));
          have_pending = true;
        } else {
          flush();
          out.push_back(t);
        }
      }
      flush();
      tokens = std::move(out);
      return;
    }
    case kind::metaspace:
      // huggingface/tokenizers decoders/metaspace.rs: the replacement
      // becomes a space, except in the first token, which loses it when
      // a prefix was prepended.
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        std::string out;
        const auto& t = tokens[i];
        for (std::size_t p = 0; p < t.size();) {
          if (t.compare(p, a.size(), a) == 0) {
            if (!(i == 0 && prepends))
              out.push_back(' ');
            p += a.size();
          } else {
            out.push_back(t[p++]);
          }
        }
        tokens[i] = std::move(out);
      }
      return;
    case kind::wordpiece: {
      // huggingface/tokenizers decoders/wordpiece.rs
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        auto& t = tokens[i];
        if (i != 0) {
          if (t.compare(0, a.size(), a) == 0)
            t.erase(0, a.size());
          else
            t = " " + t;
        }
        if (cleanup) {
          for (auto [from, to] : std::initializer_list<
                   std::pair<std::string_view, std::string_view>>{
                   {" .", "."},
                   {" ?", "?"},
                   {" !", "!"},
                   {" ,", ","},
                   {" ' ", "'"},
                   {" n't", "n't"},
                   {" 'm", "'m"},
                   {" do not", " don't"},
                   {" 's", "'s"},
                   {" 've", "'ve"},
                   {" 're", "'re"}}) {
            std::string out;
            std::size_t prev = 0;
            for (auto p = t.find(from); p != std::string::npos;
                 p = t.find(from, prev)) {
              out.append(t, prev, p - prev);
              out += to;
              prev = p + from.size();
            }
            out.append(t, prev);
            t = std::move(out);
          }
        }
      }
      return;
    }
    case kind::fuse: {
      std::string all;
      for (const auto& t : tokens)
        all += t;
      tokens.assign(1, all);
      return;
    }
    case kind::strip:
      for (auto& t : tokens) {
        // Removes up to `start` leading and `stop` trailing copies of the
        // character `a`.
        std::size_t b0 = 0;
        for (std::size_t i = 0; i < start && t.compare(b0, a.size(), a) == 0
                                && b0 + a.size() <= t.size();
             ++i)
          b0 += a.size();
        std::size_t e0 = t.size();
        for (std::size_t i = 0; i < stop && e0 >= b0 + a.size()
                                && t.compare(e0 - a.size(), a.size(), a) == 0;
             ++i)
          e0 -= a.size();
        t = t.substr(b0, e0 - b0);
      }
      return;
    }
  }
};

// ---------------------------------------------------------- added tokens --

struct added_token {
  std::string content; // matched text (normalized when `normalized`)
  std::string decoded; // what decode yields
  std::uint32_t id = 0;
  bool special = false, normalized = false, lstrip = false, rstrip = false,
       single_word = false;
};

// Leftmost-longest matching over a byte trie, as the aho-corasick crate's
// MatchKind::LeftmostLongest that AddedVocabulary uses.
class token_trie {
public:
  void add(const std::string& s, std::size_t index) {
    if (s.empty())
      return;
    std::size_t node = 0;
    first_[static_cast<unsigned char>(s[0])] = true;
    for (unsigned char c : s) {
      auto key = (static_cast<std::uint64_t>(node) << 8) | c;
      auto it = edges_.find(key);
      if (it == edges_.end()) {
        nodes_.push_back(npos);
        it = edges_.emplace(key, nodes_.size() - 1).first;
      }
      node = it->second;
    }
    if (nodes_[node] == npos)
      nodes_[node] = index;
  }
  bool empty() const noexcept { return nodes_.size() == 1; }
  // Longest match starting at `i`: (token index, length) or npos.
  std::pair<std::size_t, std::size_t> longest_at(std::string_view s,
                                                 std::size_t i) const {
    std::pair<std::size_t, std::size_t> best{npos, 0};
    if (!first_[static_cast<unsigned char>(s[i])])
      return best;
    std::size_t node = 0;
    for (std::size_t j = i; j < s.size(); ++j) {
      auto key = (static_cast<std::uint64_t>(node) << 8)
                 | static_cast<unsigned char>(s[j]);
      auto it = edges_.find(key);
      if (it == edges_.end())
        break;
      node = it->second;
      if (nodes_[node] != npos)
        best = {nodes_[node], j + 1 - i};
    }
    return best;
  }
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

private:
  std::vector<std::size_t> nodes_{npos};
  std::unordered_map<std::uint64_t, std::size_t> edges_;
  std::array<bool, 256> first_{};
};

bool is_word_char(char32_t c) {
  return u_isalnum(static_cast<UChar32>(c)) != 0 || c == U'_';
}

// --------------------------------------------------------------- BPE ----

struct merge_target {
  std::uint32_t rank;
  std::uint32_t id;
};

struct bpe {
  bool wordpiece = false;      // a WordPiece model in the same tables
  std::size_t max_chars = 100; // WordPiece max_input_chars_per_word
  bool byte_level = false;     // vocabulary stored as raw bytes
  bool ignore_merges = false, byte_fallback = false, fuse_unk = false;
  std::optional<std::uint32_t> unk;
  std::string prefix, suffix;
  std::unordered_map<std::string, std::uint32_t> vocab;
  std::vector<std::string> id_to_token; // raw bytes when byte_level
  std::unordered_map<std::uint64_t, merge_target> merges;
  std::array<std::optional<std::uint32_t>, 256> byte_tokens; // <0xXX>

  static std::uint64_t key(std::uint32_t a, std::uint32_t b) {
    return (static_cast<std::uint64_t>(a) << 32) | b;
  }

  struct symbol {
    std::uint32_t id;
    std::int32_t prev, next;
    bool alive;
  };

  // huggingface/tokenizers models/wordpiece: greedy longest match from the
  // left, continuations with the prefix; a word with any piece missing (or
  // longer than max_chars characters) is one unk.
  void tokenize_wordpiece(std::string_view w,
                          std::vector<std::uint32_t>& out) const {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < w.size();
         i += utf8_len(static_cast<unsigned char>(w[i])))
      ++chars;
    if (chars > max_chars) {
      if (unk)
        out.push_back(*unk);
      return;
    }
    std::vector<std::uint32_t> pieces;
    std::size_t start = 0;
    std::string s;
    while (start < w.size()) {
      std::size_t end = w.size();
      bool found = false;
      while (start < end) {
        s.assign(w.substr(start, end - start));
        if (start > 0)
          s.insert(0, prefix);
        if (auto it = vocab.find(s); it != vocab.end()) {
          pieces.push_back(it->second);
          found = true;
          break;
        }
        --end;
        while (end > start
               && (static_cast<unsigned char>(w[end]) & 0xC0) == 0x80)
          --end;
      }
      if (!found) {
        if (unk)
          out.push_back(*unk);
        return;
      }
      start = end;
    }
    out.insert(out.end(), pieces.begin(), pieces.end());
  }

  void tokenize(std::string_view w, std::vector<std::uint32_t>& out) const {
    if (w.empty())
      return;
    if (wordpiece) {
      tokenize_wordpiece(w, out);
      return;
    }
    if (ignore_merges) {
      if (auto it = vocab.find(std::string{w}); it != vocab.end()) {
        out.push_back(it->second);
        return;
      }
    }
    std::vector<symbol> syms;
    syms.reserve(w.size());
    auto add = [&](std::uint32_t id) {
      auto n = static_cast<std::int32_t>(syms.size());
      syms.push_back({id, n - 1, -1, true});
      if (n > 0)
        syms[static_cast<std::size_t>(n - 1)].next = n;
    };
    // An unknown character waits here, so that a run of them can fuse.
    bool have_unk = false;
    std::string s;
    for (std::size_t i = 0; i < w.size();) {
      std::size_t len
          = byte_level ? 1 : utf8_len(static_cast<unsigned char>(w[i]));
      if (i + len > w.size())
        len = w.size() - i;
      bool last = i + len == w.size();
      s.assign(w.substr(i, len));
      if (i > 0 && !prefix.empty())
        s.insert(0, prefix);
      if (last && !suffix.empty())
        s += suffix;
      if (auto it = vocab.find(s); it != vocab.end()) {
        if (have_unk) {
          add(*unk);
          have_unk = false;
        }
        add(it->second);
      } else {
        bool done = false;
        if (byte_fallback) {
          bool all = std::all_of(s.begin(), s.end(), [&](char c) {
            return byte_tokens[static_cast<unsigned char>(c)].has_value();
          });
          if (all) {
            for (char c : s)
              add(*byte_tokens[static_cast<unsigned char>(c)]);
            done = true;
          }
        }
        if (!done && unk) {
          if (have_unk && !fuse_unk)
            add(*unk);
          have_unk = true;
        }
      }
      i += len;
    }
    if (have_unk)
      add(*unk);
    merge_all(syms);
    for (const auto& sy : syms)
      if (sy.alive)
        out.push_back(sy.id);
  }

  // huggingface/tokenizers models/bpe/word.rs Word::merge_all: the lowest
  // rank first, the leftmost among equal ranks.
  void merge_all(std::vector<symbol>& syms) const {
    if (syms.size() < 2)
      return;
    struct cand {
      std::uint32_t rank;
      std::int32_t pos;
      std::uint32_t id;
      bool operator>(const cand& o) const {
        return rank != o.rank ? rank > o.rank : pos > o.pos;
      }
    };
    std::priority_queue<cand, std::vector<cand>, std::greater<cand>> q;
    for (std::size_t i = 0; i + 1 < syms.size(); ++i)
      if (auto it = merges.find(key(syms[i].id, syms[i + 1].id));
          it != merges.end())
        q.push({it->second.rank, static_cast<std::int32_t>(i), it->second.id});
    while (!q.empty()) {
      auto top = q.top();
      q.pop();
      auto& left = syms[static_cast<std::size_t>(top.pos)];
      if (!left.alive || left.next < 0)
        continue;
      auto& right = syms[static_cast<std::size_t>(left.next)];
      auto it = merges.find(key(left.id, right.id));
      if (it == merges.end() || it->second.id != top.id)
        continue;
      left.id = top.id;
      right.alive = false;
      left.next = right.next;
      if (right.next >= 0)
        syms[static_cast<std::size_t>(right.next)].prev = top.pos;
      if (left.prev >= 0) {
        const auto& p = syms[static_cast<std::size_t>(left.prev)];
        if (auto m = merges.find(key(p.id, left.id)); m != merges.end())
          q.push({m->second.rank, left.prev, m->second.id});
      }
      if (left.next >= 0) {
        const auto& n = syms[static_cast<std::size_t>(left.next)];
        if (auto m = merges.find(key(left.id, n.id)); m != merges.end())
          q.push({m->second.rank, top.pos, m->second.id});
      }
    }
  }
};

caf::error bad(std::string_view origin, const std::string& what) {
  return make_error(errc::invalid_file, std::string{origin} + ": " + what);
}

caf::error unsupported(std::string_view origin, std::string_view part,
                       const std::string& type) {
  return make_error(errc::unsupported,
                    std::string{origin} + ": " + std::string{part} + " type '"
                        + type + "' is not supported (see docs/tokenizers.md)");
}

caf::expected<std::shared_ptr<regex>> load_pattern(const json& p,
                                                   std::string_view origin) {
  if (p.contains("Regex"))
    return regex::make(p.at("Regex").get<std::string>(), origin);
  if (p.contains("String"))
    return regex::make(regex_escape(p.at("String").get<std::string>()), origin);
  return bad(origin, "pattern is neither {\"Regex\"} nor {\"String\"}");
}

caf::expected<normalizer> load_normalizer(const json& j,
                                          std::string_view origin) {
  normalizer n;
  auto type = j.at("type").get<std::string>();
  if (type == "NFC")
    n.k = normalizer::kind::nfc;
  else if (type == "NFD")
    n.k = normalizer::kind::nfd;
  else if (type == "NFKC")
    n.k = normalizer::kind::nfkc;
  else if (type == "NFKD")
    n.k = normalizer::kind::nfkd;
  else if (type == "Lowercase")
    n.k = normalizer::kind::lowercase;
  else if (type == "Prepend") {
    n.k = normalizer::kind::prepend;
    n.a = j.at("prepend").get<std::string>();
  } else if (type == "Replace") {
    n.k = normalizer::kind::replace;
    const auto& p = j.at("pattern");
    if (p.contains("String")) {
      n.a = p.at("String").get<std::string>();
    } else {
      auto re = load_pattern(p, origin);
      if (!re)
        return std::move(re.error());
      n.re = *re;
    }
    n.b = j.at("content").get<std::string>();
  } else if (type == "Strip") {
    n.k = normalizer::kind::strip;
    n.left = j.value("strip_left", false);
    n.right = j.value("strip_right", false);
  } else if (type == "BertNormalizer") {
    n.k = normalizer::kind::bert;
    n.clean_text = j.value("clean_text", true);
    n.chinese = j.value("handle_chinese_chars", true);
    n.lower = j.value("lowercase", true);
    auto sa = j.find("strip_accents");
    n.strip_accents
        = sa == j.end() || sa->is_null() ? n.lower : sa->get<bool>();
  } else if (type == "Sequence") {
    n.k = normalizer::kind::sequence;
    for (const auto& c : j.at("normalizers")) {
      auto child = load_normalizer(c, origin);
      if (!child)
        return child;
      n.children.push_back(std::move(*child));
    }
  } else {
    return unsupported(origin, "normalizer", type);
  }
  return n;
}

constexpr const char* gpt2_pattern
    = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

caf::expected<pre_tokenizer>
load_pre_tokenizer(const json& j, std::string_view origin, bool& byte_level) {
  pre_tokenizer t;
  auto type = j.at("type").get<std::string>();
  if (type == "Split") {
    t.k = pre_tokenizer::kind::split;
    auto re = load_pattern(j.at("pattern"), origin);
    if (!re)
      return std::move(re.error());
    t.re = *re;
    t.invert = j.value("invert", false);
    auto b = j.at("behavior").get<std::string>();
    using bh = pre_tokenizer::behavior;
    if (b == "Removed")
      t.how = bh::removed;
    else if (b == "Isolated")
      t.how = bh::isolated;
    else if (b == "MergedWithPrevious")
      t.how = bh::merged_with_previous;
    else if (b == "MergedWithNext")
      t.how = bh::merged_with_next;
    else if (b == "Contiguous")
      t.how = bh::contiguous;
    else
      return bad(origin, "Split behavior '" + b + "' is unknown");
  } else if (type == "ByteLevel") {
    t.k = pre_tokenizer::kind::byte_level;
    byte_level = true;
    t.add_prefix_space = j.value("add_prefix_space", false);
    if (j.value("use_regex", true)) {
      auto re = regex::make(gpt2_pattern, origin);
      if (!re)
        return std::move(re.error());
      t.re = *re;
    }
  } else if (type == "BertPreTokenizer") {
    t.k = pre_tokenizer::kind::bert;
  } else if (type == "Metaspace") {
    t.k = pre_tokenizer::kind::metaspace;
    t.replacement = j.value("replacement", std::string{"\u2581"});
    t.split_on_replacement = j.value("split", true);
    auto scheme = j.value("prepend_scheme", std::string{});
    if (scheme.empty())
      scheme = j.value("add_prefix_space", true) ? "always" : "never";
    using ps = pre_tokenizer::prepend;
    if (scheme == "always")
      t.scheme = ps::always;
    else if (scheme == "first")
      t.scheme = ps::first;
    else if (scheme == "never")
      t.scheme = ps::never;
    else
      return bad(origin,
                 "Metaspace prepend_scheme '" + scheme + "' is unknown");
  } else if (type == "Sequence") {
    t.k = pre_tokenizer::kind::sequence;
    for (const auto& c : j.at("pretokenizers")) {
      auto child = load_pre_tokenizer(c, origin, byte_level);
      if (!child)
        return child;
      t.children.push_back(std::move(*child));
    }
  } else {
    return unsupported(origin, "pre_tokenizer", type);
  }
  return t;
}

caf::expected<decoder> load_decoder(const json& j, std::string_view origin) {
  decoder d;
  auto type = j.at("type").get<std::string>();
  if (type == "ByteLevel") {
    d.k = decoder::kind::byte_level;
  } else if (type == "Replace") {
    d.k = decoder::kind::replace;
    const auto& p = j.at("pattern");
    if (!p.contains("String"))
      return unsupported(origin, "decoder Replace pattern", "Regex");
    d.a = p.at("String").get<std::string>();
    d.b = j.at("content").get<std::string>();
  } else if (type == "ByteFallback") {
    d.k = decoder::kind::byte_fallback;
  } else if (type == "WordPiece") {
    d.k = decoder::kind::wordpiece;
    d.a = j.value("prefix", std::string{"##"});
    d.cleanup = j.value("cleanup", true);
  } else if (type == "Metaspace") {
    d.k = decoder::kind::metaspace;
    d.a = j.value("replacement", std::string{"\u2581"});
    auto scheme = j.value("prepend_scheme", std::string{});
    if (scheme.empty())
      scheme = j.value("add_prefix_space", true) ? "always" : "never";
    d.prepends = scheme != "never";
  } else if (type == "Fuse") {
    d.k = decoder::kind::fuse;
  } else if (type == "Strip") {
    d.k = decoder::kind::strip;
    d.a = j.at("content").get<std::string>();
    d.start = j.value("start", std::size_t{0});
    d.stop = j.value("stop", std::size_t{0});
  } else if (type == "Sequence") {
    d.k = decoder::kind::sequence;
    for (const auto& c : j.at("decoders")) {
      auto child = load_decoder(c, origin);
      if (!child)
        return child;
      d.children.push_back(std::move(*child));
    }
  } else {
    return unsupported(origin, "decoder", type);
  }
  return d;
}

std::string string_or_empty(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    return {};
  return it->get<std::string>();
}

caf::expected<bpe> load_bpe(const json& m, bool byte_level,
                            std::string_view origin) {
  bpe b;
  b.byte_level = byte_level;
  b.ignore_merges = m.value("ignore_merges", false);
  b.byte_fallback = m.value("byte_fallback", false);
  b.fuse_unk = m.value("fuse_unk", false);
  b.prefix = string_or_empty(m, "continuing_subword_prefix");
  b.suffix = string_or_empty(m, "end_of_word_suffix");
  const auto& vocab = m.at("vocab");
  b.vocab.reserve(vocab.size());
  std::string raw;
  for (const auto& [text, idj] : vocab.items()) {
    auto id = idj.get<std::uint32_t>();
    const std::string* key = &text;
    // An entry with characters outside the byte alphabet (a special token
    // kept in the vocab) stays text: the ByteLevel decoder, too, keeps such
    // a token's own bytes.
    if (byte_level && from_byte_level(text, raw))
      key = &raw;
    b.vocab.emplace(*key, id);
    if (b.id_to_token.size() <= id)
      b.id_to_token.resize(id + 1);
    b.id_to_token[id] = *key;
  }
  for (int v = 0; v < 256; ++v) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", v);
    if (auto it = b.vocab.find(name); it != b.vocab.end())
      b.byte_tokens[static_cast<std::size_t>(v)] = it->second;
  }
  auto unk = string_or_empty(m, "unk_token");
  if (!unk.empty()) {
    auto it = b.vocab.find(unk);
    if (it == b.vocab.end())
      return bad(origin, "unk_token '" + unk + "' is not in the vocab");
    b.unk = it->second;
  }
  std::uint32_t rank = 0;
  std::string left, right;
  for (const auto& mj : m.at("merges")) {
    if (mj.is_string()) {
      const auto& s = mj.get_ref<const std::string&>();
      auto sp = s.find(' ');
      if (sp == std::string::npos)
        return bad(origin, "merge '" + s + "' is not two tokens");
      left = s.substr(0, sp);
      right = s.substr(sp + 1);
    } else {
      left = mj.at(0).get<std::string>();
      right = mj.at(1).get<std::string>();
    }
    std::string joined = left + right;
    if (byte_level) {
      if (from_byte_level(left, raw))
        left = raw;
      if (from_byte_level(right, raw))
        right = raw;
      if (from_byte_level(joined, raw))
        joined = raw;
    }
    auto a = b.vocab.find(left), c = b.vocab.find(right),
         n = b.vocab.find(joined);
    if (a == b.vocab.end() || c == b.vocab.end() || n == b.vocab.end())
      return bad(origin, "merge '" + left + " " + right
                             + "' names a token missing from the vocab");
    b.merges.emplace(bpe::key(a->second, c->second),
                     merge_target{rank, n->second});
    ++rank;
  }
  return b;
}

caf::expected<bpe> load_wordpiece(const json& m, std::string_view origin) {
  bpe b;
  b.wordpiece = true;
  b.prefix = m.contains("continuing_subword_prefix")
                     && !m.at("continuing_subword_prefix").is_null()
                 ? m.at("continuing_subword_prefix").get<std::string>()
                 : std::string{"##"};
  b.max_chars = m.value("max_input_chars_per_word", std::size_t{100});
  for (const auto& [text, idj] : m.at("vocab").items()) {
    auto id = idj.get<std::uint32_t>();
    b.vocab.emplace(text, id);
    if (b.id_to_token.size() <= id)
      b.id_to_token.resize(id + 1);
    b.id_to_token[id] = text;
  }
  auto unk = string_or_empty(m, "unk_token");
  if (!unk.empty()) {
    auto it = b.vocab.find(unk);
    if (it == b.vocab.end())
      return bad(origin, "unk_token '" + unk + "' is not in the vocab");
    b.unk = it->second;
  }
  return b;
}

} // namespace

struct hf_tokenizer::impl {
  std::vector<added_token> added;
  std::unordered_map<std::uint32_t, std::size_t> added_by_id;
  token_trie raw_trie, normalized_trie;
  std::optional<normalizer> norm;
  std::optional<pre_tokenizer> pre;
  std::optional<decoder> dec;
  bpe model;
  std::size_t size = 0;

  // AddedVocabulary::find_matches: pieces of `s`, each an added token
  // (index) or text to tokenize (npos).
  void split_added(
      const token_trie& trie, std::string_view s,
      std::vector<std::pair<std::size_t, std::string_view>>& out) const {
    out.clear();
    if (trie.empty()) {
      out.emplace_back(token_trie::npos, s);
      return;
    }
    std::size_t start_offset = 0;
    for (std::size_t i = 0; i < s.size();) {
      auto [index, len] = trie.longest_at(s, i);
      if (index == token_trie::npos) {
        ++i;
        continue;
      }
      std::size_t start = i, stop = i + len;
      const auto& t = added[index];
      if (t.single_word) {
        bool start_space = true, stop_space = true;
        if (start > 0) {
          std::size_t p = start - 1;
          while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80)
            --p;
          std::size_t l = 0;
          start_space = !is_word_char(decode_at(s, p, l));
        }
        if (stop < s.size()) {
          std::size_t l = 0;
          stop_space = !is_word_char(decode_at(s, stop, l));
        }
        if (!start_space || !stop_space) {
          ++i;
          continue;
        }
      }
      if (t.lstrip) {
        std::size_t p = start;
        while (p > 0) {
          std::size_t q = p - 1;
          while (q > 0 && (static_cast<unsigned char>(s[q]) & 0xC0) == 0x80)
            --q;
          std::size_t l = 0;
          if (!is_unicode_space(decode_at(s, q, l)))
            break;
          p = q;
        }
        start = std::max(p, start_offset);
      }
      if (t.rstrip) {
        while (stop < s.size()) {
          std::size_t l = 0;
          if (!is_unicode_space(decode_at(s, stop, l)))
            break;
          stop += l;
        }
      }
      if (start_offset < start)
        out.emplace_back(token_trie::npos,
                         s.substr(start_offset, start - start_offset));
      out.emplace_back(index, s.substr(start, stop - start));
      start_offset = stop;
      i = stop;
    }
    if (start_offset < s.size())
      out.emplace_back(token_trie::npos, s.substr(start_offset));
  }

  void encode(std::string_view text, std::vector<std::uint32_t>& ids) const {
    std::vector<std::pair<std::size_t, std::string_view>> outer, inner;
    split_added(raw_trie, text, outer);
    std::string normalized;
    pieces words;
    bool first_outer = true;
    for (auto [index, piece] : outer) {
      bool outer_at_start = first_outer;
      first_outer = false;
      if (index != token_trie::npos) {
        ids.push_back(added[index].id);
        continue;
      }
      normalized.assign(piece);
      if (norm)
        norm->apply(normalized);
      split_added(normalized_trie, normalized, inner);
      bool first_inner = outer_at_start;
      for (auto [index2, part] : inner) {
        bool at_start = first_inner;
        first_inner = false;
        if (index2 != token_trie::npos) {
          ids.push_back(added[index2].id);
          continue;
        }
        words.assign(1, std::string{part});
        if (pre)
          pre->apply(words, at_start);
        for (const auto& w : words)
          model.tokenize(w, ids);
      }
    }
  }
};

caf::expected<hf_tokenizer> hf_tokenizer::from_json(std::string_view json_text,
                                                    std::string_view origin) {
  try {
    auto j = json::parse(json_text);
    auto p = std::make_shared<impl>();
    const auto& model = j.at("model");
    auto type = model.value("type", std::string{"BPE"});
    if (type != "BPE" && type != "WordPiece")
      return unsupported(origin, "model", type);
    bool byte_level = false;
    if (auto it = j.find("pre_tokenizer"); it != j.end() && !it->is_null()) {
      auto pre = load_pre_tokenizer(*it, origin, byte_level);
      if (!pre)
        return std::move(pre.error());
      p->pre = std::move(*pre);
    }
    if (auto it = j.find("normalizer"); it != j.end() && !it->is_null()) {
      auto n = load_normalizer(*it, origin);
      if (!n)
        return std::move(n.error());
      p->norm = std::move(*n);
    }
    if (auto it = j.find("decoder"); it != j.end() && !it->is_null()) {
      auto d = load_decoder(*it, origin);
      if (!d)
        return std::move(d.error());
      p->dec = std::move(*d);
    }
    auto m = type == "WordPiece" ? load_wordpiece(model, origin)
                                 : load_bpe(model, byte_level, origin);
    if (!m)
      return std::move(m.error());
    p->model = std::move(*m);
    p->size = p->model.id_to_token.size();
    if (auto it = j.find("added_tokens"); it != j.end() && it->is_array()) {
      for (const auto& a : *it) {
        added_token t;
        t.content = a.at("content").get<std::string>();
        t.id = a.at("id").get<std::uint32_t>();
        t.special = a.value("special", false);
        t.normalized = a.value("normalized", !t.special);
        t.lstrip = a.value("lstrip", false);
        t.rstrip = a.value("rstrip", false);
        t.single_word = a.value("single_word", false);
        // ByteLevel's decoder maps a token's characters back to bytes only
        // when all of them are in its alphabet, else keeps the text.
        t.decoded = t.content;
        if (byte_level) {
          std::string raw;
          if (from_byte_level(t.content, raw))
            t.decoded = raw;
        }
        if (t.normalized && p->norm)
          p->norm->apply(t.content);
        p->size = std::max<std::size_t>(p->size, t.id + 1);
        p->added_by_id[t.id] = p->added.size();
        p->added.push_back(std::move(t));
      }
      for (std::size_t i = 0; i < p->added.size(); ++i)
        (p->added[i].normalized ? p->normalized_trie : p->raw_trie)
            .add(p->added[i].content, i);
    }
    return hf_tokenizer{std::move(p)};
  } catch (const std::exception& e) {
    return bad(origin, std::string{"not a valid tokenizer.json: "} + e.what());
  }
}

caf::expected<hf_tokenizer>
hf_tokenizer::from_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(errc::io, "cannot read tokenizer file " + path.string()
                                    + ": it does not exist or is not readable");
  std::ostringstream buf;
  buf << in.rdbuf();
  return from_json(buf.str(), path.string());
}

std::vector<std::uint32_t> hf_tokenizer::encode(std::string_view text) const {
  std::vector<std::uint32_t> ids;
  impl_->encode(text, ids);
  return ids;
}

std::size_t hf_tokenizer::count(std::string_view text) const {
  return encode(text).size();
}

std::string hf_tokenizer::decode(std::span<const std::uint32_t> ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (auto id : ids) {
    if (auto it = impl_->added_by_id.find(id); it != impl_->added_by_id.end())
      tokens.push_back(impl_->added[it->second].decoded);
    else if (id < impl_->model.id_to_token.size())
      tokens.push_back(impl_->model.id_to_token[id]);
  }
  if (impl_->dec)
    impl_->dec->apply(tokens);
  std::string out;
  for (const auto& t : tokens)
    out += t;
  return out;
}

std::size_t hf_tokenizer::vocab_size() const noexcept {
  return impl_->size;
}

} // namespace aiperf::tokenizer
