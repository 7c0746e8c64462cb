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
    boost::asio::post(ioc_, [this, ptr] { run(ptr); });
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
    boost::asio::post(ioc_, [&drained] {
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
  void run(caf::resumable* ptr) {
    switch (ptr->resume(&unit_, max_throughput())) {
      case caf::resumable::resume_later:
        // Back of the queue: the sockets' handlers run before its next turn.
        enqueue(ptr);
        break;
      case caf::resumable::awaiting_message:
      case caf::resumable::done:
      case caf::resumable::shutdown_execution_unit:
        caf::intrusive_ptr_release(ptr);
        break;
    }
  }

  boost::asio::io_context& ioc_;
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
