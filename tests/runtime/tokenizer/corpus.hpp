// The differential corpus: deterministic strings of the kinds tokenizers get
// wrong (English, code, CJK, emoji with ZWJ sequences, RTL scripts,
// combining marks, digit runs, whitespace runs, contractions in mixed case,
// special tokens written in the text), the same on every run and machine.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace aiperf::tokenizer::test {

/// `n` strings from a fixed seed; each is valid UTF-8.
[[nodiscard]] std::vector<std::string> make_corpus(std::size_t n);

} // namespace aiperf::tokenizer::test
