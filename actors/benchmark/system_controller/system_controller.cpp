#include "actors/benchmark/system_controller/system_controller.hpp"

#include "actors/benchmark/dataset_manager/dataset_manager.hpp"
#include "actors/benchmark/records_manager/records_manager.hpp"
#include "actors/benchmark/timing_manager/timing_manager.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <unistd.h>

namespace aiperf::system_controller {

using namespace proto;

namespace {

/// Checks the failed-request share while the run goes on.
using judge_atom = caf::atom_constant<caf::atom("judge")>;

using impl_actor = system_controller_actor::extend<
  caf::reacts_to<tick_atom>, caf::reacts_to<judge_atom>,
  caf::reacts_to<write_failed_atom, caf::error>,
  caf::reacts_to<records_manager::failed_threshold_atom, std::uint64_t,
                 std::uint64_t>>;

struct controller_state {
  static inline const char* name = "system_controller";
  run_plan plan;
  std::vector<worker_group_manager::io_slot> io;
  group_factory make_group;
  caf::typed_response_promise<run_result> promise;
  bool finished = false;
  bool cancel_requested = false;
  /// --failed-request-threshold was crossed during the run: the run stopped
  /// early (exit code 4, this message).
  bool aborted = false;
  std::string abort_message;
  /// The exit code of that stop: 4, or 3 when the endpoint stayed
  /// unreachable (run_plan::unreachable_timeout_ms).
  int abort_code = exit_failed_threshold;
  /// The current run of refused connections, as judge_failures last saw
  /// it: the refusals before it (its identity) and when it was first seen
  /// (steady clock ns; 0: none).
  std::uint64_t refused_before = 0;
  std::int64_t refused_since_ns = 0;
  /// judge_failures' interval: 100 ms while records arrive, doubling to 1 s
  /// while none do (an idle run waiting on a slow server stays asleep).
  std::chrono::milliseconds judge_interval{100};
  std::uint64_t judged_received = 0;
  /// An export stream failed mid-run: the run stopped early; the export's
  /// error then fails it (exit code 1).
  bool write_failed = false;
  // Services, in spawn order.
  dataset_manager::dataset_manager_actor datasets;
  records_manager_actor records;
  timing_manager_actor timing;
  worker_group_manager::worker_group_manager_actor group;
  worker_group_manager::group_handles handles;
  std::shared_ptr<const dataset::dataset> data;
  std::vector<phase_stats> phases;
  std::int64_t progress_start_ns = 0;
  /// The counters plan.on_progress was last told.
  run_progress last_progress;
  /// Said before the run and again with its result.
  std::vector<std::string> start_warnings;
};

using actor_ptr = impl_actor::stateful_pointer<controller_state>;

void shutdown_services(actor_ptr self) {
  auto& st = self->state;
  auto stop = [&](auto& h) {
    if (h) {
      self->unlink_from(h);
      self->send_exit(h, caf::exit_reason::user_shutdown);
    }
  };
  for (auto& w : st.handles.workers)
    stop(w);
  for (auto& p : st.handles.processors)
    stop(p);
  stop(st.group);
  stop(st.timing);
  stop(st.records);
  stop(st.datasets);
}

/// Tells plan.on_progress the run's state, with the last counters seen.
void report(actor_ptr self, std::string state) {
  auto& st = self->state;
  if (!st.plan.on_progress)
    return;
  st.last_progress.state = std::move(state);
  st.plan.on_progress(st.last_progress);
}

void finish(actor_ptr self, run_result result) {
  auto& st = self->state;
  if (st.finished)
    return;
  st.finished = true;
  report(self, result.exit_code == exit_ok            ? "complete"
               : st.cancel_requested || st.aborted ? "cancelled"
                                                     : "failed");
  if (st.plan.show_progress)
    std::fputs("\n", stderr);
  shutdown_services(self);
  st.promise.deliver(std::move(result));
  // Done: the timeouts of answered requests stay in the actor clock, which
  // holds this actor until they would fire; quitting ends it now.
  self->quit();
}

void fail(actor_ptr self, int code, std::string message) {
  log::get("system_controller")->error("{}", message);
  run_result r;
  r.exit_code = code;
  r.message = std::move(message);
  finish(self, std::move(r));
}

/// The error handler of a request to `service` for `what` that waited at
/// most `timeout`: the run fails (exit code 1) with the service's error, or
/// with one naming the service when it did not answer in time.
auto on_error(actor_ptr self, const char* service, const char* what,
              std::chrono::milliseconds timeout) {
  return [=](caf::error& err) {
    if (err == caf::sec::request_timeout)
      return fail(self, exit_internal,
                  error_message(benchmark::silent_service(service, what, timeout)));
    fail(self, exit_internal, std::string{service} + ": " + error_message(err));
  };
}

void export_results(actor_ptr self, std::vector<std::string> raw_parts) {
  auto& st = self->state;
  report(self, "exporting");
  run_info info;
  info.phases = st.phases;
  info.raw_parts = std::move(raw_parts);
  info.was_cancelled = st.cancel_requested || st.aborted || st.write_failed;
  if (st.plan.client_self_check)
    std::tie(info.client_warnings, info.client_self_check_json)
      = st.plan.client_self_check();
  std::uint64_t expected = 0;
  for (auto& p : st.phases)
    expected += p.sent;
  log::get("system_controller")
    ->debug("process records: expecting {}", expected);
  self->request(st.records, st.plan.timeouts.exports, process_atom::value, expected, info)
    .then(
      [=](export_outcome& out) {
        auto& st = self->state;
        run_result r;
        r.console = std::move(out.console);
        r.files = std::move(out.files);
        r.warnings = std::move(st.start_warnings);
        r.warnings.insert(r.warnings.end(), out.warnings.begin(),
                          out.warnings.end());
        auto total = out.request_count + out.error_request_count;
        if (out.error) {
          // Some exports were written (r.files), others not: exit code 1
          // with every failed file and its reason.
          r.exit_code = exit_internal;
          r.message = error_message(out.error);
        } else if (st.cancel_requested) {
          r.exit_code = exit_interrupted;
          // main prefixes "interrupted: ".
          r.message = "in-flight requests were cancelled (error code 499); "
                      "the exports are marked was_cancelled";
        } else if (st.aborted) {
          r.exit_code = st.abort_code;
          r.message = st.abort_message;
        } else if (out.request_count == 0 && out.error_request_count > 0) {
          // Every request failed: the table is all N/A, so say why.
          r.exit_code = exit_failed_threshold;
          r.message = "no request succeeded: "
                      + std::to_string(out.error_request_count) + " of "
                      + std::to_string(total) + " requests failed";
          if (!out.top_errors.empty()) {
            r.message += "; top errors:";
            for (auto& e : out.top_errors)
              r.message += "\n  " + e;
          }
        }
        finish(self, std::move(r));
      },
      on_error(self, "records_manager", "process (the exports)", st.plan.timeouts.exports));
}

/// Raw part files are closed by their processors before the export.
void finalize_processors(actor_ptr self) {
  auto& st = self->state;
  auto parts = std::make_shared<std::vector<std::string>>(
    st.handles.processors.size());
  auto pending = std::make_shared<std::size_t>(st.handles.processors.size());
  for (std::size_t i = 0; i < st.handles.processors.size(); ++i) {
    self->request(st.handles.processors[i], st.plan.timeouts.finalize, finalize_atom::value)
      .then(
        [=](std::string& path) {
          (*parts)[i] = std::move(path);
          if (--*pending == 0)
            export_results(self, std::move(*parts));
        },
        on_error(self, "record_processor", "finalize", st.plan.timeouts.finalize));
  }
}

/// Stops the run (no more credits, requests in flight cancelled, exports
/// written) with `code` and `message`.
void abort_run(actor_ptr self, int code, std::string message) {
  auto& st = self->state;
  st.aborted = true;
  st.abort_code = code;
  st.abort_message = std::move(message);
  log::get("system_controller")->error("{}; stopping", st.abort_message);
  if (st.timing)
    self->send(st.timing, cancel_atom::value);
}

} // namespace

std::string failed_threshold_message(std::uint64_t failed,
                                     std::uint64_t records, double threshold) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "aborted: %llu of the first %llu profiling requests failed "
                "(%.2f%%), above --failed-request-threshold %g (%g%%); check "
                "the server's logs",
                static_cast<unsigned long long>(failed),
                static_cast<unsigned long long>(records),
                records == 0 ? 0.0 : 100.0 * static_cast<double>(failed)
                                       / static_cast<double>(records),
                threshold, threshold * 100);
  return buf;
}

