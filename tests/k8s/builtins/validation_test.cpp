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

} // namespace
} // namespace aiperf::k8s
