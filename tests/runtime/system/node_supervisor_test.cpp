#include "runtime/system/node_supervisor.hpp"

#include "tests/support/caf_gtest.hpp"

using namespace aiperf;
using namespace aiperf::system;

namespace {

enum class test_errc : uint8_t { boom = 1 };

caf::error make_error(test_errc x) {
  return {static_cast<uint8_t>(x), caf::atom("test")};
}

// A service stand-in: quits with whatever error it is sent, or normally on
// stop.
caf::behavior service(caf::event_based_actor* self) {
  return {
    [=](caf::error& reason) { self->quit(std::move(reason)); },
    [=](proto::stop_atom) { self->quit(); },
  };
}

struct supervisor_fixture : caf_gtest::fixture<> {
  node_supervisor_actor spawn_supervisor(supervision_mode mode,
                                         reaper_actor reaper = {}) {
    auto sup = sys.spawn(node_supervisor, mode, reaper);
    drain();
    return sup;
  }

  caf::actor adopt(const node_supervisor_actor& sup, std::string name) {
    auto child = sys.spawn(service);
    drain();
    self->send(sup, adopt_atom::value, child, std::move(name));
    drain();
    return child;
  }

  std::vector<std::string> children_of(const node_supervisor_actor& sup) {
    auto res = request<std::vector<std::string>>(sup, caf::get_atom::value);
    return res ? *res : std::vector<std::string>{"<no reply>"};
  }

  // Returns the reason of the next down message, if one is waiting.
  std::optional<caf::error> next_down() {
    std::optional<caf::error> reason;
    receive_now([&](caf::down_msg& m) { reason = m.reason; });
    return reason;
  }
};

} // namespace

// Verifies fail-closed: one failing child stops the supervisor with the
// child's own error, and the link takes the sibling down too.
TEST_F(supervisor_fixture, fail_closed_stops_node_with_child_error) {
  auto sup = spawn_supervisor(supervision_mode::fail_closed);
  auto bad = adopt(sup, "worker");
  auto sibling = adopt(sup, "records_manager");
  self->monitor(sup);
  self->monitor(sibling);
  self->send(bad, make_error(test_errc::boom));
  drain();
  auto sup_reason = next_down();
  auto sibling_reason = next_down();
  ASSERT_TRUE(sup_reason.has_value());
  ASSERT_TRUE(sibling_reason.has_value());
  EXPECT_EQ(*sup_reason, make_error(test_errc::boom));
  EXPECT_EQ(*sibling_reason, make_error(test_errc::boom));
  EXPECT_EQ(exit_code_for(*sup_reason), 1);
}

// Verifies reaping: the failure is reported to the reaper with the child's
// name and error; the supervisor and the other children stay up.
TEST_F(supervisor_fixture, reaping_reports_and_keeps_running) {
  auto sup = spawn_supervisor(supervision_mode::reaping,
                              caf::actor_cast<reaper_actor>(self));
  auto bad = adopt(sup, "worker-3");
  adopt(sup, "timing_manager");
  self->send(bad, make_error(test_errc::boom));
  drain();
  std::string reaped_name;
  caf::error reaped_reason;
  ASSERT_TRUE(receive_now([&](proto::reaped_atom, std::string& name,
                              caf::error& reason) {
    reaped_name = name;
    reaped_reason = reason;
  }));
  EXPECT_EQ(reaped_name, "worker-3");
  EXPECT_EQ(reaped_reason, make_error(test_errc::boom));
  EXPECT_EQ(children_of(sup), std::vector<std::string>{"timing_manager"});
}

// Verifies that a child finishing normally is forgotten without a report.
TEST_F(supervisor_fixture, normal_child_exit_is_not_a_failure) {
  auto sup = spawn_supervisor(supervision_mode::fail_closed,
                              caf::actor_cast<reaper_actor>(self));
  auto done = adopt(sup, "dataset_manager");
  adopt(sup, "worker");
  self->send(done, proto::stop_atom::value);
  drain();
  EXPECT_EQ(children_of(sup), std::vector<std::string>{"worker"});
  EXPECT_FALSE(receive_now([](proto::reaped_atom, std::string&,
                              caf::error&) {}));
}

// Verifies stop: every child is shut down and the supervisor exits
// normally, which maps to exit code 0.
TEST_F(supervisor_fixture, stop_shuts_children_down_and_exits_normally) {
  auto sup = spawn_supervisor(supervision_mode::fail_closed);
  auto a = adopt(sup, "a");
  auto b = adopt(sup, "b");
  self->monitor(a);
  self->monitor(b);
  self->monitor(sup);
  self->send(sup, proto::stop_atom::value);
  drain();
  std::vector<caf::error> reasons;
  for (int i = 0; i < 3; ++i) {
    auto r = next_down();
    ASSERT_TRUE(r.has_value());
    reasons.push_back(*r);
  }
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(),
                       caf::error{caf::exit_reason::user_shutdown}),
            2);
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), caf::error{}), 1);
  EXPECT_EQ(exit_code_for(caf::error{}), 0);
  EXPECT_EQ(exit_code_for(caf::exit_reason::user_shutdown), 0);
}

// Verifies that an exit from a non-child (the parent) takes the supervisor
// and, through the links, its children down with the same reason.
TEST_F(supervisor_fixture, parent_exit_is_a_shutdown_request) {
  auto sup = spawn_supervisor(supervision_mode::reaping);
  auto child = adopt(sup, "worker");
  self->monitor(child);
  auto parent = sys.spawn(service);
  drain();
  caf::anon_send(caf::actor_cast<caf::actor>(sup),
                 caf::exit_msg{parent.address(), make_error(test_errc::boom)});
  drain();
  auto r = next_down();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, make_error(test_errc::boom));
}