namespace {

/// Whether the endpoint counts as unreachable by `p`: a run of refused
/// connections, with no request reaching the server, has lasted
/// run_plan::unreachable_timeout_ms (then the run stops with exit code 3).
bool judge_unreachable(actor_ptr self, const records_progress& p) {
  auto& st = self->state;
  if (st.plan.unreachable_timeout_ms <= 0)
    return false;
  if (p.connection_errors_in_a_row == 0) {
    st.refused_since_ns = 0;
    return false;
  }
  auto now = self->clock().now().time_since_epoch().count();
  auto before = p.connection_errors - p.connection_errors_in_a_row;
  if (st.refused_since_ns == 0 || before != st.refused_before) {
    st.refused_before = before; // a new run of refusals
    st.refused_since_ns = now;
    return false;
  }
  auto bound_ns = st.plan.unreachable_timeout_ms * 1'000'000;
  if (now - st.refused_since_ns < bound_ns)
    return false;
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.3g",
                static_cast<double>(st.plan.unreachable_timeout_ms) / 1e3);
  abort_run(self, exit_unreachable,
            "aborted: the endpoint became unreachable: "
              + std::to_string(p.connection_errors_in_a_row)
              + " connection attempts in a row were refused over " + secs
              + " s (AIPERF_UNREACHABLE_TIMEOUT_MS) at --url " + st.plan.urls);
  return true;
}

