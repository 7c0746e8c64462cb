// Object validation against kubernetes/apimachinery
// pkg/util/validation/validation.go and pkg/api/validation/objectmeta.go:
// the messages and field paths a 422 carries, quoted from upstream.
#include "k8s/object/validation.hpp"

#include <gtest/gtest.h>

#include <string>

namespace aiperf::k8s {
namespace {

const std::string subdomain_regex_error
    = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
      "characters, '-' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const std::string label_regex_error
    = "a lowercase RFC 1123 label must consist of lower case alphanumeric "
      "characters or '-', and must start and end with an alphanumeric "
      "character "
      "(e.g. 'my-name',  or '123-abc', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const std::string label_value_regex_error
    = "a valid label must be an empty string or consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric "
      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

TEST(validation, dns1123_subdomain_and_label) {
  EXPECT_TRUE(is_dns1123_subdomain("aiperf-j1.bench").empty());
  EXPECT_EQ(is_dns1123_subdomain("Upper"),
            std::vector<std::string>{subdomain_regex_error});
  EXPECT_EQ(is_dns1123_subdomain(std::string(254, 'a')),
            (std::vector<std::string>{"must be no more than 253 characters"}));
  EXPECT_TRUE(is_dns1123_label("bench").empty());
  EXPECT_EQ(is_dns1123_label("a.b"),
            std::vector<std::string>{"must not contain dots"});
  EXPECT_EQ(is_dns1123_label("-a"),
            std::vector<std::string>{label_regex_error});
  EXPECT_EQ(is_dns1123_label(std::string(64, 'a')),
            (std::vector<std::string>{"must be no more than 63 characters"}));
}

TEST(validation, a_model_name_is_not_a_label_value) {
  EXPECT_EQ(is_valid_label_value("Qwen/Qwen3-0.6B"),
            std::vector<std::string>{label_value_regex_error});
  EXPECT_TRUE(is_valid_label_value("Qwen3-0.6B").empty());
  EXPECT_TRUE(is_valid_label_value("").empty());
  EXPECT_EQ(is_valid_label_value(std::string(64, 'a')),
            (std::vector<std::string>{"must be no more than 63 characters"}));
}

TEST(validation, qualified_names_check_prefix_and_name) {
  EXPECT_TRUE(is_qualified_name("aiperf.nvidia.com/job").empty());
  EXPECT_EQ(is_qualified_name("Example.com/x"),
            std::vector<std::string>{"prefix part " + subdomain_regex_error});
  EXPECT_EQ(is_qualified_name("a/" + std::string(64, 'b')),
            (std::vector<std::string>{"name part must be no more than 63 "
                                      "characters"}));
  EXPECT_EQ(
      is_qualified_name("a/b/c"),
      (std::vector<std::string>{
          "a qualified name must consist of alphanumeric characters, '-', "
          "'_' or '.', and must start and end with an alphanumeric "
          "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
          "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
          "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
          "(e.g. 'example.com/MyName')"}));
}

TEST(validation, labels_in_metadata_carry_upstream_cause_and_message) {
  auto causes = validate_labels(json::parse(R"({"model":"Qwen/Qwen3-0.6B"})"));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].reason, "FieldValueInvalid");
  EXPECT_EQ(causes[0].field, "metadata.labels");
  EXPECT_EQ(causes[0].message,
            "Invalid value: \"Qwen/Qwen3-0.6B\": " + label_value_regex_error);
}

TEST(validation, the_422_message_composes_kind_name_and_causes) {
  auto st = invalid_status(
      "ConfigMap", "", "c1",
      validate_labels(json::parse(R"({"model":"Qwen/Qwen3-0.6B"})")));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.reason, "Invalid");
  EXPECT_EQ(st.message, "ConfigMap \"c1\" is invalid: metadata.labels: Invalid "
                        "value: \"Qwen/Qwen3-0.6B\": "
                            + label_value_regex_error);
  EXPECT_EQ(st.details.kind, "ConfigMap");
  EXPECT_EQ(st.details.name, "c1");
  auto two = invalid_status("Job", "batch", "j",
                            {field_required("spec.template.spec.containers"),
                             field_required("metadata.name", "x")});
  EXPECT_EQ(two.message, "Job.batch \"j\" is invalid: "
                         "[spec.template.spec.containers: Required value, "
                         "metadata.name: Required value: x]");
}

