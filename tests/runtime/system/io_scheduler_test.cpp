// The I/O-thread scheduler on a real io_context and thread: actors run as
// the thread's handlers, messages between actors, requests, delayed messages
// and long mailboxes (resumed in slices) all get through, and the actor
// system shuts down — each test ends with its destructor, which once waited
// forever for a logger reference CAF had left on the I/O thread.
#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "runtime/http/client.hpp"
#include "runtime/system/io_scheduler.hpp"
#include "runtime/system/node.hpp"

#include <caf/all.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

using namespace aiperf::system;

namespace {

/// One I/O thread; outlives the actor system declared after it.
struct io_thread {
  aiperf::http::io_pool pool{1};
  boost::asio::io_context& ioc = pool.context(0);

  bool is_current() { return ioc.get_executor().running_in_this_thread(); }
};

caf::actor_system_config config_for(io_thread& io) {
  caf::actor_system_config cfg;
  EXPECT_TRUE(apply(cfg, node_options{"io-thread", 0, &io.ioc}));
  return cfg;
}

} // namespace

TEST(io_scheduler, actors_run_on_the_io_thread) {
  io_thread io;
  auto cfg = config_for(io);
  caf::actor_system sys{cfg};
  // The relay spawns the adder on the I/O thread (CAF then leaves its
  // logger in that thread's thread-local storage) and sends to it through
  // the execution unit.
  auto relay = sys.spawn([&io](caf::event_based_actor* self) -> caf::behavior {
    return {[=, &io](int x) {
      auto adder = self->spawn([&io]() -> caf::behavior {
        return {[&io](int y) { return std::make_tuple(y + 1, io.is_current()); }};
      });
      return self->delegate(adder, x * 10);
    }};
  });
  caf::scoped_actor self{sys};
  int value = 0;
  bool on_io = false;
  self->request(relay, caf::infinite, 4).receive(
    [&](int v, bool on) {
      value = v;
      on_io = on;
    },
    [&](caf::error& err) { ADD_FAILURE() << sys.render(err); });
  EXPECT_EQ(value, 41);
  EXPECT_TRUE(on_io);
}

TEST(io_scheduler, delayed_messages_arrive) {
  io_thread io;
  auto cfg = config_for(io);
  caf::actor_system sys{cfg};
  using tick = caf::atom_constant<caf::atom("tick")>;
  auto timer = sys.spawn([](caf::event_based_actor* self) -> caf::behavior {
    auto waiting = std::make_shared<caf::response_promise>();
    return {
      [=](int) {
        *waiting = self->make_response_promise();
        self->delayed_send(self, std::chrono::milliseconds{1}, tick::value);
        return *waiting;
      },
      [=](tick) { waiting->deliver(std::string{"fired"}); },
    };
  });
  caf::scoped_actor self{sys};
  std::string got;
  self->request(timer, caf::infinite, 0).receive(
    [&](std::string& s) { got = s; },
    [&](caf::error& err) { ADD_FAILURE() << sys.render(err); });
  EXPECT_EQ(got, "fired");
}

TEST(io_scheduler, a_long_mailbox_is_resumed_in_slices_and_in_order) {
  io_thread io;
  auto cfg = config_for(io);
  caf::actor_system sys{cfg};
  // More messages than one resumption takes (scheduler.max-throughput).
  constexpr int messages = 1000;
  auto counter = sys.spawn([]() -> caf::behavior {
    auto next = std::make_shared<int>(0);
    auto out_of_order = std::make_shared<int>(0);
    return {
      [=](int x) {
        if (x != (*next)++)
          ++*out_of_order;
      },
      [=](std::string&) { return std::make_tuple(*next, *out_of_order); },
    };
  });
  caf::scoped_actor self{sys};
  for (int i = 0; i < messages; ++i)
    self->send(counter, i);
  int seen = -1;
  int out_of_order = -1;
  self->request(counter, caf::infinite, std::string{"count"}).receive(
    [&](int n, int bad) {
      seen = n;
      out_of_order = bad;
    },
    [&](caf::error& err) { ADD_FAILURE() << sys.render(err); });
  EXPECT_EQ(seen, messages);
  EXPECT_EQ(out_of_order, 0);
}

// A chain of sends between actors (a completion, its record, the credit
// return, the next credit) runs in one turn of the loop, not in one turn
// — a poll of every socket and everything queued behind it — per hop; a
// long chain still yields to the sockets after a bounded number of hops.
TEST(io_scheduler, a_chain_of_sends_runs_in_one_turn_of_the_loop_up_to_a_bound) {
  io_thread io;
  auto cfg = config_for(io);
  caf::actor_system sys{cfg};
  // I/O thread only, like the actor that counts.
  int hops = 0;
  std::promise<int> finished;
  auto chain = sys.spawn([&](caf::event_based_actor* self) -> caf::behavior {
    return {[=, &hops, &finished](int left) {
      ++hops;
      if (left > 0)
        self->send(self, left - 1);
      else
        finished.set_value(hops);
    }};
  });
  // Runs a chain of `length` hops started from the I/O thread; returns how
  // many had run when a handler posted right behind its start ran, and
  // how many ran in all.
  auto run_chain = [&](int length) {
    std::promise<int> one_turn;
    finished = {};
    boost::asio::post(io.ioc, [&, length] {
      hops = 0;
      caf::anon_send(chain, length - 1);
      boost::asio::post(io.ioc, [&] { one_turn.set_value(hops); });
    });
    auto seen = one_turn.get_future().get();
    return std::make_pair(seen, finished.get_future().get());
  };
  EXPECT_EQ(run_chain(10), std::make_pair(10, 10));
  auto [first_turn, all] = run_chain(1000);
  EXPECT_GE(first_turn, 10);
  EXPECT_LT(first_turn, 1000) << "the chain never let the loop poll";
  EXPECT_EQ(all, 1000);
}

// More actors made ready at once than one turn runs, while another drain
// is already queued: every actor runs exactly once (a drain continued
// behind another once took from an empty queue and crashed at random).
TEST(io_scheduler, a_fan_out_past_the_budget_runs_every_actor_once) {
  io_thread io;
  auto cfg = config_for(io);
  caf::actor_system sys{cfg};
  constexpr int fan = 100;
  int runs = 0; // I/O thread only
  std::promise<int> all_ran;
  auto count = [&](caf::event_based_actor*) -> caf::behavior {
    return {[&](int) {
      if (++runs == fan + 1)
        all_ran.set_value(runs);
    }};
  };
  std::vector<caf::actor> targets;
  for (int i = 0; i < fan; ++i)
    targets.push_back(sys.spawn(count));
  auto lone = sys.spawn(count);
  auto fan_out = sys.spawn([&](caf::event_based_actor* self) -> caf::behavior {
    return {[=, &targets](int) {
      for (auto& t : targets)
        self->send(t, 1);
    }};
  });
  boost::asio::post(io.ioc, [&] {
    caf::anon_send(fan_out, 1); // fans out inside its drain
    caf::anon_send(lone, 1);    // queued behind it
  });
  auto ran = all_ran.get_future();
  ASSERT_EQ(ran.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(ran.get(), fan + 1);
}