/// Asks the records_manager for its counters every 100 ms (up to 1 s while
/// no record arrives): an endpoint unreachable for longer than
/// run_plan::unreachable_timeout_ms stops the run (abort_run). The
/// failed-request threshold is judged by the records_manager at every
/// record instead (failed_threshold_atom).
void judge_failures(actor_ptr self) {
  auto& st = self->state;
  self->request(st.records, std::chrono::seconds{5}, progress_atom::value)
    .then(
      [=](records_progress& p) {
        auto& st = self->state;
        if (st.finished || st.aborted || st.cancel_requested)
          return;
        if (judge_unreachable(self, p))
          return;
        if (p.received != st.judged_received)
          st.judge_interval = std::chrono::milliseconds{100};
        else
          st.judge_interval = std::min(2 * st.judge_interval, std::chrono::milliseconds{1000});
        st.judged_received = p.received;
        self->delayed_send(self, st.judge_interval, judge_atom::value);
      },
      [=](caf::error&) {
        if (!self->state.finished)
          self->delayed_send(self, std::chrono::milliseconds{100},
                             judge_atom::value);
      });
}

void start_run(actor_ptr self) {
  auto& st = self->state;
  log::get("system_controller")->debug("start");
  st.progress_start_ns = self->clock().now().time_since_epoch().count();
  report(self, "running");
  if (st.plan.show_progress || st.plan.on_progress)
    self->delayed_send(self, std::chrono::milliseconds{500}, tick_atom::value);
  if (st.plan.client_self_check_start)
    st.plan.client_self_check_start();
  if (st.plan.unreachable_timeout_ms > 0)
    self->send(self, judge_atom::value);
  self->request(st.timing, st.plan.timeouts.run, start_atom::value)
    .then(
      [=](std::vector<phase_stats>& phases) {
        auto& st = self->state;
        st.phases = std::move(phases);
        log::get("system_controller")->debug("credits complete");
        // The last phase's final counts, so the closing reports are exact.
        if (!st.phases.empty()) {
          auto& t = st.last_progress.timing;
          const auto& last = st.phases.back();
          t.phase = last.phase;
          t.sent = last.sent;
          t.returned = last.returned;
          t.in_flight = 0;
        }
        // Every request has ended: the idle keep-alive connections go now,
        // so the exports have the descriptors they held.
        if (self->state.plan.release_connections)
          self->state.plan.release_connections();
        finalize_processors(self);
      },
      on_error(self, "timing_manager", "start (the whole run)", st.plan.timeouts.run));
}

