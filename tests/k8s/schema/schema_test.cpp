// A CRD version's schema enforced as kube-apiserver enforces it: what a CRD
// may declare, defaults, pruning, structural validation with kube-openapi's
// messages, and CEL rules with the real server's transition semantics.
#include "k8s/sim/schema/schema.hpp"
#include "proto/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace aiperf;
using namespace aiperf::k8s;

namespace {

/// A root schema whose spec is `spec` (JSON text).
json root_with_spec(const std::string& spec) {
  return json{{"type", "object"},
              {"properties", {{"spec", json::parse(spec)}}}};
}

std::shared_ptr<const sim::compiled_schema> compile_ok(const json& schema) {
  std::vector<status_cause> refusals;
  auto s = sim::compile_schema(schema, &refusals);
  EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
  return s ? *s : nullptr;
}

std::vector<std::string> refusals_of(const json& schema) {
  std::vector<status_cause> refusals;
  auto s = sim::compile_schema(schema, &refusals);
  EXPECT_FALSE(s);
  std::vector<std::string> out;
  for (const auto& c : refusals)
    out.push_back(c.field + ": " + c.message);
  return out;
}

json cr(const json& spec) {
  return {{"apiVersion", "example.com/v1"},
          {"kind", "Widget"},
          {"metadata", {{"name", "w1"}}},
          {"spec", spec}};
}

std::vector<std::string> causes(const sim::admission& a) {
  std::vector<std::string> out;
  for (const auto& c : a.causes)
    out.push_back(c.field + ": " + c.message);
  return out;
}

std::vector<std::string> admit_create(const json& schema, json spec) {
  auto s = compile_ok(schema);
  if (!s)
    return {"not compiled"};
  json object = cr(spec);
  return causes(sim::admit(*s, object, nullptr));
}

std::vector<std::string> admit_update(const json& schema, json old_spec,
                                      json spec) {
  auto s = compile_ok(schema);
  if (!s)
    return {"not compiled"};
  json old = cr(old_spec);
  auto created = sim::admit(*s, old, nullptr);
  EXPECT_TRUE(created.causes.empty());
  json object = cr(spec);
  return causes(sim::admit(*s, object, &old));
}

using strings = std::vector<std::string>;

} // namespace

TEST(schema_validation, type_errors_read_as_kube_openapi_writes_them) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "replicas": {"type": "integer"}, "ratio": {"type": "number"},
    "name": {"type": "string"}, "on": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "size": {"x-kubernetes-int-or-string": true}}})j");
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"replicas": "3"})j")),
            strings{"spec.replicas: Invalid value: \"string\": spec.replicas "
                    "in body must be of "
                    "type integer: \"string\""});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"replicas": 1.5})j")),
            strings{"spec.replicas: Invalid value: \"number\": spec.replicas "
                    "in body must be of "
                    "type integer: \"number\""});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"replicas": 2.0, "ratio": 1})j")),
      strings{});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"tags": ["a", 1]})j")),
            strings{"spec.tags[1]: Invalid value: \"integer\": spec.tags[1] in "
                    "body must be of "
                    "type string: \"integer\""});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"size": true})j")),
            strings{"spec.size: Invalid value: \"boolean\": spec.size in body "
                    "must be of type "
                    "integer,string: \"boolean\""});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"size": "50%", "on": true})j")),
      strings{});
  auto s = compile_ok(schema);
  json object = cr(json::parse(R"j({"replicas": "x"})j"));
  auto a = sim::admit(*s, object, nullptr);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].reason, "FieldValueTypeInvalid");
}

