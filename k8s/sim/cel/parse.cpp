// CEL's grammar (google/cel-spec doc/langdef.md, "Syntax"), parsed by
// recursive descent. Token positions follow cel-go: an operator's error is
// reported at the operator, a call's at its '(', a selection's at its '.'.
#include "k8s/sim/cel/ast.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <string>

namespace aiperf::k8s::cel {
namespace {

enum class tok : std::uint8_t {
  end,
  ident,
  int_lit,
  uint_lit,
  double_lit,
  string_lit,
  bytes_lit,
  punct, // operators and brackets; text holds the spelling
  error,
};

struct token {
  tok kind = tok::end;
  std::size_t pos = 0;
  std::string text; // ident name, punctuation, or a literal's decoded value
  std::int64_t int_value = 0;
  std::uint64_t uint_value = 0;
  double double_value = 0;
};

const std::set<std::string, std::less<>> reserved_words
    = {"as",        "break",  "const",  "continue", "else", "for",
       "function",  "if",     "import", "let",      "loop", "package",
       "namespace", "return", "var",    "void",     "while"};

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class lexer {
public:
  lexer(std::string_view src, std::vector<problem>& problems)
      : src_(src), problems_(problems) {}

  token next() {
    skip_space();
    token t;
    t.pos = i_;
    if (i_ >= src_.size()) {
      t.kind = tok::end;
      return t;
    }
    char c = src_[i_];
    // String and bytes literals with their prefixes.
    if (c == '"' || c == '\''
        || ((c == 'r' || c == 'R' || c == 'b' || c == 'B')
            && starts_string(i_))) {
      return lex_string(t);
    }
    if (is_ident_start(c)) {
      std::size_t start = i_;
      while (i_ < src_.size()
             && (is_ident_start(src_[i_]) || is_digit(src_[i_])))
        ++i_;
      t.kind = tok::ident;
      t.text = std::string{src_.substr(start, i_ - start)};
      return t;
    }
    if (is_digit(c)
        || (c == '.' && i_ + 1 < src_.size() && is_digit(src_[i_ + 1])))
      return lex_number(t);
    static const char* const two[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (const char* op : two) {
      if (src_.substr(i_, 2) == op) {
        i_ += 2;
        t.kind = tok::punct;
        t.text = op;
        return t;
      }
    }
    if (std::string_view{"+-*/%!<>?:.,()[]{}"}.find(c)
        != std::string_view::npos) {
      ++i_;
      t.kind = tok::punct;
      t.text = std::string(1, c);
      return t;
    }
    problems_.push_back(
        {i_,
         std::string{"Syntax error: token recognition error at: '"} + c + "'"});
    ++i_;
    t.kind = tok::error;
    return t;
  }

private:
  void skip_space() {
    while (i_ < src_.size()) {
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++i_;
      } else if (c == '/' && i_ + 1 < src_.size() && src_[i_ + 1] == '/') {
        while (i_ < src_.size() && src_[i_] != '\n')
          ++i_;
      } else {
        break;
      }
    }
  }

  bool starts_string(std::size_t at) const {
    // r"..", b"..", rb"..", br"..".
    std::size_t j = at;
    int prefixes = 0;
    while (j < src_.size() && prefixes < 2
           && (src_[j] == 'r' || src_[j] == 'R' || src_[j] == 'b'
               || src_[j] == 'B')) {
      ++j;
      ++prefixes;
    }
    return j < src_.size() && (src_[j] == '"' || src_[j] == '\'');
  }

  token lex_string(token t) {
    bool raw = false;
    bool bytes = false;
    while (src_[i_] != '"' && src_[i_] != '\'') {
      char p = src_[i_++];
      if (p == 'r' || p == 'R')
        raw = true;
      else
        bytes = true;
    }
    char q = src_[i_];
    bool triple = src_.substr(i_, 3) == std::string(3, q);
    i_ += triple ? 3 : 1;
    std::string out;
    for (;;) {
      if (i_ >= src_.size()) {
        problems_.push_back(
            {t.pos, "Syntax error: token recognition error at: '"
                        + std::string{src_.substr(t.pos)} + "'"});
        t.kind = tok::error;
        return t;
      }
      char c = src_[i_];
      if (triple ? src_.substr(i_, 3) == std::string(3, q) : c == q) {
        i_ += triple ? 3 : 1;
        break;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        problems_.push_back(
            {t.pos, "Syntax error: token recognition error at: '"
                        + std::string{src_.substr(t.pos, i_ - t.pos)} + "'"});
        t.kind = tok::error;
        return t;
      }
      if (c == '\\' && !raw) {
        if (!escape(out, bytes)) {
          problems_.push_back({t.pos, "Syntax error: invalid escape sequence"});
          t.kind = tok::error;
          return t;
        }
        continue;
      }
      out += c;
      ++i_;
    }
    t.kind = bytes ? tok::bytes_lit : tok::string_lit;
    t.text = std::move(out);
    return t;
  }

  bool escape(std::string& out, bool bytes) {
    ++i_; // the backslash
    if (i_ >= src_.size())
      return false;
    char c = src_[i_++];
    switch (c) {
    case 'a':
      out += '\a';
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'v':
      out += '\v';
      return true;
    case '\\':
    case '?':
    case '"':
    case '\'':
    case '`':
      out += c;
      return true;
    case 'x':
    case 'X':
    case 'u':
    case 'U': {
      int n = (c == 'x' || c == 'X') ? 2 : (c == 'u' ? 4 : 8);
      std::uint32_t v = 0;
      for (int k = 0; k < n; ++k) {
        if (i_ >= src_.size() || !is_hex(src_[i_]))
          return false;
        char h = src_[i_++];
        v = v * 16
            + static_cast<std::uint32_t>(is_digit(h) ? h - '0'
                                                     : (h | 0x20) - 'a' + 10);
      }
      if (n == 2 && bytes)
        out += static_cast<char>(v);
      else
        append_utf8(out, v);
      return true;
    }
    default:
      if (c >= '0' && c <= '3') {
        std::uint32_t v = static_cast<std::uint32_t>(c - '0');
        for (int k = 0; k < 2; ++k) {
          if (i_ >= src_.size() || src_[i_] < '0' || src_[i_] > '7')
            return false;
          v = v * 8 + static_cast<std::uint32_t>(src_[i_++] - '0');
        }
        if (bytes)
          out += static_cast<char>(v);
        else
          append_utf8(out, v);
        return true;
      }
      return false;
    }
  }

  token lex_number(token t) {
    std::size_t start = i_;
    if (src_[i_] == '0' && i_ + 1 < src_.size()
        && (src_[i_ + 1] == 'x' || src_[i_ + 1] == 'X')) {
      i_ += 2;
      std::size_t digits = i_;
      while (i_ < src_.size() && is_hex(src_[i_]))
        ++i_;
      std::uint64_t v = 0;
      auto [p, ec]
          = std::from_chars(src_.data() + digits, src_.data() + i_, v, 16);
      (void)p;
      return finish_integer(t, start, v, ec != std::errc{});
    }
    while (i_ < src_.size() && is_digit(src_[i_]))
      ++i_;
    bool is_double = false;
    if (i_ + 1 < src_.size() && src_[i_] == '.' && is_digit(src_[i_ + 1])) {
      is_double = true;
      ++i_;
      while (i_ < src_.size() && is_digit(src_[i_]))
        ++i_;
    }
    if (i_ < src_.size() && (src_[i_] == 'e' || src_[i_] == 'E')) {
      std::size_t save = i_;
      ++i_;
      if (i_ < src_.size() && (src_[i_] == '+' || src_[i_] == '-'))
        ++i_;
      if (i_ < src_.size() && is_digit(src_[i_])) {
        is_double = true;
        while (i_ < src_.size() && is_digit(src_[i_]))
          ++i_;
      } else {
        i_ = save;
      }
    }
    if (is_double) {
      t.kind = tok::double_lit;
      t.double_value = std::strtod(
          std::string{src_.substr(start, i_ - start)}.c_str(), nullptr);
      t.text = std::string{src_.substr(start, i_ - start)};
      return t;
    }
    std::uint64_t v = 0;
    auto [p, ec]
        = std::from_chars(src_.data() + start, src_.data() + i_, v, 10);
    (void)p;
    return finish_integer(t, start, v, ec != std::errc{});
  }

  token finish_integer(token t, std::size_t start, std::uint64_t v,
                       bool overflow) {
    bool is_uint = i_ < src_.size() && (src_[i_] == 'u' || src_[i_] == 'U');
    if (is_uint)
      ++i_;
    t.text = std::string{src_.substr(start, i_ - start)};
    if (overflow) {
      problems_.push_back(
          {t.pos,
           "invalid " + std::string{is_uint ? "uint" : "int"} + " literal"});
      t.kind = tok::error;
      return t;
    }
    t.kind = is_uint ? tok::uint_lit : tok::int_lit;
    t.uint_value = v;
    return t;
  }

  std::string_view src_;
  std::vector<problem>& problems_;
  std::size_t i_ = 0;
};

class parser {
public:
  parser(std::string_view src, std::vector<problem>& problems)
      : lex_(src, problems), problems_(problems) {
    advance();
  }

