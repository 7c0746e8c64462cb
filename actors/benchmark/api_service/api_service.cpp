#include "actors/benchmark/api_service/api_service.hpp"

#include "actors/benchmark/api_service/routes.hpp"
#include "runtime/http_server/http_server.hpp"
#include "runtime/log/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <system_error>
#include <utility>

namespace aiperf::api_service {

void status_board::publish(progress p) {
  auto next = std::make_shared<const progress>(std::move(p));
  std::lock_guard<std::mutex> guard{mtx_};
  progress_ = std::move(next);
}

std::shared_ptr<const progress> status_board::snapshot() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return progress_;
}

void status_board::publish_pods(pods_status p) {
  auto next = std::make_shared<const pods_status>(std::move(p));
  std::lock_guard<std::mutex> guard{mtx_};
  pods_ = std::move(next);
}

std::shared_ptr<const pods_status> status_board::pods() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return pods_;
}

void status_board::set_finished() {
  std::lock_guard<std::mutex> guard{mtx_};
  finished_ = true;
}

bool status_board::finished() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return finished_;
}

bool status_board::request_shutdown() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (!finished_)
      return false;
    shutdown_ = true;
  }
  shutdown_cv_.notify_all();
  return true;
}

void status_board::on_cancel(std::function<void()> cancel) {
  std::lock_guard<std::mutex> guard{mtx_};
  cancel_ = std::move(cancel);
}

bool status_board::request_cancel() {
  std::function<void()> cancel;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (finished_ || !cancel_)
      return false;
    cancel = cancel_;
  }
  cancel();
  return true;
}

void status_board::force_shutdown() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    shutdown_ = true;
  }
  shutdown_cv_.notify_all();
}

bool status_board::wait_shutdown(std::chrono::steady_clock::duration timeout) {
  std::unique_lock<std::mutex> lock{mtx_};
  return shutdown_cv_.wait_for(lock, timeout, [this] { return shutdown_; });
}

void status_board::stage(raw_part p) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = std::lower_bound(
      raw_parts_.begin(), raw_parts_.end(), p.pod,
      [](const raw_part& x, const std::string& pod) { return x.pod < pod; });
  if (i != raw_parts_.end() && i->pod == p.pod)
    *i = std::move(p);
  else
    raw_parts_.insert(i, std::move(p));
}

std::vector<raw_part> status_board::raw_parts() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return raw_parts_;
}

namespace {

struct api_state {
  static inline const char* name = "api_service";

  std::shared_ptr<status_board> board;
  std::shared_ptr<http_server::server> server;

  // Joins the I/O threads (after their stop grace) on the actor's exit, so
  // the port is free once the actor is gone.
  ~api_state() {
    if (server)
      server->stop();
  }
};

api_service_actor::behavior_type
api_service(api_service_actor::stateful_pointer<api_state> self,
            std::shared_ptr<status_board> board,
            std::shared_ptr<http_server::server> server) {
  self->state.board = std::move(board);
  self->state.server = std::move(server);
  return {
      [self](progress_atom, progress& p) {
        self->state.board->publish(std::move(p));
      },
      [self](ready_atom, bool ready) { self->state.board->set_ready(ready); },
      [self](pods_atom, pods_status& p) {
        self->state.board->publish_pods(std::move(p));
      },
      [self](caf::get_atom, raw_atom) {
        return self->state.board->raw_parts();
      },
      [self](proto::stop_atom) {
        if (auto& srv = self->state.server) {
          srv->stop();
          srv.reset();
        }
        self->quit();
      },
  };
}

} // namespace

caf::expected<api_handle> spawn_api_service(caf::actor_system& sys,
                                            api_config cfg) {
  if (cfg.threads == 0)
    return make_error(benchmark::errc::invalid_config,
                      "api_service threads is 0: use at least 1 I/O thread");
  if (!cfg.raw_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cfg.raw_dir, ec);
    if (ec)
      return make_error(benchmark::errc::invalid_config,
                        "api_service raw_dir " + cfg.raw_dir.string()
                            + " cannot be created: " + ec.message()
                            + "; point it at a writable directory");
  }
  auto board = std::make_shared<status_board>();
  auto shared_cfg = std::make_shared<const api_config>(cfg);
  http_server::options opts;
  opts.host = cfg.host;
  opts.port = cfg.port;
  opts.threads = cfg.threads;
  opts.body_limit = cfg.upload_limit;
  auto server = std::make_shared<http_server::server>(
      opts, make_handler(board, std::move(shared_cfg)));
  auto started = server->start();
  if (!started) {
    // The server's own code (bind_failed, bad_config), named as ours.
    const auto& err = started.error();
    return caf::error{err.code(), err.category(),
                      caf::make_message("api_service: " + error_message(err))};
  }
  api_handle result;
  result.port = *started;
  result.board = board;
  result.actor = sys.spawn(api_service, std::move(board), std::move(server));
  log::get("api_service")
      ->info("serving on {}:{}", cfg.host, static_cast<unsigned>(result.port));
  return result;
}

} // namespace aiperf::api_service