TEST(validation, go_quote_escapes_as_strconv_quote) {
  EXPECT_EQ(go_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(go_quote(std::string("\x01", 1)), "\"\\x01\"");
  EXPECT_EQ(go_quote("\xc3\xa9"), "\"\xc3\xa9\""); // é stays
  EXPECT_EQ(go_quote("\xff"), "\"\\xff\"");
}

TEST(validation, object_meta_requires_a_name_and_checks_the_namespace) {
  auto causes = validate_object_meta(json::object(), true,
                                     name_rule::dns1123_subdomain);
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(cause_text(causes[0]),
            "metadata.name: Required value: name or generateName is required");
  EXPECT_EQ(causes[0].reason, "FieldValueRequired");
  EXPECT_EQ(cause_text(causes[1]), "metadata.namespace: Required value");
  auto cluster
      = validate_object_meta(json::parse(R"({"name":"n1","namespace":"x"})"),
                             false, name_rule::dns1123_label);
  ASSERT_EQ(cluster.size(), 1u);
  EXPECT_EQ(cause_text(cluster[0]),
            "metadata.namespace: Forbidden: not allowed on this type");
}

TEST(validation, names_follow_the_rule_of_their_type) {
  auto meta = json::parse(R"({"name":"My_Config","namespace":"bench"})");
  auto causes = validate_object_meta(meta, true, name_rule::dns1123_subdomain);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(cause_text(causes[0]),
            "metadata.name: Invalid value: \"My_Config\": "
                + subdomain_regex_error);
  // A namespace name is a DNS-1123 label: no dots.
  EXPECT_EQ(validate_name(name_rule::dns1123_label, "a.b", false),
            std::vector<std::string>{"must not contain dots"});
  // A Service name is a DNS-1035 label: starts with a letter.
  EXPECT_EQ(
      validate_name(name_rule::dns1035_label, "1svc", false),
      std::vector<std::string>{
          "a DNS-1035 label must consist of lower case alphanumeric "
          "characters or '-', start with an alphabetic character, and end "
          "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
          "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"});
  // RBAC names are path segments.
  EXPECT_EQ(
      validate_name(name_rule::path_segment, "system:aggregate-to-edit", false),
      std::vector<std::string>{});
  EXPECT_EQ(
      validate_name(name_rule::path_segment, "a/b%", false),
      (std::vector<std::string>{"may not contain '/'", "may not contain '%'"}));
  EXPECT_EQ(validate_name(name_rule::path_segment, "..", false),
            std::vector<std::string>{"may not be '..'"});
}

TEST(validation, a_generate_name_may_end_with_a_dash) {
  EXPECT_TRUE(
      validate_name(name_rule::dns1123_subdomain, "aiperf-", true).empty());
  EXPECT_FALSE(
      validate_name(name_rule::dns1123_subdomain, "aiperf-", false).empty());
  auto causes = validate_object_meta(
      json::parse(R"({"generateName":"Bad-","name":"bad-x1","namespace":"b"})"),
      true, name_rule::dns1123_subdomain);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "metadata.generateName");
  EXPECT_EQ(causes[0].message,
            "Invalid value: \"Bad-\": " + subdomain_regex_error);
}

TEST(validation, annotations_are_limited_to_256_kib_in_total) {
  json annotations = json::object();
  annotations["a"] = std::string(256 * 1024, 'x'); // 1 + 262144 bytes
  auto causes = validate_annotations(annotations);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].reason, "FieldValueTooLong");
  EXPECT_EQ(
      cause_text(causes[0]),
      "metadata.annotations: Too long: may not be more than 262144 bytes");
  annotations["a"] = std::string(256 * 1024 - 1, 'x');
  EXPECT_TRUE(validate_annotations(annotations).empty());
  // Keys are qualified names, case aside.
  EXPECT_TRUE(
      validate_annotations(json::parse(R"({"Example.COM/Key":"v"})")).empty());
}

TEST(validation, owner_references_and_finalizers) {
  auto refs = json::parse(R"([
    {"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"u1","controller":true},
    {"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"u2","controller":true},
    {"apiVersion":"","kind":"Pod","name":"p","uid":""}])");
  auto causes = validate_owner_references(refs);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].field, "metadata.ownerReferences");
  EXPECT_NE(causes[0].message.find(
                "Only one reference can have Controller set to true. Found "
                "\"true\" in references for Job/j and Deployment/d"),
            std::string::npos);
  EXPECT_EQ(cause_text(causes[1]), "metadata.ownerReferences.apiVersion: "
                                   "Invalid value: \"\": version must not be "
                                   "empty");
  EXPECT_EQ(cause_text(causes[2]),
            "metadata.ownerReferences.uid: Invalid value: \"\": uid must not "
            "be empty");
  auto both
      = validate_finalizers(json::parse(R"(["orphan","foregroundDeletion"])"));
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(cause_text(both[0]),
            "metadata.finalizers: Invalid value: []string{\"orphan\", "
            "\"foregroundDeletion\"}: finalizer orphan and foregroundDeletion "
            "cannot be both set");
}

