#include "k8s/sim/auth/rbac.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s::sim::auth {
namespace {

TEST(k8s_sim_auth_rbac, rbac_kinds) {
  EXPECT_TRUE(rbac_index::is_rbac_kind("ClusterRoleBinding"));
  EXPECT_FALSE(rbac_index::is_rbac_kind("ConfigMap"));
}

} // namespace
} // namespace aiperf::k8s::sim::auth