TEST(schema_validation, required_enum_bounds_lengths_patterns) {
  json schema = root_with_spec(
      R"j({"type": "object", "required": ["image"], "properties": {
    "image": {"type": "string", "minLength": 1, "maxLength": 20},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
    "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true,
              "maximum": 1, "exclusiveMaximum": true},
    "id": {"type": "string", "pattern": "^[0-9]+$"},
    "labels": {"type": "object", "minProperties": 1, "maxProperties": 2,
               "additionalProperties": {"type": "string"}},
    "items": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}}}})j");
  EXPECT_EQ(admit_create(schema, json::object()),
            strings{"spec.image: Required value"});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "", "mode": "x"})j")),
      (strings{"spec.image: Invalid value: \"\": spec.image in body should be "
               "at least 1 "
               "chars long",
               "spec.mode: Unsupported value: \"x\": supported values: \"a\", "
               "\"b\""}));
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "i", "replicas": 0})j")),
      strings{"spec.replicas: Invalid value: 0: spec.replicas in body should "
              "be greater "
              "than or equal to 1"});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "i", "replicas": 11})j")),
      strings{"spec.replicas: Invalid value: 11: spec.replicas in body should "
              "be less than "
              "or equal to 10"});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "i", "ratio": 1.0})j")),
      strings{"spec.ratio: Invalid value: 1: spec.ratio in body should be less "
              "than 1"});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "i", "ratio": 0})j")),
      strings{"spec.ratio: Invalid value: 0: spec.ratio in body should be "
              "greater than 0"});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "i", "id": "12a"})j")),
      strings{"spec.id: Invalid value: \"12a\": spec.id in body should match "
              "'^[0-9]+$'"});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "i", "labels": {}})j")),
      strings{"spec.labels: Invalid value: 0: spec.labels in body should have "
              "at least 1 "
              "properties"});
  EXPECT_EQ(
      admit_create(
          schema,
          json::parse(
              R"j({"image": "i", "labels": {"a": "1", "b": "2", "c": "3"}})j"))
          .front(),
      "spec.labels: Too many: 3: must have at most 2 items");
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "i", "items": []})j")),
      strings{"spec.items: Invalid value: 0: spec.items in body should have at "
              "least 1 "
              "items"});
  EXPECT_EQ(
      admit_create(schema,
                   json::parse(R"j({"image": "i", "items": ["a", "b", "c"]})j"))
          .front(),
      "spec.items: Too many: 3: must have at most 2 items");
  EXPECT_EQ(
      admit_create(schema,
                   json::parse(R"j({"image": "aaaaaaaaaaaaaaaaaaaaaaaaa"})j"))
          .front(),
      "spec.image: Too long: may not be more than 20 bytes");
  EXPECT_EQ(
      admit_create(schema,
                   json::parse(R"j({"image": "i", "mode": "a", "replicas": 5,
    "ratio": 0.5, "id": "42", "labels": {"a": "1"}, "items": ["x"]})j")),
      strings{});
}

TEST(schema_defaults, applied_on_create_and_update_and_nulls_dropped) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "replicas": {"type": "integer", "default": 1},
    "mode": {"type": "string", "default": "fast"},
    "note": {"type": "string"},
    "nested": {"type": "object", "default": {}, "properties": {
      "depth": {"type": "integer", "default": 3}}},
    "list": {"type": "array", "items": {"type": "object", "properties": {
      "w": {"type": "integer", "default": 7}}}}}})j");
  auto s = compile_ok(schema);
  json object = cr(
      json::parse(R"j({"mode": null, "note": null, "list": [{}, {"w": 1}]})j"));
  auto a = sim::admit(*s, object, nullptr);
  EXPECT_TRUE(a.causes.empty());
  EXPECT_EQ(object["spec"],
            json::parse(R"j({"mode": "fast", "list": [{"w": 7}, {"w": 1}],
    "replicas": 1, "nested": {"depth": 3}})j"));
  json stored = cr(json::parse(R"j({"replicas": 4})j"));
  sim::apply_defaults(*s, stored);
  EXPECT_EQ(stored["spec"]["mode"], "fast");
  EXPECT_EQ(stored["spec"]["replicas"], 4);
}

