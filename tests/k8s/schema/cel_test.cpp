// CEL as kube-apiserver evaluates it: the checker's messages (cel-go's
// rendering), values from schema-typed JSON, errors as values.
#include "k8s/sim/cel/cel.hpp"
#include "k8s/sim/cel/format.hpp"
#include "proto/error.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace aiperf;
using namespace aiperf::k8s;
using namespace aiperf::k8s::cel;

namespace {

decl_ptr scalar(decl_type::kind k) {
  auto d = std::make_shared<decl_type>();
  d->k = k;
  return d;
}

decl_ptr list_of(decl_ptr item, std::string list_type = "") {
  auto d = std::make_shared<decl_type>();
  d->k = decl_type::kind::list;
  d->element = std::move(item);
  d->list_type = std::move(list_type);
  return d;
}

decl_ptr map_of(decl_ptr value) {
  auto d = std::make_shared<decl_type>();
  d->k = decl_type::kind::map;
  d->element = std::move(value);
  return d;
}

/// An object type with the fields of a small spec.
decl_ptr spec_type() {
  auto d = std::make_shared<decl_type>();
  d->k = decl_type::kind::object;
  d->fields = {{"name", scalar(decl_type::kind::string)},
               {"replicas", scalar(decl_type::kind::integer)},
               {"ratio", scalar(decl_type::kind::number)},
               {"enabled", scalar(decl_type::kind::boolean)},
               {"workers", dyn_type()},
               {"tags", list_of(scalar(decl_type::kind::string))},
               {"set", list_of(scalar(decl_type::kind::string), "set")},
               {"labels", map_of(scalar(decl_type::kind::string))},
               {"x__dash__y", scalar(decl_type::kind::string)}};
  return d;
}

std::string compile_error(const std::string& rule) {
  auto c = compile(rule, spec_type());
  if (c)
    return "compiled";
  return error_message(c.error());
}

/// Evaluates `rule` on self (and oldSelf); "error: <message>" on failure.
std::string run(const std::string& rule, const json& self,
                const json* old = nullptr) {
  auto c = compile(rule, spec_type());
  if (!c)
    return "compile: " + error_message(c.error());
  activation a;
  a.self = &self;
  a.self_type = spec_type();
  a.old_self = old;
  auto r = evaluate(*c, a);
  if (!r)
    return "error: " + error_message(r.error());
  return r->dump();
}

const json spec = json::parse(R"({
  "name": "bench-1", "replicas": 3, "ratio": 2, "enabled": true, "workers": "10",
  "tags": ["a", "b"], "set": ["x", "y"], "labels": {"team": "perf"}, "x-y": "dash",
  "hidden": 1})");

} // namespace

TEST(cel, undefined_field_is_a_compile_error_rendered_as_cel_go) {
  EXPECT_EQ(
      compile_error("self.x == 1"),
      "ERROR: <input>:1:5: undefined field 'x'\n | self.x == 1\n | ....^");
  EXPECT_EQ(compile_error("has(self.hidden)"),
            "ERROR: <input>:1:4: undefined field 'hidden'\n | "
            "has(self.hidden)\n | ...^");
  EXPECT_EQ(
      compile_error("foo == 1"),
      "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n"
      " | foo == 1\n | ^");
  EXPECT_EQ(
      compile_error("self.name == 1"),
      "ERROR: <input>:1:11: found no matching overload for '_==_' applied to "
      "'(string, int)'\n | self.name == 1\n | ..........^");
  EXPECT_EQ(compile_error("self.labels.anything == 'x'"), "compiled");
  EXPECT_EQ(compile_error("self.workers.anything == 'x'"), "compiled"); // dyn
  EXPECT_NE(compile_error("self.name =="), "compiled");
}