TEST(validation, updates_keep_identity_fields_and_need_a_resource_version) {
  auto old_meta = json::parse(
      R"({"name":"c","namespace":"b","uid":"u1","resourceVersion":"5","generation":2})");
  auto new_meta = json::parse(
      R"({"name":"c","namespace":"b","uid":"u2","generation":1})");
  auto causes = validate_object_meta_update(new_meta, old_meta);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(cause_text(causes[0]), "metadata.resourceVersion: Invalid value: "
                                   "\"\": must be specified for an update");
  EXPECT_EQ(cause_text(causes[1]),
            "metadata.generation: Invalid value: 1: must not be decremented");
  EXPECT_EQ(cause_text(causes[2]),
            "metadata.uid: Invalid value: \"u2\": field is immutable");
  auto deleting = json::parse(
      R"({"name":"c","resourceVersion":"5","deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["a.io/x"]})");
  auto added = deleting;
  added["finalizers"].push_back("b.io/y");
  auto forbidden = validate_object_meta_update(added, deleting);
  ASSERT_EQ(forbidden.size(), 1u);
  EXPECT_EQ(cause_text(forbidden[0]),
            "metadata.finalizers: Forbidden: no new finalizers can be added if "
            "the object is being deleted, found new finalizers "
            "[]string{\"b.io/y\"}");
}

TEST(validation, config_map_keys_and_the_one_mebibyte_limit) {
  auto causes = validate_config_map(json::parse(
      R"({"data":{"a b":"1","ok":"2"},"binaryData":{"ok":"AA=="}})"));
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(cause_text(causes[0]),
            "data[a b]: Invalid value: \"a b\": a valid config key must "
            "consist of alphanumeric characters, '-', '_' or '.' (e.g. "
            "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
            "validation is '[-._a-zA-Z0-9]+')");
  EXPECT_EQ(cause_text(causes[1]), "data[ok]: Invalid value: \"ok\": duplicate "
                                   "of key present in binaryData");
  json big = json::object();
  big["data"]["k"] = std::string(1024 * 1024 + 1, 'x');
  auto too_big = validate_config_map(big);
  ASSERT_EQ(too_big.size(), 1u);
  EXPECT_EQ(cause_text(too_big[0]),
            "[]: Too long: may not be more than 1048576 bytes");
  big["data"]["k"] = std::string(1024 * 1024, 'x');
  EXPECT_TRUE(validate_config_map(big).empty());
}

TEST(validation, secrets_count_decoded_bytes_and_need_their_type_keys) {
  auto tls = validate_secret(
      json::parse(R"({"type":"kubernetes.io/tls","data":{"tls.crt":"AA=="}})"));
  ASSERT_EQ(tls.size(), 1u);
  EXPECT_EQ(cause_text(tls[0]), "data[tls.key]: Required value");
  json big = json::object();
  // 1 MiB + 3 bytes decoded.
  big["data"]["k"] = std::string((1024 * 1024 + 3) / 3 * 4, 'A');
  auto too_big = validate_secret(big);
  ASSERT_EQ(too_big.size(), 1u);
  EXPECT_EQ(cause_text(too_big[0]),
            "data: Too long: may not be more than 1048576 bytes");
}

TEST(validation, a_pod_spec_needs_containers_with_name_and_image) {
  auto empty = validate_pod_spec(json::parse(
      R"({"terminationGracePeriodSeconds":30,"restartPolicy":"Always","dnsPolicy":"ClusterFirst","containers":[]})"));
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(cause_text(empty[0]), "spec.containers: Required value");
  auto spec = json::parse(R"({
    "terminationGracePeriodSeconds": 30, "restartPolicy": "Sometimes",
    "dnsPolicy": "ClusterFirst",
    "containers": [
      {"name": "main", "image": "nginx", "terminationMessagePolicy": "File",
       "imagePullPolicy": "Always"},
      {"name": "main", "terminationMessagePolicy": "File",
       "imagePullPolicy": "Always"}]})");
  auto causes = validate_pod_spec(spec, "spec.template.spec");
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(cause_text(causes[0]),
            "spec.template.spec.containers[1].image: Required value");
  EXPECT_EQ(cause_text(causes[1]),
            "spec.template.spec.containers[1].name: Duplicate value: \"main\"");
  EXPECT_EQ(causes[1].reason, "FieldValueDuplicate");
  EXPECT_EQ(cause_text(causes[2]),
            "spec.template.spec.restartPolicy: Unsupported value: "
            "\"Sometimes\": supported values: \"Always\", \"OnFailure\", "
            "\"Never\"");
  EXPECT_EQ(causes[2].reason, "FieldValueNotSupported");
}

TEST(validation, size_limits_answer_like_kube_apiserver) {
  auto body = request_entity_too_large_status();
  EXPECT_EQ(body.code, 413);
  EXPECT_EQ(body.reason, "RequestEntityTooLarge");
  EXPECT_EQ(body.message, "Request entity too large: limit is 3145728");
  auto stored = object_too_large_status();
  EXPECT_EQ(stored.code, 500);
  EXPECT_EQ(stored.reason, "");
  EXPECT_EQ(stored.message, "etcdserver: request is too large");
  EXPECT_EQ(max_stored_object_bytes, 1536 * 1024);
}

} // namespace
} // namespace aiperf::k8s