TEST(schema_pruning, unknown_fields_are_pruned_and_listed) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "known": {"type": "string"},
    "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
             "properties": {"typed": {"type": "object", "properties": {"t": {"type": "string"}}}}},
    "pod": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"spec": {"type": "object"}}}}})j");
  schema["properties"]["status"] = {{"type", "object"}};
  auto s = compile_ok(schema);
  json object
      = cr(json::parse(R"j({"known": "k", "x": 1, "list": [{"a": "1", "b": 2}],
    "free": {"anything": {"deep": true}, "typed": {"t": "1", "u": 2}},
    "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "junk": 1}})j"));
  object["status"] = {{"phase", "x"}};
  object["extra"] = 1;
  auto a = sim::admit(*s, object, nullptr);
  EXPECT_TRUE(a.causes.empty());
  EXPECT_EQ(a.unknown_fields,
            (strings{"extra", "spec.free.typed.u", "spec.list[0].b",
                     "spec.pod.junk", "spec.x", "status.phase"}));
  EXPECT_EQ(object["spec"], json::parse(R"j({"known": "k", "list": [{"a": "1"}],
    "free": {"anything": {"deep": true}, "typed": {"t": "1"}},
    "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}})j"));
  EXPECT_EQ(object["metadata"]["name"], "w1"); // root metadata is never pruned
  EXPECT_FALSE(object.contains("extra"));
}

TEST(schema_lists, sets_and_map_lists_refuse_duplicates) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    "env": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {
              "name": {"type": "string"}, "value": {"type": "string"}}}}}})j");
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"tags": ["a", "b", "a"]})j")),
            strings{"spec.tags[2]: Duplicate value: \"a\""});
  EXPECT_EQ(
      admit_create(
          schema,
          json::parse(
              R"j({"env": [{"name": "A"}, {"name": "A", "value": "x"}]})j")),
      strings{"spec.env[1]: Duplicate value: map[string]interface "
              "{}{\"name\":\"A\"}"});
  EXPECT_EQ(
      admit_create(
          schema,
          json::parse(R"j({"tags": ["a", "b"], "env": [{"name": "A"}]})j")),
      strings{});
}

TEST(schema_crd_checks, non_structural_schemas_are_refused) {
  const std::string root = "spec.validation.openAPIV3Schema";
  EXPECT_EQ(
      refusals_of(
          root_with_spec(R"j({"properties": {"a": {"type": "string"}}})j")),
      strings{root
              + ".properties[spec].type: Required value: must not be empty for "
                "specified object fields"});
  EXPECT_EQ(
      refusals_of(root_with_spec(R"j({"type": "array"})j")),
      strings{root
              + ".properties[spec].items: Required value: must be specified"});
  EXPECT_EQ(
      refusals_of(root_with_spec(
          R"j({"type": "object", "properties": {"a": {"type": "string"}},
    "additionalProperties": {"type": "string"}})j")),
      strings{root
              + ".properties[spec].additionalProperties: Forbidden: "
                "additionalProperties and properties are mutual exclusive"});
  EXPECT_EQ(
      refusals_of(json::parse(R"j({"type": "string"})j")),
      strings{
          root
          + ".type: Invalid value: \"string\": must be object at the root"});
  EXPECT_EQ(
      refusals_of(root_with_spec(R"j({"type": "object",
    "x-kubernetes-preserve-unknown-fields": false})j")),
      strings{
          root
          + ".properties[spec].x-kubernetes-preserve-unknown-fields: Invalid "
            "value: false: must be true or undefined"});
  EXPECT_EQ(refusals_of(root_with_spec(
                R"j({"type": "array", "x-kubernetes-list-type": "map",
    "items": {"type": "object", "properties": {"n": {"type": "string"}}}})j")),
            strings{root
                    + ".properties[spec].x-kubernetes-list-map-keys: Required "
                      "value: must "
                      "not be empty if x-kubernetes-list-type is map"});
  EXPECT_EQ(refusals_of(root_with_spec(R"j({"type": "object", "properties": {
    "n": {"type": "integer", "default": "x"}}})j")),
            strings{root
                    + ".properties[spec].properties[n].default: Invalid value: "
                      "\"string\": "
                      "spec.validation.openAPIV3Schema.properties[spec]."
                      "properties[n].default "
                      "in body must be of type integer: \"string\""});
  // A preserve-unknown node without a type is structural ...
  compile_ok(root_with_spec(R"j({"type": "object", "properties": {
    "blob": {"x-kubernetes-preserve-unknown-fields": true}}})j"));
}