TEST(cel, literals_and_operators) {
  json self = spec;
  EXPECT_EQ(run("1 + 2 * 3 == 7", self), "true");
  EXPECT_EQ(run("-9223372036854775808 < 0", self), "true");
  EXPECT_EQ(run("9223372036854775807 + 1 > 0", self),
            "error: integer overflow");
  EXPECT_EQ(run("1 / 0 == 0", self), "error: division by zero");
  EXPECT_EQ(run("5 % 0 == 0", self), "error: modulus by zero");
  EXPECT_EQ(run("1u + 2u == 3u", self), "true");
  EXPECT_EQ(run("2.5 > 2", self), "true"); // numeric comparison across types
  EXPECT_EQ(run("'ab' + \"c\" == 'abc'", self), "true");
  EXPECT_EQ(run("r'\\d' == '\\\\d'", self), "true");
  EXPECT_EQ(run("'\\u00e9' == 'é' && size('é') == 1", self), "true");
  EXPECT_EQ(run("[1, 2] + [3] == [1, 2, 3]", self), "true");
  EXPECT_EQ(run("{'a': 1} == {'a': 1} && {'a': 1} != {'a': 2}", self), "true");
  EXPECT_EQ(run("null == null", self), "true");
  EXPECT_EQ(run("true ? 'yes' : 'no'", self), "\"yes\"");
  EXPECT_EQ(run("2 in [1, 2] && 'a' in {'a': 1} && !(3 in [1, 2])", self),
            "true");
  EXPECT_EQ(run("type(1) == int && type('') == string", self), "true");
}

TEST(cel, fields_of_self_take_their_schema_types) {
  json self = spec;
  EXPECT_EQ(run("self.replicas == 3 && self.ratio == 2.0", self), "true");
  EXPECT_EQ(run("type(self.ratio) == double", self),
            "true"); // 2 in a number field
  EXPECT_EQ(
      run("self.name.startsWith('bench') && self.name.endsWith('-1')", self),
      "true");
  EXPECT_EQ(
      run("self.name.contains('ch-') && self.name.matches('^b[a-z]+-[0-9]$')",
          self),
      "true");
  EXPECT_EQ(run("size(self.tags) == 2 && self.tags.size() == 2 && self.tags[1] "
                "== 'b'",
                self),
            "true");
  EXPECT_EQ(
      run("self.labels.team == 'perf' && self.labels['team'] == 'perf'", self),
      "true");
  EXPECT_EQ(run("self.x__dash__y == 'dash'", self), "true");
  EXPECT_EQ(run("int(self.workers) == 10", self), "true");
  EXPECT_EQ(
      run("string(self.replicas) == '3' && double(self.replicas) == 3.0", self),
      "true");
  EXPECT_EQ(
      run("self.tags.all(t, t.size() == 1) && self.tags.exists(t, t == 'b')",
          self),
      "true");
  EXPECT_EQ(run("self.tags.exists_one(t, t == 'a')", self), "true");
  EXPECT_EQ(run("self.tags.map(t, t + '!') == ['a!', 'b!']", self), "true");
  EXPECT_EQ(run("self.tags.filter(t, t != 'a') == ['b']", self), "true");
  EXPECT_EQ(run("self.labels.all(k, k == 'team')", self), "true");
  EXPECT_EQ(run("size(self) == 10", self),
            "true"); // counts every key, as values.go
}

TEST(cel, missing_fields_are_errors_not_crashes) {
  json self = json::parse(R"({"name": "n"})");
  EXPECT_EQ(run("self.replicas > 1", self), "error: no such key: replicas");
  EXPECT_EQ(run("has(self.replicas)", self), "false");
  EXPECT_EQ(run("!has(self.replicas) || self.replicas > 1", self), "true");
  EXPECT_EQ(run("self.tags[0] == 'a'", json::parse(R"({"tags": []})")),
            "error: index '0' out of range in list size '0'");
  EXPECT_EQ(run("self.labels['none'] == 'a'", json::parse(R"({"labels": {}})")),
            "error: no such key: none");
  // Errors are absorbed by && and || the way CEL defines them, either side.
  EXPECT_EQ(run("self.replicas > 1 && false", self), "false");
  EXPECT_EQ(run("true || self.replicas > 1", self), "true");
  EXPECT_EQ(run("self.replicas > 1 || true", self), "true");
  EXPECT_EQ(run("int('50%') == 1", json::parse(R"({"workers": "50%"})")),
            "error: strconv.ParseInt: parsing \"50%\": invalid syntax");
}