void configure(actor_ptr self, dataset_manager::dataset_ready& ready) {
  auto& st = self->state;
  st.data = ready.data;
  auto timing_cfg = st.plan.timing;
  timing_cfg.sessions = std::move(ready.sessions);
  if (timing_cfg.request_count == 0 && timing_cfg.duration_ns == 0
      && timing_cfg.mode != timing_mode::fixed_schedule) {
    // Bounded by --conversation-num: one pass over the conversations.
    for (auto& s : timing_cfg.sessions)
      timing_cfg.request_count += s.num_turns;
  }
  st.last_progress.timing.target = timing_cfg.request_count;
  // Register: every service of the run, counted per instance.
  st.records = records_manager::spawn_records_manager(
    self->system(), st.plan.records, caf::actor_cast<caf::actor>(self));
  st.timing = timing_manager::spawn_timing_manager(self->system());
  worker_group_manager::group_config group;
  group.worker = st.plan.worker;
  group.num_workers = st.plan.num_workers;
  group.processor = st.plan.processor;
  group.num_processors = st.plan.num_processors;
  if (st.plan.worker.export_raw)
    group.raw_part_prefix = st.plan.artifact_dir + "/profile_export_raw.part";
  group.io = st.io;
  group.data = st.data;
  group.timing = st.timing;
  group.records = st.records;
  st.group = st.make_group(self->system(), std::move(group));
  self->link_to(st.records);
  self->link_to(st.timing);
  self->link_to(st.group);
  self->request(st.group, st.plan.timeouts.registration, caf::get_atom::value)
    .then(
      [=, timing_cfg = std::move(timing_cfg)](
        worker_group_manager::group_handles& handles) mutable {
        auto& st = self->state;
        auto registered = handles.workers.size() + handles.processors.size();
        auto expected = st.plan.num_workers + st.plan.num_processors;
        if (registered != expected)
          return fail(self, exit_internal,
                      "registration: " + std::to_string(registered) + " of "
                        + std::to_string(expected)
                        + " workers and record processors came up");
        st.handles = std::move(handles);
        log::get("system_controller")
          ->debug("registered {} workers, {} record processors",
                  st.handles.workers.size(), st.handles.processors.size());
        self
          ->request(st.timing, st.plan.timeouts.control, configure_atom::value,
                    std::move(timing_cfg), st.handles.workers)
          .then(
            [=](caf::ok_atom) {
              if (self->state.cancel_requested)
                return fail(self, exit_interrupted,
                            "stopped before the first request; nothing was "
                            "exported");
              start_run(self);
            },
            on_error(self, "timing_manager", "configure", st.plan.timeouts.control));
      },
      on_error(self, "worker_group_manager", "registration (get handles)",
               st.plan.timeouts.registration));
}

/// Every 500 ms while the load runs: the timing manager's counters to
/// stderr (show_progress) and, with the records_manager's error count, to
/// plan.on_progress.
void print_progress(actor_ptr self) {
  auto& st = self->state;
  self->request(st.timing, std::chrono::seconds{5}, progress_atom::value)
    .then(
      [=](timing_progress& p) {
        auto& st = self->state;
        if (st.finished)
          return;
        auto now = self->clock().now().time_since_epoch().count();
        double secs = static_cast<double>(now - st.progress_start_ns) / 1e9;
        double rate = secs > 0 ? static_cast<double>(p.returned) / secs : 0;
        if (st.plan.on_progress) {
          st.last_progress.timing = p;
          st.last_progress.requests_per_second = rate;
          self->request(st.records, std::chrono::seconds{5}, progress_atom::value)
            .then(
              [=](records_progress& r) {
                auto& st = self->state;
                if (st.finished || st.last_progress.state != "running")
                  return;
                st.last_progress.errors = r.profiling_errors;
                st.plan.on_progress(st.last_progress);
              },
              [](caf::error&) {});
        }
        if (!st.plan.show_progress)
          return;
        std::fprintf(stderr,
                     "\r[%s] %llu/%s requests done, %llu in flight, "
                     "%.1f req/s   ",
                     to_string(p.phase),
                     static_cast<unsigned long long>(p.returned),
                     p.target == 0 ? "?" : std::to_string(p.target).c_str(),
                     static_cast<unsigned long long>(p.in_flight), rate);
        std::fflush(stderr);
      },
      [](caf::error&) {});
}