TEST(schema_crd_checks, rules_that_do_not_compile_are_refused_naming_the_rule) {
  const std::string at = "spec.validation.openAPIV3Schema.properties[spec].x-"
                         "kubernetes-validations[0]";
  EXPECT_EQ(refusals_of(root_with_spec(
                R"j({"type": "object", "properties": {"a": {"type": "string"}},
    "x-kubernetes-validations": [{"rule": "self.x == 'y'", "message": "m"}]})j")),
            strings{at
                    + ".rule: Invalid value: "
                      "apiextensions.ValidationRule{Rule:\"self.x == 'y'\", "
                      "Message:\"m\", MessageExpression:\"\", "
                      "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
                      "FieldPath:\"\", "
                      "OptionalOldSelf:(*bool)(nil)}: compilation failed: "
                      "ERROR: <input>:1:5: "
                      "undefined field 'x'\n | self.x == 'y'\n | ....^"});
  // ... but CEL cannot see into it: a rule that selects it does not compile.
  auto blob = refusals_of(root_with_spec(R"j({"type": "object", "properties": {
    "blob": {"x-kubernetes-preserve-unknown-fields": true}},
    "x-kubernetes-validations": [{"rule": "has(oldSelf.blob) == has(self.blob)"}]})j"));
  ASSERT_EQ(blob.size(), 1u);
  EXPECT_NE(
      blob[0].find(at + ".rule: Invalid value: apiextensions.ValidationRule{"),
      std::string::npos);
  EXPECT_NE(blob[0].find("undefined field 'blob'"), std::string::npos);
  // A rule on the typeless node itself: CEL has no type to give `self`.
  EXPECT_EQ(refusals_of(root_with_spec(R"j({"type": "object", "properties": {
    "blob": {"x-kubernetes-preserve-unknown-fields": true,
             "x-kubernetes-validations": [{"rule": "has(self.x)"}]}}})j")),
            strings{"spec.validation.openAPIV3Schema.properties[spec]."
                    "properties[blob].x-kubernetes-validations: Internal "
                    "error: internal error: failed to construct type "
                    "information for x-kubernetes-validations rules: unable "
                    "to convert structural schema to CEL declarations"});
  EXPECT_EQ(refusals_of(root_with_spec(
                R"j({"type": "object", "properties": {"a": {"type": "string"}},
    "x-kubernetes-validations": [{"rule": "self.a"}]})j")),
            strings{at
                    + ".rule: Invalid value: "
                      "apiextensions.ValidationRule{Rule:\"self.a\", "
                      "Message:\"\", MessageExpression:\"\", "
                      "Reason:(*apiextensions.FieldValueErrorReason)(nil), "
                      "FieldPath:\"\", "
                      "OptionalOldSelf:(*bool)(nil)}: cel expression must "
                      "evaluate to a bool"});
  EXPECT_EQ(refusals_of(root_with_spec(R"j({"type": "object",
    "x-kubernetes-validations": [{"rule": " "}]})j")),
            strings{at + ".rule: Required value: rule is not specified"});
  EXPECT_EQ(refusals_of(
                root_with_spec(R"j({"type": "array", "items": {"type": "string",
    "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}})j")),
            strings{"spec.validation.openAPIV3Schema.properties[spec].items.x-"
                    "kubernetes-validations[0]"
                    ".rule: Invalid value: \"self == oldSelf\": oldSelf cannot "
                    "be used on the "
                    "uncorrelatable portion of the schema within "
                    "spec.validation.openAPIV3Schema.properties[spec]"});
  std::vector<status_cause> refusals;
  auto versioned = sim::compile_schema(
      root_with_spec(
          R"j({"type": "object", "x-kubernetes-validations": [{"rule": "self.q"}]})j"),
      &refusals, "spec.versions[1].schema.openAPIV3Schema");
  ASSERT_FALSE(versioned);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].field, "spec.versions[1].schema.openAPIV3Schema."
                               "properties[spec].x-kubernetes-validations[0]"
                               ".rule");
  EXPECT_EQ(refusals[0].reason, "FieldValueInvalid");
}