TEST(cel, old_self_and_deep_equality) {
  json old = spec;
  json now = spec;
  EXPECT_EQ(run("self == oldSelf", now, &old), "true");
  now["tags"] = json::array({"b", "a"});
  EXPECT_EQ(run("self.tags == oldSelf.tags", now, &old), "false");
  now["set"] = json::array({"y", "x"});
  EXPECT_EQ(run("self.set == oldSelf.set", now, &old),
            "true"); // sets ignore order
  now = spec;
  now["hidden"] = 2; // not visible to CEL, still compared (raw)
  EXPECT_EQ(run("self == oldSelf", now, &old), "false");
}

TEST(cel, optional_old_self) {
  auto c = compile("!oldSelf.hasValue() || oldSelf.value().name == self.name",
                   spec_type(), {true, true});
  ASSERT_TRUE(c) << error_message(c.error());
  EXPECT_TRUE(c->uses_old_self);
  json self = spec;
  activation a{&self, spec_type(), nullptr, true};
  EXPECT_EQ(evaluate(*c, a)->dump(), "true");
  json old = spec;
  old["name"] = "other";
  a.old_self = &old;
  EXPECT_EQ(evaluate(*c, a)->dump(), "false");
}

TEST(cel, go_formatting) {
  EXPECT_EQ(go_format_g(1), "1");
  EXPECT_EQ(go_format_g(0.5), "0.5");
  EXPECT_EQ(go_format_g(86400), "86400");
  EXPECT_EQ(go_format_g(1e6), "1e+06");
  EXPECT_EQ(go_format_g(1234567), "1.234567e+06");
  EXPECT_EQ(go_format_g(0.0001), "0.0001");
  EXPECT_EQ(go_format_g(0.00001), "1e-05");
  EXPECT_EQ(go_format_g(-2.5), "-2.5");
  EXPECT_EQ(go_quote("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(go_quote("é"), "\"é\"");
}

TEST(cel, property_names_escape_as_upstream) {
  EXPECT_EQ(escape_property_name("x-y"), "x__dash__y");
  EXPECT_EQ(escape_property_name("a.b/c"), "a__dot__b__slash__c");
  EXPECT_EQ(escape_property_name("a__b"), "a__underscores__b");
  EXPECT_EQ(escape_property_name("namespace"), "__namespace__");
  EXPECT_EQ(escape_property_name("1x"), "");
  EXPECT_EQ(escape_property_name("a b"), "");
  EXPECT_EQ(unescape_property_name("x__dash__y"), "x-y");
  EXPECT_EQ(unescape_property_name("__namespace__"), "namespace");
}

TEST(cel, deep_nesting_is_refused_not_a_crash) {
  std::string deep(5000, '(');
  deep += "true";
  deep += std::string(5000, ')');
  EXPECT_NE(
      compile_error(deep).find("expression recursion limit exceeded: 250"),
      std::string::npos);
  EXPECT_NE(
      compile_error(std::string(5000, '!') + "true").find("recursion limit"),
      std::string::npos);
}

TEST(cel, string_functions_check_their_arguments) {
  EXPECT_EQ(
      compile_error("self.name.startsWith(1)"),
      "ERROR: <input>:1:21: found no matching overload for 'startsWith' "
      "applied to "
      "'string.(int)'\n | self.name.startsWith(1)\n | ....................^");
  EXPECT_EQ(compile_error("self.replicas.contains('a')"),
            "ERROR: <input>:1:23: found no matching overload for 'contains' "
            "applied to "
            "'int.(string)'\n | self.replicas.contains('a')\n | "
            "......................^");
  json self = spec;
  EXPECT_EQ(run("self.name.matches('(?i)^BENCH')", self), "true");
}

TEST(cel, a_keyword_property_is_selected_by_its_name) {
  auto meta = std::make_shared<decl_type>();
  meta->k = decl_type::kind::object;
  meta->fields = {{"__namespace__", scalar(decl_type::kind::string)}};
  auto c
      = compile("self.namespace == 'bench' && self.__namespace__ == 'bench' && "
                "has(self.namespace)",
                meta);
  ASSERT_TRUE(c) << error_message(c.error());
  json self = json::parse(R"({"namespace": "bench"})");
  activation a{&self, meta, nullptr, false};
  EXPECT_EQ(evaluate(*c, a)->dump(), "true");
}
