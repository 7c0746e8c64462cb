// Label and field selectors against kubernetes/apimachinery
// pkg/labels/selector.go and pkg/fields/selector.go: the grammar, the
// matching, and the 400 messages kube-apiserver answers.
#include "k8s/errors/errors.hpp"
#include "k8s/object/selectors.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s {
namespace {

json labels(std::initializer_list<std::pair<const char*, const char*>> kv) {
  json out = json::object();
  for (const auto& [k, v] : kv)
    out[k] = v;
  return out;
}

bool selects(std::string_view selector, const json& l) {
  auto parsed = parse_label_selector(selector);
  EXPECT_TRUE(parsed) << selector;
  return parsed && parsed->matches(l);
}

// The 400 of a selector that does not parse: its message, checked to be a
// BadRequest first.
std::string label_error(std::string_view selector) {
  auto parsed = parse_label_selector(selector);
  if (parsed)
    return "parsed";
  EXPECT_TRUE(is_error(parsed.error(), errc::invalid));
  const auto* st = status_of(parsed.error());
  if (st == nullptr)
    return "no status";
  EXPECT_EQ(st->code, 400);
  EXPECT_EQ(st->reason, "BadRequest");
  return st->message;
}

TEST(label_selector, every_operator_of_the_grammar_matches_as_upstream) {
  auto l = labels({{"app", "x"}, {"tier", "web"}, {"n", "5"}});
  EXPECT_TRUE(selects("app=x", l));
  EXPECT_TRUE(selects("app==x", l));
  EXPECT_FALSE(selects("app=y", l));
  EXPECT_TRUE(selects("tier!=db", l));
  EXPECT_TRUE(selects("missing!=db", l)); // absent key satisfies !=
  EXPECT_TRUE(selects("app in (x,y)", l));
  EXPECT_FALSE(selects("app notin (x,y)", l));
  EXPECT_TRUE(selects("missing notin (x)", l));
  EXPECT_TRUE(selects("app", l));
  EXPECT_FALSE(selects("!app", l));
  EXPECT_TRUE(selects("!missing", l));
  EXPECT_TRUE(selects("n>3", l));
  EXPECT_FALSE(selects("n<3", l));
  EXPECT_TRUE(selects("app=x,tier!=db", l)); // kubectl's app%3Dx%2Ctier%21%3Ddb
  EXPECT_FALSE(selects("app=x,tier=db", l));
  EXPECT_TRUE(selects("", l));
  EXPECT_TRUE(selects("  app = x , tier in ( web ) ", l));
  EXPECT_TRUE(selects("app=", labels({{"app", ""}})));
  EXPECT_FALSE(selects("app=", labels({})));
  EXPECT_TRUE(selects("app=x", labels({{"app", "x"}})));
  EXPECT_FALSE(selects("app=x", json{})); // no labels at all
}

TEST(label_selector, in_and_notin_are_values_inside_parentheses) {
  // "x in (foo,,baz),y,z notin ()" is upstream's own example.
  auto parsed = parse_label_selector("x in (foo,,baz),y,z notin ()");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->requirements.size(), 3u);
  EXPECT_EQ(parsed->requirements[0],
            (label_requirement{"x", label_op::in, {"", "baz", "foo"}}));
  EXPECT_EQ(parsed->requirements[1],
            (label_requirement{"y", label_op::exists, {}}));
  EXPECT_EQ(parsed->requirements[2],
            (label_requirement{"z", label_op::not_in, {""}}));
  EXPECT_TRUE(selects("k in (in,notin)", labels({{"k", "notin"}})));
}

TEST(label_selector, requirements_are_sorted_by_key) {
  auto parsed = parse_label_selector("b=1,a=2");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->requirements.at(0).key, "a");
  EXPECT_EQ(parsed->requirements.at(1).key, "b");
}