TEST(schema_cel, a_failed_rule_reads_like_the_api_server) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "image": {"type": "string"}, "replicas": {"type": "integer"}},
    "x-kubernetes-validations": [
      {"rule": "!has(self.replicas) || self.replicas < 5", "message": "too many"},
      {"rule": "self.image != 'bad'"},
      {"rule": "self.image != 'worse'", "messageExpression": "'image ' + self.image + ' refused'"},
      {"rule": "self.image != 'hidden'", "reason": "FieldValueForbidden", "fieldPath": ".image",
       "message": "not this one"}]})j");
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "ok", "replicas": 9})j")),
      strings{"spec: Invalid value: \"object\": too many"});
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"image": "bad"})j")),
      strings{
          "spec: Invalid value: \"object\": failed rule: self.image != 'bad'"});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"image": "worse"})j")),
            strings{"spec: Invalid value: \"object\": image worse refused"});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"image": "hidden"})j")),
            strings{"spec.image: Forbidden: not this one"});
  // A missing field is an evaluation error, reported, never a crash.
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"replicas": 1})j")),
            (strings{"spec: Invalid value: \"object\": no such key: image "
                     "evaluating rule: "
                     "self.image != 'bad'",
                     "spec: Invalid value: \"object\": no such key: image "
                     "evaluating rule: "
                     "self.image != 'worse'",
                     "spec: Invalid value: \"object\": no such key: image "
                     "evaluating rule: not "
                     "this one"}));
}

TEST(schema_cel, rules_run_on_every_element_and_entry) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "ports": {"type": "array", "items": {"type": "integer",
              "x-kubernetes-validations": [{"rule": "self > 1024", "message": "privileged"}]}},
    "limits": {"type": "object", "additionalProperties": {"type": "string",
               "x-kubernetes-validations": [{"rule": "self.endsWith('Mi')", "message": "Mi only"}]}}}})j");
  EXPECT_EQ(
      admit_create(
          schema,
          json::parse(R"j({"ports": [8080, 80], "limits": {"mem": "1Gi"}})j")),
      (strings{"spec.ports[1]: Invalid value: \"integer\": privileged",
               "spec.limits[mem]: Invalid value: \"string\": Mi only"}));
}

TEST(schema_cel, blocking_errors_keep_rules_from_running) {
  json schema = root_with_spec(
      R"j({"type": "object", "properties": {"n": {"type": "integer"}},
    "x-kubernetes-validations": [{"rule": "false", "message": "never"}]})j");
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"n": "x"})j")),
            (strings{"spec.n: Invalid value: \"string\": spec.n in body must "
                     "be of type integer: "
                     "\"string\"",
                     "<nil>: Invalid value: \"null\": some validation rules "
                     "were not checked "
                     "because the object was invalid; correct the existing "
                     "errors to complete "
                     "validation"}));
}

