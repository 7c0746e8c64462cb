#include "tests/runtime/tokenizer/corpus.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace aiperf::tokenizer::test {

namespace {

// splitmix64: tiny, and the same sequence everywhere (std distributions are
// not specified bit-for-bit across standard libraries).
struct rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>(next() % n);
  }
  template <class Pool> std::string_view pick(const Pool& p) {
    return p[below(p.size())];
  }
};

constexpr std::array<std::string_view, 40> english{
    "The",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "benchmark",
    "latency",
    "throughput",
    "tokens",
    "request",
    "Kubernetes",
    "inference",
    "model",
    "server",
    "HELLO",
    "World",
    "internationalization",
    "a",
    "I",
    "pre-trained",
    "state-of-the-art",
    "e.g.",
    "U.S.A.",
    "Mr.",
    "naïve",
    "café",
    "résumé",
    "Zürich",
    "São",
    "Paulo",
    "coöperate",
    "ﬁne",
    "Ⅻ",
    "½",
    "ℌ",
    "Straße",
};

constexpr std::array<std::string_view, 24> contractions{
    "don't",   "DON'T",       "Don'T",  "it's",    "IT'S",    "It'S",
    "we're",   "WE'RE",       "We'Re",  "they've", "THEY'VE", "I'm",
    "I'M",     "you'll",      "YOU'LL", "You'Ll",  "he'd",    "HE'D",
    "o'clock", "rock'n'roll", "'s",     "'T",      "''",      "can’t",
};

constexpr std::array<std::string_view, 24> code{
    "def f(x):\n    return x**2\n",
    "int main() { return 0; }",
    "for (auto& [k, v] : m) {\n\tstd::cout << k;\n}",
    "if (a != b && c >= d) { x += 1; }",
    "<div class=\"row\">\n  <span>{{ name }}</span>\n</div>",
    "SELECT id, name FROM users WHERE age > 30;",
    "const f = async () => await fetch('/api/v1');",
    "$ kubectl get pods -n default -o json | jq '.items[]'",
    "x = [1, 2, 3]; y = {'a': 1}",
    "#include <vector>\n#define N 1024\n",
    "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
    "    // comment with trailing spaces   ",
    "\"quoted\\\"string\" + 'single' + `tick`",
    "a_b_c = snake_case + camelCase + PascalCase + SCREAMING_CASE",
    "path/to/file.txt C:\\Windows\\System32",
    "https://example.com/a?b=c&d=e#f",
    "user@example.org",
    "0x1F 0b1010 1e-9 3.14159 -42 +7",
    "@@ -1,4 +1,5 @@\n-old\n+new\n",
    "{\"key\": [true, false, null], \"n\": 1.5e10}",
    "λx.λy.x",
    "/* ... */ /** doc */",
    "  \t indented\n\t\tmore",
    "!!!???...,,,;;;:::---___",
};

constexpr std::array<std::string_view, 24> cjk{
    "你好，世界！",
    "机器学习模型的推理性能",
    "東京都",
    "こんにちは",
    "カタカナ",
    "ひらがなとカタカナ",
    "한국어 텍스트",
    "안녕하세요",
    "中文，标点。",
    "「引用」",
    "繁體中文",
    "日本語の文章です。",
    "漢字かなカナ",
    "ｆｕｌｌｗｉｄｔｈ",
    "１２３",
    "一二三四五六七八九十",
    "𠀀𠀁",
    "龥龦",
    "㐀",
    "〇",
    "々",
    "ー",
    "・",
    "ヴ",
};

constexpr std::array<std::string_view, 20> emoji{
    "😀",
    "👍🏽",
    "👨‍👩‍👧‍👦",
    "🏳️‍🌈",
    "❤️",
    "👩🏾‍💻",
    "🇺🇸",
    "🇯🇵",
    "🤖",
    "🧑‍🚀",
    "✌🏻",
    "🙂🙃",
    "⭐",
    "1️⃣",
    "#️⃣",
    "🏴‍☠️",
    "👁‍🗨",
    "🤷‍♀️",
    "©",
    "™",
};

