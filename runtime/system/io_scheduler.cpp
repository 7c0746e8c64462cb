#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "runtime/system/io_scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/set_thread_name.hpp>
#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/execution_unit.hpp>
#include <caf/logger.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <deque>
#include <future>
#include <thread>

namespace aiperf::system {
namespace {

class io_coordinator;

/// What a resumed actor sees as its worker: sends to other actors land here
/// and are posted to the same io_context.
class io_execution_unit final : public caf::execution_unit {
public:
  io_execution_unit(caf::actor_system* sys, io_coordinator* parent)
    : caf::execution_unit(sys), parent_(parent) {
  }

  void exec_later(caf::resumable* ptr) override;

private:
  io_coordinator* parent_;
};

class io_coordinator final : public caf::scheduler::abstract_coordinator {
public:
  io_coordinator(caf::actor_system& sys, boost::asio::io_context& ioc)
    : abstract_coordinator(sys), ioc_(ioc), unit_(&sys, this) {
  }

  /// Takes over the reference the caller added for the scheduler.
  void enqueue(caf::resumable* ptr) override {
    if (ioc_.get_executor().running_in_this_thread()) {
      make_ready(ptr);
      return;
    }
    // Other threads (CAF's clock, the main thread): the queue belongs to
    // the I/O thread.
    boost::asio::post(ioc_, [this, ptr] {
      ready_.push_back(ptr);
      drain();
    });
  }

  caf::actor_clock& clock() noexcept override {
    return clock_;
  }

protected:
  void start() override {
    clock_thread_ = std::thread{[this] {
      caf::detail::set_thread_name("caf.clock");
      system().thread_started();
      clock_.run_dispatch_loop();
      system().thread_terminates();
    }};
    abstract_coordinator::start();
  }

  void stop() override {
    stop_actors();
    // Every actor is done by now (the actor system awaited them); let the
    // resumptions already posted (their final cleanup) run before `this`
    // goes away, and drop the logger reference CAF left in the thread's
    // thread-local storage (the actor system's destructor waits for the
    // logger's). The loop may have been stopped early: then none of it
    // runs, and the thread that held the reference is gone.
    std::promise<void> drained;
    auto fut = drained.get_future();
    post_when_idle([this, &drained] {
      caf::logger::set_current_actor_system(nullptr);
      drained.set_value();
    });
    while (fut.wait_for(std::chrono::milliseconds(50))
           != std::future_status::ready)
      if (ioc_.stopped())
        break;
    clock_.cancel_dispatch_loop();
    clock_thread_.join();
  }

private:
  /// On the I/O thread: queues `ptr` and makes sure a drain is coming —
  /// the one running now, if any: a chain of sends (completion, record,
  /// credit return, next credit) then runs in the same turn of the loop
  /// instead of one turn (a poll of every socket and everything queued
  /// behind it) per hop.
  void make_ready(caf::resumable* ptr) {
    ready_.push_back(ptr);
    if (!draining_ && posted_drains_ == 0)
      post_drain();
  }

  void post_drain() {
    ++posted_drains_;
    boost::asio::post(ioc_, [this] {
      --posted_drains_;
      drain();
    });
  }

  /// Runs up to drain_budget ready resumptions; the rest waits behind the
  /// sockets' handlers (a drain posted again).
  void drain() {
    draining_ = true;
    for (std::size_t n = 0; !ready_.empty() && n < drain_budget; ++n) {
      auto* next = ready_.front();
      ready_.pop_front();
      run(next);
    }
    draining_ = false;
    if (!ready_.empty() && posted_drains_ == 0)
      post_drain();
  }

  /// Posts `f` to run once nothing is ready and no drain is posted, so no
  /// handler that uses `this` is left behind it.
  template <class F>
  void post_when_idle(F f) {
    boost::asio::post(ioc_, [this, f = std::move(f)]() mutable {
      if (!ready_.empty() || posted_drains_ > 0) {
        post_when_idle(std::move(f));
        return;
      }
      f();
    });
  }

  void run(caf::resumable* ptr) {
    switch (ptr->resume(&unit_, max_throughput())) {
      case caf::resumable::resume_later:
        // Behind what is already ready (and, past the drain budget, behind
        // the sockets' handlers).
        enqueue(ptr);
        break;
      case caf::resumable::awaiting_message:
      case caf::resumable::done:
      case caf::resumable::shutdown_execution_unit:
        caf::intrusive_ptr_release(ptr);
        break;
    }
  }

  static constexpr std::size_t drain_budget = 32;

  boost::asio::io_context& ioc_;
  // The I/O thread's alone.
  std::deque<caf::resumable*> ready_;
  bool draining_ = false;
  /// Drains posted and not run yet.
  int posted_drains_ = 0;
  io_execution_unit unit_;
  caf::detail::thread_safe_actor_clock clock_;
  std::thread clock_thread_;
};

void io_execution_unit::exec_later(caf::resumable* ptr) {
  parent_->enqueue(ptr);
}

} // namespace

void use_io_scheduler(caf::actor_system_config& cfg,
                      boost::asio::io_context& ioc) {
  cfg.module_factories.push_back(
    [&ioc](caf::actor_system& sys) -> caf::actor_system::module* {
      return new io_coordinator(sys, ioc);
    });
}

} // namespace aiperf::system
