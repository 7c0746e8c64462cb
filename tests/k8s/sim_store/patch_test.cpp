#include "k8s/errors/errors.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/sim/store/patch.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s::sim {
namespace {

TEST(k8s_sim_patch, json_patch_applies_every_op_or_nothing) {
  json doc = {{"a", 1}, {"b", {{"c", 2}}}};
  auto ok = apply_json_patch(
      doc,
      R"([{"op":"add","path":"/d","value":3},{"op":"remove","path":"/a"}])");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, (json{{"b", {{"c", 2}}}, {"d", 3}}));
  auto failed = apply_json_patch(
      doc,
      R"([{"op":"add","path":"/d","value":3},{"op":"test","path":"/a","value":2}])");
  ASSERT_FALSE(failed);
  ASSERT_NE(status_of(failed.error()), nullptr);
  EXPECT_EQ(*status_of(failed.error()), invalid_patch_status());
  auto missing
      = apply_json_patch(doc, R"([{"op":"replace","path":"/x","value":1}])");
  ASSERT_FALSE(missing);
  EXPECT_EQ(status_of(missing.error())->code, 422);
}

TEST(k8s_sim_patch, an_undecodable_json_patch_is_400) {
  auto r = apply_json_patch(json::object(), R"({"op":"add"})");
  ASSERT_FALSE(r);
  EXPECT_EQ(status_of(r.error())->code, 400);
  EXPECT_EQ(
      status_of(r.error())->message,
      "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  r = apply_json_patch(json::object(), "not json");
  ASSERT_FALSE(r);
  EXPECT_EQ(status_of(r.error())->reason, "BadRequest");
}

TEST(k8s_sim_patch, merge_patch_removes_nulls_and_replaces_lists) {
  json doc = {{"a", {{"x", 1}, {"y", 2}}}, {"l", {1, 2}}};
  auto r = apply_merge_patch(doc, R"({"a":{"x":null,"z":3},"l":[3]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (json{{"a", {{"y", 2}, {"z", 3}}}, {"l", {3}}}));
}

TEST(k8s_sim_patch, strategic_merge_by_key_and_directives) {
  json pod = json::parse(R"({"spec":{"containers":[
    {"name":"a","image":"x","env":[{"name":"E1","value":"1"}],
     "ports":[{"containerPort":80}]},
    {"name":"b","image":"y"}],
    "volumes":[{"name":"v1"},{"name":"v2"}]},
    "metadata":{"finalizers":["f1"]}})");
  auto r = apply_strategic_merge_patch(pod, R"({"spec":{"containers":[
      {"name":"a","env":[{"name":"E2","value":"2"}],
       "ports":[{"containerPort":81}]},
      {"name":"b","$patch":"delete"},
      {"name":"c","image":"z"}],
      "volumes":[{"name":"v1","$patch":"delete"}]},
      "metadata":{"finalizers":["f2"]}})");
  ASSERT_TRUE(r);
  const auto& cs = (*r)["spec"]["containers"];
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0]["image"], "x");
  EXPECT_EQ(cs[0]["env"].size(), 2u);
  EXPECT_EQ(cs[0]["ports"].size(), 2u);
  EXPECT_EQ(cs[1]["name"], "c");
  EXPECT_EQ((*r)["spec"]["volumes"], json::parse(R"([{"name":"v2"}])"));
  EXPECT_EQ((*r)["metadata"]["finalizers"], json::parse(R"(["f1","f2"])"));
  auto removed = apply_strategic_merge_patch(
      *r, R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["f1"]}})");
  ASSERT_TRUE(removed);
  EXPECT_EQ((*removed)["metadata"]["finalizers"], json::parse(R"(["f2"])"));
  auto replaced = apply_strategic_merge_patch(
      *r, R"({"spec":{"$patch":"replace","containers":[]}})");
  ASSERT_TRUE(replaced);
  EXPECT_EQ((*replaced)["spec"], json::parse(R"({"containers":[]})"));
}

TEST(k8s_sim_patch, conditions_merge_by_type) {
  json obj = json::parse(R"({"status":{"conditions":[
    {"type":"Ready","status":"False"},{"type":"Done","status":"False"}]}})");
  auto r = strategic_merge(
      obj,
      json::parse(
          R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})"));
  EXPECT_EQ(r["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(r["status"]["conditions"][1]["type"], "Done");
}

} // namespace
} // namespace aiperf::k8s::sim
