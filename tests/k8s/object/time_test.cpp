#include "k8s/object/time.hpp"

#include <gtest/gtest.h>

using namespace aiperf::k8s;

TEST(time, formats) {
  EXPECT_EQ(format_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_time(1795948047), "2026-11-29T10:27:27Z");
  EXPECT_EQ(format_micro_time(1795948047'580491000),
            "2026-11-29T10:27:27.580491Z");
}

TEST(time, parses_both_formats_and_offsets) {
  EXPECT_EQ(*parse_time("2026-11-29T10:27:27Z"), 1795948047'000000000);
  EXPECT_EQ(*parse_time("2026-11-29T10:27:27.580491Z"), 1795948047'580491000);
  EXPECT_EQ(*parse_time("2026-11-29T11:27:27+01:00"), 1795948047'000000000);
  EXPECT_EQ(*parse_time("1969-04-25T18:22:03Z"), -21620277'000000000);
  for (auto bad :
       {"", "2026-11-29", "2026-13-29T10:27:27Z", "2026-11-29T10:27:27", "x"})
    EXPECT_FALSE(parse_time(bad)) << bad;
}