impl_actor::behavior_type
controller_impl(actor_ptr self, run_plan plan,
                std::vector<worker_group_manager::io_slot> io,
                group_factory make_group) {
  auto& st = self->state;
  st.plan = std::move(plan);
  st.io = std::move(io);
  st.make_group = make_group
                    ? std::move(make_group)
                    : group_factory{worker_group_manager::spawn_worker_group_manager};
  // A linked service that fails ends the run (exit code 1, its error).
  self->set_exit_handler([=](caf::exit_msg& msg) {
    if (!msg.reason || msg.reason == caf::exit_reason::user_shutdown)
      return;
    fail(self, exit_internal,
         "a service failed: " + error_message(msg.reason));
  });
  return {
    [=](start_atom) -> caf::result<run_result> {
      auto& st = self->state;
      st.promise = self->make_response_promise<run_result>();
      log::get("system_controller")->debug("configure");
      // Before anything is written (inputs.json): a re-used run folder
      // must not mix this run's files with an earlier run's.
      auto aside = records_manager::set_aside_previous_run(
        st.plan.artifact_dir,
        records_manager::utc_stamp(std::chrono::system_clock::now()));
      if (!aside) {
        fail(self, exit_internal, error_message(aside.error()));
        return st.promise;
      }
      if (!aside->names.empty()) {
        std::string w = st.plan.artifact_dir
                        + " held the files of an earlier run; moved them into "
                        + aside->folder.string() + ":";
        for (auto& n : aside->names)
          w += " " + n;
        log::get("system_controller")->warn("{}", w);
        st.start_warnings.push_back(std::move(w));
      }
      st.datasets = dataset_manager::spawn_dataset_manager(self->system(),
                                                           st.plan.dataset);
      self->link_to(st.datasets);
      report(self, "configuring");
      auto timeout = st.plan.timeouts.dataset;
      self->request(st.datasets, timeout, configure_atom::value)
        .then([=](dataset_manager::dataset_ready& ready) { configure(self, ready); },
              [=](caf::error& err) {
                if (err == caf::sec::request_timeout)
                  return fail(self, exit_internal,
                              error_message(benchmark::silent_service(
                                "dataset_manager", "configure (build the dataset)",
                                timeout)));
                if (is_error(err, dataset::errc::cancelled))
                  return fail(self, exit_interrupted, error_message(err));
                // Bad input files are configuration errors (exit code 2).
                fail(self, exit_config, error_message(err));
              });
      return st.promise;
    },
    [=](write_failed_atom, caf::error& err) {
      // From the records_manager: no record can be kept any more, so the
      // run stops (no more credits, requests in flight cancelled) and the
      // exports report the error.
      auto& st = self->state;
      if (st.finished || st.write_failed || st.cancel_requested || st.aborted)
        return;
      st.write_failed = true;
      log::get("system_controller")
        ->error("{}; stopping the run", error_message(err));
      if (st.timing)
        self->send(st.timing, cancel_atom::value);
    },
    [=](cancel_atom) {
      auto& st = self->state;
      if (st.cancel_requested || st.finished)
        return;
      st.cancel_requested = true;
      log::get("system_controller")
        ->warn("interrupted: stopping, cancelling in-flight requests "
               "(press Ctrl+C again to abort at once)");
      if (st.timing)
        self->send(st.timing, cancel_atom::value);
    },
    [=](records_manager::failed_threshold_atom, std::uint64_t failed,
        std::uint64_t records) {
      // From the records_manager, at the record that crossed the line: the
      // run stops as after Ctrl+C (no more credits, requests in flight
      // cancelled, the results so far exported) and exits 4.
      auto& st = self->state;
      if (st.finished || st.aborted || st.cancel_requested || st.write_failed)
        return;
      abort_run(self, exit_failed_threshold,
                failed_threshold_message(failed, records,
                                         st.plan.failed_request_threshold));
    },
    [=](judge_atom) {
      if (!self->state.finished)
        judge_failures(self);
    },
    [=](tick_atom) {
      if (self->state.finished)
        return;
      print_progress(self);
      self->delayed_send(self, std::chrono::milliseconds{500},
                         tick_atom::value);
    },
  };
}

} // namespace

system_controller_actor
spawn_system_controller(caf::actor_system& sys, run_plan plan,
                        std::vector<worker_group_manager::io_slot> io,
                        group_factory make_group) {
  return caf::actor_cast<system_controller_actor>(sys.spawn(
    controller_impl, std::move(plan), std::move(io), std::move(make_group)));
}

} // namespace aiperf::system_controller