  node_ptr parse_all() {
    auto e = expr();
    if (cur_.kind != tok::end && problems_.empty())
      error_here("Syntax error: mismatched input '" + spelling()
                 + "' expecting <EOF>");
    if (!problems_.empty())
      return nullptr;
    return e;
  }

private:
  void advance() { cur_ = lex_.next(); }

  bool is(std::string_view p) const {
    return cur_.kind == tok::punct && cur_.text == p;
  }

  std::string spelling() const {
    switch (cur_.kind) {
    case tok::end:
      return "<EOF>";
    case tok::string_lit:
      return "'" + cur_.text + "'";
    case tok::double_lit:
    case tok::int_lit:
    case tok::uint_lit:
      return cur_.text;
    default:
      return cur_.text;
    }
  }

  void error_here(std::string message) {
    if (problems_.empty() || problems_.back().pos != cur_.pos)
      problems_.push_back({cur_.pos, std::move(message)});
  }

  bool expect(std::string_view p) {
    if (is(p)) {
      advance();
      return true;
    }
    error_here("Syntax error: mismatched input '" + spelling() + "' expecting '"
               + std::string{p} + "'");
    return false;
  }

  static node_ptr make(node_kind k, std::size_t pos, std::string name = {}) {
    auto n = std::make_unique<node>();
    n->kind = k;
    n->pos = pos;
    n->name = std::move(name);
    return n;
  }