TEST(schema_cel, transition_rules_follow_the_api_server) {
  // `self == oldSelf` on the optional field itself: adding the field does
  // not run it (no old value), so the add is accepted; a change is refused.
  json on_field = root_with_spec(R"j({"type": "object", "properties": {
    "x": {"type": "string", "x-kubernetes-validations": [
      {"rule": "self == oldSelf", "message": "x is immutable"}]}}})j");
  EXPECT_EQ(
      admit_update(on_field, json::object(), json::parse(R"j({"x": "a"})j")),
      strings{});
  EXPECT_EQ(
      admit_update(on_field, json::parse(R"j({"x": "a"})j"), json::object()),
      strings{});
  EXPECT_EQ(admit_update(on_field, json::parse(R"j({"x": "a"})j"),
                         json::parse(R"j({"x": "b"})j")),
            strings{"spec.x: Invalid value: \"string\": x is immutable"});
  EXPECT_EQ(admit_create(on_field, json::parse(R"j({"x": "a"})j")),
            strings{}); // skipped on create

  // The parent's presence-safe rule refuses adding, removing and changing.
  json on_parent = root_with_spec(
      R"j({"type": "object", "properties": {"x": {"type": "string"}},
    "x-kubernetes-validations": [{"rule":
      "has(oldSelf.x) == has(self.x) && (!has(self.x) || oldSelf.x == self.x)",
      "message": "spec.x is immutable after creation"}]})j");
  const strings refused{
      "spec: Invalid value: \"object\": spec.x is immutable after creation"};
  EXPECT_EQ(
      admit_update(on_parent, json::object(), json::parse(R"j({"x": "a"})j")),
      refused);
  EXPECT_EQ(
      admit_update(on_parent, json::parse(R"j({"x": "a"})j"), json::object()),
      refused);
  EXPECT_EQ(admit_update(on_parent, json::parse(R"j({"x": "a"})j"),
                         json::parse(R"j({"x": "b"})j")),
            refused);
  EXPECT_EQ(admit_update(on_parent, json::parse(R"j({"x": "a"})j"),
                         json::parse(R"j({"x": "a"})j")),
            strings{});
  EXPECT_EQ(admit_create(on_parent, json::parse(R"j({"x": "a"})j")), strings{});

  // optionalOldSelf runs the rule on create too, with oldSelf none.
  json optional = root_with_spec(
      R"j({"type": "object", "properties": {"x": {"type": "string"}},
    "x-kubernetes-validations": [{"rule":
      "!oldSelf.hasValue() ? self.x == 'initial' : true", "optionalOldSelf": true,
      "message": "start at initial"}]})j");
  EXPECT_EQ(admit_create(optional, json::parse(R"j({"x": "other"})j")),
            strings{"spec: Invalid value: \"object\": start at initial"});
  EXPECT_EQ(admit_create(optional, json::parse(R"j({"x": "initial"})j")),
            strings{});
}

TEST(schema_cel, map_list_items_correlate_by_key) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "env": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
      "items": {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}, "value": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self.value == oldSelf.value",
                                      "message": "value is fixed"}]}}}})j");
  EXPECT_EQ(
      admit_update(schema,
                   json::parse(R"j({"env": [{"name": "A", "value": "1"}]})j"),
                   json::parse(R"j({"env": [{"name": "B", "value": "2"},
                                                 {"name": "A", "value": "1"}]})j")),
      strings{});
  EXPECT_EQ(
      admit_update(schema,
                   json::parse(R"j({"env": [{"name": "A", "value": "1"}]})j"),
                   json::parse(R"j({"env": [{"name": "A", "value": "9"}]})j")),
      strings{"spec.env[0]: Invalid value: \"object\": value is fixed"});
}