constexpr std::array<std::string_view, 16> rtl{
    "مرحبا بالعالم",
    "السلام عليكم",
    "שלום עולם",
    "עברית",
    "فارسی",
    "اردو",
    "العربية ١٢٣",
    "\u200Fמימין\u200F",
    "\u202Bembedded\u202C",
    "كتاب",
    "مَرْحَبًا",
    "ﷺ",
    "לְשׁוֹן",
    "\u061C",
    "ـــ",
    "١٬٢٣٤٫٥",
};

constexpr std::array<std::string_view, 16> combining{
    "e\u0301",
    "a\u0308",
    "n\u0303",
    "o\u0302\u0323",
    "\u0301",
    "Z\u0351\u0352",
    "A\u030A",
    "c\u0327",
    "i\u0307",
    "\u1E9B\u0323",
    "\u0915\u094D\u0937",
    "\u0E01\u0E34",
    "g\u0300\u0301\u0302",
    "\u00C5",
    "\u212B",
    "\u1100\u1161",
};

constexpr std::array<std::string_view, 14> spaces{
    " ",    "  ",     "   ",    "\t",     "\n",     "\n\n",     "\r\n",
    " \n ", "\u00A0", "\u3000", "\u2003", "\u200B", "        ", "\t\t \n",
};

constexpr std::array<std::string_view, 12> specials{
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<|begin_of_text|>",
    "<|eot_id|>",
    "<s>",
    "</s>",
    "<unk>",
    "<｜begin▁of▁sentence｜>",
    "<|start_header_id|>",
};

std::string digits(rng& r) {
  std::string s;
  auto n = 1 + r.below(20);
  for (std::size_t i = 0; i < n; ++i)
    s.push_back(static_cast<char>('0' + r.below(10)));
  return s;
}

std::string fragment(rng& r) {
  switch (r.below(11)) {
  case 0:
  case 1:
    return std::string{r.pick(english)};
  case 2:
    return std::string{r.pick(contractions)};
  case 3:
    return std::string{r.pick(code)};
  case 4:
    return std::string{r.pick(cjk)};
  case 5:
    return std::string{r.pick(emoji)};
  case 6:
    return std::string{r.pick(rtl)};
  case 7:
    return std::string{r.pick(combining)};
  case 8:
    return digits(r);
  case 9:
    return std::string{r.pick(spaces)};
  default:
    return r.below(4) == 0 ? std::string{r.pick(specials)}
                           : std::string{r.pick(english)};
  }
}

} // namespace

std::vector<std::string> make_corpus(std::size_t n) {
  rng r{0x746F6B656E697A65ull};
  std::vector<std::string> out;
  out.reserve(n);
  // Every fragment on its own first, so each kind is covered by itself.
  for (auto pool :
       {std::vector<std::string_view>(english.begin(), english.end()),
        std::vector<std::string_view>(contractions.begin(), contractions.end()),
        std::vector<std::string_view>(code.begin(), code.end()),
        std::vector<std::string_view>(cjk.begin(), cjk.end()),
        std::vector<std::string_view>(emoji.begin(), emoji.end()),
        std::vector<std::string_view>(rtl.begin(), rtl.end()),
        std::vector<std::string_view>(combining.begin(), combining.end()),
        std::vector<std::string_view>(spaces.begin(), spaces.end()),
        std::vector<std::string_view>(specials.begin(), specials.end())})
    for (auto s : pool)
      if (out.size() < n)
        out.emplace_back(s);
  while (out.size() < n) {
    std::string s;
    auto parts = 1 + r.below(r.below(8) == 0 ? 60 : 12);
    for (std::size_t i = 0; i < parts; ++i) {
      // Mostly space-separated, sometimes glued (no separator), sometimes
      // an odd separator, so boundaries between kinds get exercised.
      if (i > 0) {
        auto sep = r.below(10);
        if (sep < 6)
          s.push_back(' ');
        else if (sep >= 8)
          s.append(r.pick(spaces));
      }
      s += fragment(r);
    }
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace aiperf::tokenizer::test