  static node_ptr call(std::string fn, std::size_t pos, node_ptr a,
                       node_ptr b = nullptr, node_ptr c = nullptr) {
    auto n = make(node_kind::call, pos, std::move(fn));
    n->args.push_back(std::move(a));
    if (b)
      n->args.push_back(std::move(b));
    if (c)
      n->args.push_back(std::move(c));
    return n;
  }

  node_ptr expr() {
    // cel-go's parser refuses deeper nesting (its default recursion limit).
    if (++depth_ > 250) {
      error_here("expression recursion limit exceeded: 250");
      --depth_;
      return make(node_kind::literal, cur_.pos);
    }
    auto e = ternary();
    --depth_;
    return e;
  }

  node_ptr ternary() {
    auto cond = conditional_or();
    if (is("?")) {
      std::size_t pos = cur_.pos;
      advance();
      auto yes = conditional_or();
      if (!expect(":"))
        return cond;
      auto no = expr();
      return call("_?_:_", pos, std::move(cond), std::move(yes), std::move(no));
    }
    return cond;
  }

  node_ptr conditional_or() {
    auto lhs = conditional_and();
    while (is("||")) {
      std::size_t pos = cur_.pos;
      advance();
      lhs = call("_||_", pos, std::move(lhs), conditional_and());
    }
    return lhs;
  }

  node_ptr conditional_and() {
    auto lhs = relation();
    while (is("&&")) {
      std::size_t pos = cur_.pos;
      advance();
      lhs = call("_&&_", pos, std::move(lhs), relation());
    }
    return lhs;
  }

  node_ptr relation() {
    auto lhs = addition();
    for (;;) {
      std::string fn;
      if (is("<"))
        fn = "_<_";
      else if (is("<="))
        fn = "_<=_";
      else if (is(">"))
        fn = "_>_";
      else if (is(">="))
        fn = "_>=_";
      else if (is("=="))
        fn = "_==_";
      else if (is("!="))
        fn = "_!=_";
      else if (cur_.kind == tok::ident && cur_.text == "in")
        fn = "@in";
      else
        break;
      std::size_t pos = cur_.pos;
      advance();
      lhs = call(fn, pos, std::move(lhs), addition());
    }
    return lhs;
  }

  node_ptr addition() {
    auto lhs = multiplication();
    while (is("+") || is("-")) {
      std::string fn = is("+") ? "_+_" : "_-_";
      std::size_t pos = cur_.pos;
      advance();
      lhs = call(fn, pos, std::move(lhs), multiplication());
    }
    return lhs;
  }

  node_ptr multiplication() {
    auto lhs = unary();
    while (is("*") || is("/") || is("%")) {
      std::string fn = is("*") ? "_*_" : (is("/") ? "_/_" : "_%_");
      std::size_t pos = cur_.pos;
      advance();
      lhs = call(fn, pos, std::move(lhs), unary());
    }
    return lhs;
  }