TEST(schema_ratcheting, unchanged_invalid_values_pass_an_update) {
  json loose = root_with_spec(
      R"j({"type": "object", "properties": {"n": {"type": "integer"}}})j");
  json strict = root_with_spec(R"j({"type": "object", "properties": {
    "n": {"type": "integer", "maximum": 5}, "m": {"type": "integer"}},
    "x-kubernetes-validations": [{"rule": "!has(self.n) || self.n < 5", "message": "n < 5"}]})j");
  auto old_schema = compile_ok(loose);
  auto new_schema = compile_ok(strict);
  json old = cr(json::parse(R"j({"n": 9})j"));
  ASSERT_TRUE(sim::admit(*old_schema, old, nullptr).causes.empty());
  // The stored n=9 broke no rule when written; the schema tightened since.
  json same = cr(json::parse(R"j({"n": 9})j"));
  auto unchanged = sim::admit(*new_schema, same, &old);
  EXPECT_TRUE(unchanged.causes.empty());
  EXPECT_EQ(unchanged.warnings,
            strings{"spec: Invalid value: \"object\": n < 5"});
  json changed = cr(json::parse(R"j({"n": 8})j"));
  EXPECT_EQ(causes(sim::admit(*new_schema, changed, &old)),
            (strings{"spec.n: Invalid value: 8: spec.n in body should be less "
                     "than or equal to 5",
                     "spec: Invalid value: \"object\": n < 5"}));
}

TEST(schema_crd_checks, a_rule_field_path_must_name_a_declared_field) {
  EXPECT_EQ(refusals_of(root_with_spec(R"j({"type": "object", "properties": {
    "a": {"type": "string"}}, "x-kubernetes-validations": [
      {"rule": "true", "fieldPath": ".b"}]})j")),
            strings{"spec.validation.openAPIV3Schema.properties[spec].x-"
                    "kubernetes-validations[0]"
                    ".fieldPath: Invalid value: \".b\": must be a valid path"});
  compile_ok(root_with_spec(R"j({"type": "object", "properties": {
    "a": {"type": "string"}, "m": {"type": "object", "additionalProperties": {"type": "string"}}},
    "x-kubernetes-validations": [{"rule": "true", "fieldPath": ".a"},
                                 {"rule": "true", "fieldPath": ".m['k']"}]})j"));
}

TEST(schema_validation, a_crd_may_restrict_metadata_name) {
  json schema = root_with_spec(R"j({"type": "object"})j");
  schema["properties"]["metadata"] = json::parse(
      R"j({"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}})j");
  auto s = compile_ok(schema);
  ASSERT_TRUE(s);
  json object = cr(json::object());
  object["metadata"]["name"] = "widget";
  EXPECT_EQ(causes(sim::admit(*s, object, nullptr)),
            strings{"metadata.name: Too long: may not be more than 3 bytes"});
  EXPECT_EQ(
      refusals_of(
          json::parse(R"j({"type": "object", "properties": {"metadata": {
    "type": "object", "properties": {"labels": {"type": "object"}}}}})j")),
      strings{
          "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: "
          "must not "
          "specify anything other than name and generateName, but metadata is "
          "implicitly specified"});
}

TEST(schema_validation, string_formats_the_api_server_keeps_are_checked) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "at": {"type": "string", "format": "date-time"},
    "day": {"type": "string", "format": "date"},
    "id": {"type": "string", "format": "uuid"},
    "n": {"type": "integer", "format": "int32"}}})j");
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"at": "2026-12-02T10:00:00Z",
    "day": "2026-12-02", "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "n": 9999999999})j")),
            strings{}); // int32 is not a format the API server checks
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"at": "yesterday"})j")),
            strings{"spec.at: Invalid value: \"yesterday\": spec.at in body "
                    "must be of type "
                    "date-time: \"yesterday\""});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"id": "x"})j")),
            strings{"spec.id: Invalid value: \"x\": spec.id in body must be of "
                    "type uuid: \"x\""});
}

