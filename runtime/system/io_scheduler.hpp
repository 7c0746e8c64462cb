// A CAF scheduler that runs every cooperatively scheduled actor as a handler
// on one asio io_context — an HTTP I/O thread — instead of on threads of its
// own.
//
// Why: on a 2-core machine the load generator's I/O thread and CAF's worker
// thread share the one core the server leaves free. Every finished request
// then crosses threads twice (completion to the worker actor, the next
// request back to the I/O thread): futex wake-ups, context switches and
// epoll interrupts that cost more than the actors' own work. Running the
// actors where the completions happen makes both hand-offs a queue push.
// The price: an actor that runs long holds the I/O thread's sends and reads
// back, so an actor resumes for at most `scheduler.max-throughput` messages
// at a time, and a turn of the loop runs at most a bounded number of
// resumptions (a chain of sends between actors, e.g. a finished request's
// record, credit return and next credit) before the sockets' handlers run.
//
// Delayed messages and timeouts keep CAF's clock thread; detached actors
// keep their own threads. The io_context must run (and keep running) on its
// thread for the actor system's whole lifetime, including its destructor.
#pragma once

#include <caf/fwd.hpp>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace aiperf::system {

/// Installs the I/O-thread scheduler into `cfg` (a module factory that
/// replaces CAF's own scheduler). `ioc` must outlive the actor system.
void use_io_scheduler(caf::actor_system_config& cfg,
                      boost::asio::io_context& ioc);

} // namespace aiperf::system
