#include "k8s/sim/schema/schema.hpp"

#include <gtest/gtest.h>

using namespace aiperf::k8s;

TEST(schema, compiles_an_object_schema) {
  auto s = sim::compile_schema(json::parse(R"({"type":"object"})"), nullptr);
  ASSERT_TRUE(s);
}