  node_ptr unary() {
    if (depth_ > 250) {
      error_here("expression recursion limit exceeded: 250");
      return make(node_kind::literal, cur_.pos);
    }
    ++depth_;
    auto e = unary_inner();
    --depth_;
    return e;
  }

  node_ptr unary_inner() {
    if (is("!")) {
      std::size_t pos = cur_.pos;
      advance();
      return call("!_", pos, unary());
    }
    if (is("-")) {
      std::size_t pos = cur_.pos;
      advance();
      // A negative literal is one literal (so the smallest int parses).
      if (cur_.kind == tok::int_lit) {
        auto lit = make(node_kind::literal, pos);
        lit->lit = literal_kind::integer;
        if (cur_.uint_value > 9223372036854775808ull) {
          error_here("invalid int literal");
        } else {
          lit->int_value = cur_.uint_value == 9223372036854775808ull
                               ? INT64_MIN
                               : -static_cast<std::int64_t>(cur_.uint_value);
        }
        advance();
        return member_suffix(std::move(lit));
      }
      if (cur_.kind == tok::double_lit) {
        auto lit = make(node_kind::literal, pos);
        lit->lit = literal_kind::number;
        lit->double_value = -cur_.double_value;
        advance();
        return member_suffix(std::move(lit));
      }
      return call("-_", pos, unary());
    }
    return member_suffix(primary());
  }

  std::vector<node_ptr> expr_list(std::string_view close) {
    std::vector<node_ptr> out;
    if (is(close))
      return out;
    for (;;) {
      out.push_back(expr());
      if (!is(","))
        break;
      advance();
      if (is(close))
        break; // trailing comma
    }
    return out;
  }

  node_ptr member_suffix(node_ptr operand) {
    for (;;) {
      if (!operand)
        return operand;
      if (is(".")) {
        std::size_t dot = cur_.pos;
        advance();
        if (cur_.kind != tok::ident) {
          error_here("Syntax error: mismatched input '" + spelling()
                     + "' expecting IDENTIFIER");
          return operand;
        }
        std::string field = cur_.text;
        advance();
        if (is("(")) {
          std::size_t open = cur_.pos;
          advance();
          auto args = expr_list(")");
          expect(")");
          operand
              = member_call(std::move(operand), field, open, std::move(args));
        } else {
          auto sel = make(node_kind::select, dot, field);
          sel->args.push_back(std::move(operand));
          operand = std::move(sel);
        }
      } else if (is("[")) {
        std::size_t open = cur_.pos;
        advance();
        auto index = expr();
        expect("]");
        operand = call("_[_]", open, std::move(operand), std::move(index));
      } else {
        return operand;
      }
    }
  }

  node_ptr member_call(node_ptr target, const std::string& fn, std::size_t pos,
                       std::vector<node_ptr> args) {
    static const std::set<std::string, std::less<>> macros
        = {"all", "exists", "exists_one", "map", "filter"};
    if (macros.count(fn) && !args.empty()) {
      bool arity_ok = fn == "map" ? (args.size() == 2 || args.size() == 3)
                                  : args.size() == 2;
      if (arity_ok) {
        if (args[0]->kind != node_kind::ident) {
          problems_.push_back({args[0]->pos, "argument must be a simple name"});
          return target;
        }
        auto c = make(node_kind::comprehension, pos, fn);
        c->var = args[0]->name;
        c->args.push_back(std::move(target));
        for (std::size_t k = 1; k < args.size(); ++k)
          c->args.push_back(std::move(args[k]));
        return c;
      }
    }
    auto n = make(node_kind::call, pos, fn);
    n->has_target = true;
    n->args.push_back(std::move(target));
    for (auto& a : args)
      n->args.push_back(std::move(a));
    return n;
  }

