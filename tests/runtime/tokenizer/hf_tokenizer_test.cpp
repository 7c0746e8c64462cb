// tokenizer.json semantics on small hand-made files whose right answers can
// be worked out by hand (the real files are compared with Hugging Face's
// library in differential_test.cpp).
#include "runtime/tokenizer/hf_tokenizer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using aiperf::tokenizer::errc;
using aiperf::tokenizer::hf_tokenizer;
using ids = std::vector<std::uint32_t>;

// Byte-level BPE: "Ġ" is the byte-level character of ' '.
constexpr const char* byte_level_json = R"({
  "added_tokens": [
    {"id": 100, "content": "<|end|>", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false}
  ],
  "normalizer": null,
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": " ?\\p{L}+|\\p{N}|\\s+(?!\\S)|\\s+|[^\\s\\p{L}\\p{N}]+"},
     "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
     "use_regex": false}]},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "ignore_merges": false,
    "vocab": {"a": 0, "b": 1, "c": 2, "Ġ": 3, "1": 4, "!": 5,
              "ab": 6, "bc": 7, "abc": 8, "Ġa": 9, "Ġab": 10, "Ã": 11, "©": 12,
              "Ã©": 13},
    "merges": ["b c", "a b", "Ġ a", "Ġa b", "Ã ©"]}
})";

hf_tokenizer load(const char* text) {
  auto t = hf_tokenizer::from_json(text, "test.json");
  EXPECT_TRUE(t) << (t ? "" : aiperf::error_message(t.error()));
  return *t;
}

TEST(hf_tokenizer, byte_level_bpe_applies_merges_by_rank) {
  auto t = load(byte_level_json);
  // "b c" outranks "a b", so "abc" is a + bc, never ab + c (no "a bc" merge).
  EXPECT_EQ(t.encode("abc"), (ids{0, 7}));
  EXPECT_EQ(t.encode("ab"), (ids{6}));
  // "a b" outranks "Ġ a", and no merge joins "Ġ" and "ab".
  EXPECT_EQ(t.encode(" ab"), (ids{3, 6}));
  EXPECT_EQ(t.encode(" a"), (ids{9}));
  EXPECT_EQ(t.encode("ab 1!"), (ids{6, 3, 4, 5}));
  // é is the bytes C3 A9, byte-level characters "Ã" and "©".
  EXPECT_EQ(t.encode("\xC3\xA9"), (ids{13}));
  EXPECT_EQ(t.count("ab ab"), 3u);
  EXPECT_EQ(t.vocab_size(), 101u);
}

TEST(hf_tokenizer, special_tokens_in_the_text_are_single_tokens) {
  auto t = load(byte_level_json);
  EXPECT_EQ(t.encode("ab<|end|>ab"), (ids{6, 100, 6}));
  EXPECT_EQ(t.encode("<|end|><|end|>"), (ids{100, 100}));
  // A prefix of a special token is ordinary text; characters that neither
  // the vocabulary nor an unk token cover are dropped, as the library does.
  EXPECT_EQ(t.encode("ab<|end"), (ids{6}));
}

TEST(hf_tokenizer, decode_inverts_encode) {
  auto t = load(byte_level_json);
  for (std::string s : {"abc", " ab ab", "\xC3\xA9", "ab<|end|>c"})
    EXPECT_EQ(t.decode(t.encode(s)), s);
  // A lone continuation byte decodes to U+FFFD, as from_utf8_lossy does.
  EXPECT_EQ(t.decode(ids{12}), "\xEF\xBF\xBD");
}

// SentencePiece-style BPE: Metaspace-like normalizer, byte fallback, unk.
constexpr const char* sentencepiece_json = R"({
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false}
  ],
  "normalizer": {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true,
    "byte_fallback": true,
    "vocab": {"<unk>": 0, "<0xC3>": 1, "<0xA9>": 2, "▁": 3, "h": 4, "i": 5,
              "▁h": 6, "▁hi": 7},
    "merges": ["▁ h", "▁h i"]}
})";

TEST(hf_tokenizer, sentencepiece_bpe_falls_back_to_bytes) {
  auto t = load(sentencepiece_json);
  EXPECT_EQ(t.encode("hi"), (ids{7}));
  EXPECT_EQ(t.encode("hi hi"), (ids{7, 7}));
  EXPECT_EQ(t.encode("h\xC3\xA9"), (ids{6, 1, 2}));
  EXPECT_EQ(t.decode(t.encode("hi h\xC3\xA9")), "hi h\xC3\xA9");
}

// Metaspace (Mistral-style): the "first" scheme prepends the replacement
// only to text that begins the input, not to text after a special token.
constexpr const char* metaspace_json = R"({
  "added_tokens": [
    {"id": 6, "content": "<s>", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false}
  ],
  "normalizer": null,
  "pre_tokenizer": {"type": "Metaspace", "replacement": "▁",
                    "prepend_scheme": "first", "split": true},
  "decoder": {"type": "Metaspace", "replacement": "▁",
              "prepend_scheme": "first", "split": true},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true,
    "byte_fallback": false,
    "vocab": {"<unk>": 0, "▁": 1, "h": 2, "i": 3, "▁h": 4, "▁hi": 5},
    "merges": ["▁ h", "▁h i"]}
})";

TEST(hf_tokenizer, metaspace_prepends_only_at_the_start) {
  auto t = load(metaspace_json);
  EXPECT_EQ(t.encode("hi hi"), (ids{5, 5}));
  EXPECT_EQ(t.encode("hi"), (ids{5}));
  EXPECT_EQ(t.encode("<s>hi"), (ids{6, 2, 3}));
  EXPECT_EQ(t.encode("hi  hi"), (ids{5, 1, 5}));
  EXPECT_EQ(t.encode("x"), (ids{1, 0})); // unknown: unk
  EXPECT_EQ(t.decode(ids{5, 5}), "hi hi");
}

TEST(hf_tokenizer, errors_name_the_file_and_the_part) {
  auto bad = hf_tokenizer::from_json("{", "x/tokenizer.json");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(aiperf::is_error(bad.error(), errc::invalid_file));
  EXPECT_NE(aiperf::error_message(bad.error()).find("x/tokenizer.json"),
            std::string::npos);
  auto unigram = hf_tokenizer::from_json(
      R"({"model": {"type": "Unigram", "vocab": []}})", "u.json");
  ASSERT_FALSE(unigram);
  EXPECT_TRUE(aiperf::is_error(unigram.error(), errc::unsupported));
  EXPECT_NE(aiperf::error_message(unigram.error()).find("Unigram"),
            std::string::npos);
  auto missing = hf_tokenizer::from_file("/nonexistent/tokenizer.json");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(aiperf::is_error(missing.error(), errc::io));
}

} // namespace
