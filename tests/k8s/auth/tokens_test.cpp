#include "k8s/sim/auth/tokens.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s::sim::auth {
namespace {

TEST(k8s_sim_auth_tokens, the_username_of_a_service_account) {
  EXPECT_EQ(service_account_username("bench", "default"),
            "system:serviceaccount:bench:default");
}

} // namespace
} // namespace aiperf::k8s::sim::auth