  node_ptr primary() {
    token t = cur_;
    switch (t.kind) {
    case tok::int_lit:
    case tok::uint_lit: {
      advance();
      auto lit = make(node_kind::literal, t.pos);
      if (t.kind == tok::uint_lit) {
        lit->lit = literal_kind::uint;
        lit->uint_value = t.uint_value;
      } else {
        if (t.uint_value > static_cast<std::uint64_t>(INT64_MAX)) {
          problems_.push_back({t.pos, "invalid int literal"});
          return lit;
        }
        lit->lit = literal_kind::integer;
        lit->int_value = static_cast<std::int64_t>(t.uint_value);
      }
      return lit;
    }
    case tok::double_lit: {
      advance();
      auto lit = make(node_kind::literal, t.pos);
      lit->lit = literal_kind::number;
      lit->double_value = t.double_value;
      return lit;
    }
    case tok::string_lit:
    case tok::bytes_lit: {
      advance();
      auto lit = make(node_kind::literal, t.pos);
      lit->lit = t.kind == tok::string_lit ? literal_kind::string
                                           : literal_kind::bytes;
      lit->string_value = t.text;
      return lit;
    }
    case tok::ident: {
      if (t.text == "true" || t.text == "false") {
        advance();
        auto lit = make(node_kind::literal, t.pos);
        lit->lit = literal_kind::boolean;
        lit->bool_value = t.text == "true";
        return lit;
      }
      if (t.text == "null") {
        advance();
        return make(node_kind::literal, t.pos);
      }
      if (t.text == "in" || reserved_words.count(t.text)) {
        problems_.push_back({t.pos, "reserved identifier: " + t.text});
        advance();
        return make(node_kind::ident, t.pos, t.text);
      }
      advance();
      if (is("(")) {
        std::size_t open = cur_.pos;
        advance();
        auto args = expr_list(")");
        expect(")");
        if (t.text == "has") {
          if (args.size() != 1 || args[0]->kind != node_kind::select) {
            problems_.push_back({args.empty() ? open : args[0]->pos,
                                 "invalid argument to has() macro"});
            return make(node_kind::literal, t.pos);
          }
          auto sel = std::move(args[0]);
          auto p = make(node_kind::presence, open, sel->name);
          p->args.push_back(std::move(sel->args[0]));
          return p;
        }
        auto n = make(node_kind::call, open, t.text);
        n->args = std::move(args);
        return n;
      }
      return make(node_kind::ident, t.pos, t.text);
    }
    case tok::punct:
      if (t.text == "(") {
        advance();
        auto e = expr();
        expect(")");
        return e;
      }
      if (t.text == "[") {
        advance();
        auto n = make(node_kind::list, t.pos);
        n->args = expr_list("]");
        expect("]");
        return n;
      }
      if (t.text == "{") {
        advance();
        auto n = make(node_kind::map, t.pos);
        while (!is("}")) {
          n->args.push_back(expr());
          if (!expect(":"))
            return n;
          n->args.push_back(expr());
          if (!is(","))
            break;
          advance();
        }
        expect("}");
        return n;
      }
      [[fallthrough]];
    default:
      error_here(
          "Syntax error: mismatched input '" + spelling()
          + "' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
            "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}");
      if (t.kind != tok::end)
        advance();
      return make(node_kind::literal, t.pos);
    }
  }

  lexer lex_;
  std::vector<problem>& problems_;
  token cur_;
  int depth_ = 0;
};

} // namespace

node_ptr parse(std::string_view source, std::vector<problem>& problems) {
  parser p{source, problems};
  return p.parse_all();
}

std::string display_problems(std::string_view source,
                             std::vector<problem> problems) {
  std::stable_sort(
      problems.begin(), problems.end(),
      [](const problem& a, const problem& b) { return a.pos < b.pos; });
  std::string out;
  for (const auto& is : problems) {
    // Line (1-based) and column (code points, 0-based) of the offset.
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t k = 0; k < is.pos && k < source.size(); ++k) {
      if (source[k] == '\n') {
        ++line;
        line_start = k + 1;
      }
    }
    std::size_t line_end = source.find('\n', line_start);
    if (line_end == std::string_view::npos)
      line_end = source.size();
    std::string snippet{source.substr(line_start, line_end - line_start)};
    std::size_t column = 0;
    std::string dots;
    for (std::size_t k = line_start; k < is.pos && k < line_end; ++k) {
      auto c = static_cast<unsigned char>(source[k]);
      if ((c & 0xC0) == 0x80)
        continue; // continuation byte
      ++column;
      dots += c >= 0x80 ? "\xEF\xBC\x8E"
                        : "."; // cel-go's wide dot for wide runes
    }
    if (!out.empty())
      out += '\n';
    out += "ERROR: <input>:" + std::to_string(line) + ":"
           + std::to_string(column + 1) + ": " + is.message;
    std::replace(snippet.begin(), snippet.end(), '\t', ' ');
    out += "\n | " + snippet + "\n | " + dots + "^";
  }
  return out;
}

} // namespace aiperf::k8s::cel
