// UTF-8 well-formedness (Unicode 15, table 3-7) for text that ends up in
// JSON: bytes from input files and servers. Header-only: the exporters,
// the dataset loader and the record processor all need it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace aiperf::utf8 {

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view replacement = "\xEF\xBF\xBD";

/// Whether every byte of `s` is below 0x80: eight bytes per step, the
/// common case for ids, headers and most model output.
inline bool is_ascii(std::string_view s) noexcept {
  constexpr std::uint64_t highs = 0x8080808080808080ull;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    if ((x & highs) != 0)
      return false;
  }
  for (; i < s.size(); ++i)
    if (static_cast<unsigned char>(s[i]) >= 0x80)
      return false;
  return true;
}

/// The sequence at the start of `p` (`n` >= 1 bytes): its length and
/// whether it is well-formed. An ill-formed one has the length of its
/// maximal subpart (at least 1), which is what one U+FFFD replaces.
struct sequence {
  std::size_t length;
  bool valid;
};

inline sequence decode(const unsigned char* p, std::size_t n) noexcept {
  const unsigned c = p[0];
  if (c < 0x80)
    return {1, true};
  std::size_t need;
  unsigned lo = 0x80;
  unsigned hi = 0xBF;
  if (c < 0xC2) { // a continuation byte, or an overlong 2-byte lead
    return {1, false};
  } else if (c < 0xE0) {
    need = 1;
  } else if (c < 0xF0) {
    need = 2;
    if (c == 0xE0)
      lo = 0xA0; // overlong
    else if (c == 0xED)
      hi = 0x9F; // surrogates
  } else if (c < 0xF5) {
    need = 3;
    if (c == 0xF0)
      lo = 0x90; // overlong
    else if (c == 0xF4)
      hi = 0x8F; // above U+10FFFF
  } else {
    return {1, false};
  }
  for (std::size_t i = 1; i <= need; ++i) {
    if (i >= n)
      return {i, false}; // truncated
    const unsigned b = p[i];
    if (b < lo || b > hi)
      return {i, false};
    lo = 0x80;
    hi = 0xBF;
  }
  return {need + 1, true};
}

/// The offset of the first ill-formed sequence of `s`, or npos.
inline std::size_t first_invalid(std::string_view s) noexcept {
  if (is_ascii(s))
    return std::string_view::npos;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    auto seq = decode(p + i, s.size() - i);
    if (!seq.valid)
      return i;
    i += seq.length;
  }
  return std::string_view::npos;
}

/// How many ill-formed sequences `s` holds (each one U+FFFD when replaced).
inline std::size_t count_invalid(std::string_view s) noexcept {
  if (is_ascii(s))
    return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    auto seq = decode(p + i, s.size() - i);
    count += seq.valid ? 0 : 1;
    i += seq.length;
  }
  return count;
}

/// `s` with each ill-formed sequence replaced by U+FFFD.
inline std::string replace_invalid(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    auto seq = decode(p + i, s.size() - i);
    if (!seq.valid) {
      out.append(s.data() + run, i - run);
      out.append(replacement);
      run = i + seq.length;
    }
    i += seq.length;
  }
  out.append(s.data() + run, s.size() - run);
  return out;
}

} // namespace aiperf::utf8