TEST(label_selector, syntax_errors_read_as_kube_apiserver_writes_them) {
  EXPECT_EQ(label_error("a=b=c"),
            "found '=', expected: ',' or 'end of string'");
  EXPECT_EQ(label_error("a=b,"), "found '', expected: identifier after ','");
  EXPECT_EQ(label_error("=a"),
            "found '=', expected: !, identifier, or 'end of string'");
  EXPECT_EQ(label_error("a b"), "unable to parse requirement: found 'b', "
                                "expected: in, notin, =, ==, !=, gt, lt");
  EXPECT_EQ(label_error("a in b"),
            "unable to parse requirement: found 'b' expected: '('");
  EXPECT_EQ(label_error("a in (b"),
            "unable to parse requirement: found '', expected: ',' or ')'");
  EXPECT_EQ(label_error("a=(b)"),
            "unable to parse requirement: found '(', expected: identifier");
  EXPECT_EQ(label_error("!a=b"), "found '=', expected: ',' or 'end of string'");
  EXPECT_EQ(label_error("a>b"),
            "unable to parse requirement: values[0]: Invalid value: \"b\": "
            "for 'Gt', 'Lt' operators, the value must be an integer");
}

TEST(label_selector, a_model_name_is_not_a_label_value) {
  EXPECT_EQ(
      label_error("model=Qwen/Qwen3-0.6B"),
      "unable to parse requirement: values[0][model]: Invalid value: "
      "\"Qwen/Qwen3-0.6B\": a valid label must be an empty string or consist "
      "of "
      "alphanumeric characters, '-', '_' or '.', and must start and end with "
      "an "
      "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
      "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
      "[A-Za-z0-9])?')");
}

TEST(label_selector, an_invalid_key_names_the_nil_path_as_go_prints_it) {
  EXPECT_EQ(label_error("-a=b"),
            "unable to parse requirement: <nil>: Invalid value: \"-a\": name "
            "part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. "
            "'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  EXPECT_EQ(label_error("/a"), "unable to parse requirement: <nil>: Invalid "
                               "value: \"/a\": prefix part must be non-empty");
}

TEST(label_selector, match_labels_and_match_expressions_from_json) {
  auto sel = label_selector_from_json(json::parse(R"({
    "matchLabels": {"app": "x"},
    "matchExpressions": [
      {"key": "tier", "operator": "In", "values": ["web", "api"]},
      {"key": "canary", "operator": "DoesNotExist"}]})"));
  ASSERT_TRUE(sel);
  EXPECT_TRUE(sel->matches(labels({{"app", "x"}, {"tier", "api"}})));
  EXPECT_FALSE(sel->matches(labels({{"app", "x"}, {"tier", "db"}})));
  EXPECT_FALSE(
      sel->matches(labels({{"app", "x"}, {"tier", "api"}, {"canary", "1"}})));
}

TEST(label_selector, a_null_selector_selects_nothing_and_an_empty_one_all) {
  auto none = label_selector_from_json(json{});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->matches(labels({{"a", "b"}})));
  auto all = label_selector_from_json(json::object());
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->matches(labels({{"a", "b"}})));
}

TEST(label_selector, prints_as_the_selector_string_of_a_scale) {
  auto sel = label_selector_from_json(json::parse(R"({
    "matchLabels": {"app": "x"},
    "matchExpressions": [
      {"key": "tier", "operator": "NotIn", "values": ["web", "api"]},
      {"key": "zone", "operator": "In", "values": ["b"]},
      {"key": "canary", "operator": "DoesNotExist"},
      {"key": "gpu", "operator": "Exists"}]})"));
  ASSERT_TRUE(sel);
  EXPECT_EQ(to_string(*sel),
            "app=x,!canary,gpu,tier notin (api,web),zone in (b)");
  auto parsed = parse_label_selector("b!=2,a>1");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(to_string(*parsed), "a>1,b!=2");
  EXPECT_EQ(to_string(*label_selector_from_json(json{})), "");
  EXPECT_EQ(to_string(*label_selector_from_json(json::object())), "");
}