TEST(schema_pruning,
     a_preserving_status_keeps_undeclared_fields_and_checks_declared_ones) {
  json schema = root_with_spec(R"j({"type": "object"})j");
  schema["properties"]["status"] = json::parse(R"j({"type": "object",
    "x-kubernetes-preserve-unknown-fields": true, "properties": {
      "phase": {"type": "string", "enum": ["Pending", "Running"]},
      "workers": {"type": "object", "properties": {"ready": {"type": "integer", "format": "int32"}}}}})j");
  auto s = compile_ok(schema);
  ASSERT_TRUE(s);
  json object = cr(json::object());
  object["status"] = json::parse(
      R"j({"phase": "Running", "controllerFailure": "timing-manager: worker floor breached",
         "resultsExported": true, "workers": {"ready": 3, "extra": 1}})j");
  auto a = sim::admit(*s, object, nullptr);
  EXPECT_TRUE(a.causes.empty());
  EXPECT_EQ(a.unknown_fields,
            strings{"status.workers.extra"}); // declared nodes still prune
  EXPECT_EQ(object["status"]["controllerFailure"],
            "timing-manager: worker floor breached");
  object["status"]["phase"] = "Lost";
  EXPECT_EQ(causes(sim::admit(*s, object, nullptr)),
            strings{"status.phase: Unsupported value: \"Lost\": supported "
                    "values: \"Pending\", "
                    "\"Running\""});
}

TEST(schema_validation, int_or_string_quantities_with_a_pattern) {
  json schema = root_with_spec(
      R"j({"type": "object", "properties": {"limits": {"type": "object",
    "additionalProperties": {"anyOf": [{"type": "integer"}, {"type": "string"}],
      "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
      "x-kubernetes-int-or-string": true}}}})j");
  EXPECT_EQ(admit_create(
                schema,
                json::parse(R"j({"limits": {"cpu": 2, "memory": "512Mi"}})j")),
            strings{});
  auto bad = admit_create(schema,
                          json::parse(R"j({"limits": {"memory": "lots"}})j"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("spec.limits.memory: Invalid value: \"lots\": "
                         "spec.limits.memory in body "
                         "should match '^(\\+|-)?",
                         0),
            0u);
}

TEST(schema_validation, junctors_restrict_values_as_kube_openapi_does) {
  json schema = root_with_spec(R"j({"type": "object", "properties": {
    "mode": {"type": "string", "anyOf": [{"enum": ["a", "b"]}, {"pattern": "^x-"}]},
    "pick": {"type": "object", "properties": {"p": {"type": "string"}, "q": {"type": "string"}},
             "oneOf": [{"required": ["p"]}, {"required": ["q"]}]},
    "size": {"x-kubernetes-int-or-string": true,
             "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]},
    "name": {"type": "string", "not": {"enum": ["admin"]}}}})j");
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"mode": "x-1", "pick": {"p": "1"},
    "size": "1Gi", "name": "bob"})j")),
      strings{});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"mode": "c"})j")),
            (strings{"<nil>: Invalid value: \"\": \"spec.mode\" must validate "
                     "at least one schema "
                     "(anyOf)",
                     "spec.mode: Unsupported value: \"c\": supported values: "
                     "\"a\", \"b\""}));
  EXPECT_EQ(
      admit_create(schema, json::parse(R"j({"pick": {"p": "1", "q": "2"}})j")),
      strings{"<nil>: Invalid value: \"\": \"spec.pick\" must validate one and "
              "only one "
              "schema (oneOf). Found 2 valid alternatives"});
  EXPECT_EQ(admit_create(schema, json::parse(R"j({"name": "admin"})j")),
            strings{"<nil>: Invalid value: \"\": \"spec.name\" must not "
                    "validate the schema (not)"});
  EXPECT_EQ(refusals_of(root_with_spec(
                R"j({"type": "object", "anyOf": [{"type": "object"}]})j")),
            strings{"spec.validation.openAPIV3Schema.properties[spec].anyOf[0]."
                    "type: Forbidden: "
                    "must be empty to be structural"});
}