TEST(label_selector, json_selectors_are_checked_like_new_requirement) {
  auto bad_op = label_selector_from_json(
      json::parse(R"({"matchExpressions":[{"key":"a","operator":"Gt"}]})"));
  ASSERT_FALSE(bad_op);
  ASSERT_NE(status_of(bad_op.error()), nullptr);
  EXPECT_EQ(status_of(bad_op.error())->message,
            "\"Gt\" is not a valid label selector operator");
  auto empty_in = label_selector_from_json(json::parse(
      R"({"matchExpressions":[{"key":"a","operator":"In","values":[]}]})"));
  ASSERT_FALSE(empty_in);
  EXPECT_EQ(status_of(empty_in.error())->message,
            "values: Invalid value: []string{}: for 'in', 'notin' operators, "
            "values set can't be empty");
}

// --- field selectors --------------------------------------------------------

const std::vector<std::string> event_fields = {"involvedObject.kind",
                                               "involvedObject.namespace",
                                               "involvedObject.name",
                                               "involvedObject.uid",
                                               "reason",
                                               "type",
                                               "metadata.namespace",
                                               "metadata.name"};

std::string field_error(std::string_view selector,
                        field_label_style style
                        = field_label_style::registered) {
  auto parsed = parse_field_selector(selector, event_fields, style);
  if (parsed)
    return "parsed";
  const auto* st = status_of(parsed.error());
  if (st == nullptr)
    return "no status";
  EXPECT_EQ(st->code, 400);
  EXPECT_EQ(st->reason, "BadRequest");
  return st->message;
}

TEST(field_selector, event_selectors_match_involved_object_and_reason) {
  auto event = json::parse(R"({
    "metadata": {"name": "e1", "namespace": "bench"},
    "involvedObject": {"kind": "Pod", "name": "p1", "uid": "u-1"},
    "reason": "BackOff", "type": "Warning"})");
  auto sel = parse_field_selector(
      "involvedObject.kind=Pod,involvedObject.name==p1,type!=Normal",
      event_fields);
  ASSERT_TRUE(sel);
  EXPECT_TRUE(sel->matches(event));
  auto other = parse_field_selector("reason=Pulled", event_fields);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->matches(event));
  // kubectl delete/wait: fieldSelector=metadata.name%3Dcm1
  auto by_name = parse_field_selector("metadata.name=e1", event_fields);
  ASSERT_TRUE(by_name);
  EXPECT_TRUE(by_name->matches(event));
  // An absent field compares as "".
  auto empty_ns
      = parse_field_selector("involvedObject.namespace=", event_fields);
  ASSERT_TRUE(empty_ns);
  EXPECT_TRUE(empty_ns->matches(event));
}

TEST(field_selector, values_unescape_backslash_comma_and_equals) {
  auto sel = parse_field_selector(R"(reason=a\,b\=c\\d)", event_fields);
  ASSERT_TRUE(sel);
  ASSERT_EQ(sel->terms.size(), 1u);
  EXPECT_EQ(sel->terms[0].value, R"(a,b=c\d)");
}

TEST(field_selector, parse_errors_read_as_upstream) {
  EXPECT_EQ(field_error("metadata.name"),
            "invalid selector: 'metadata.name'; can't understand "
            "'metadata.name'");
  EXPECT_EQ(field_error(R"(reason=a\b)"),
            "invalid field selector: invalid escape sequence: \\b");
  EXPECT_EQ(field_error("reason=a=b"),
            "invalid field selector: unescaped character in value: 61");
}

TEST(field_selector, an_unsupported_field_is_refused_in_the_types_words) {
  EXPECT_EQ(field_error("spec.x=1"), "field label not supported: spec.x");
  EXPECT_EQ(field_error("spec.x=1", field_label_style::default_conversion),
            "\"spec.x\" is not a known field selector: only "
            "\"metadata.name\", \"metadata.namespace\"");
}

TEST(field_selector, booleans_and_numbers_compare_as_printed) {
  auto node = json::parse(R"({"spec":{"unschedulable":true},"n":3})");
  EXPECT_EQ(field_value(node, "spec.unschedulable"), "true");
  EXPECT_EQ(field_value(node, "n"), "3");
  EXPECT_EQ(field_value(node, "spec.missing"), "");
}

} // namespace
} // namespace aiperf::k8s
