#include "runtime/log/log.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>
#include <system_error>

namespace aiperf::log {

namespace {

std::mutex mtx;
spdlog::level::level_enum current_level = spdlog::level::info;
constexpr const char* pattern = "%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ [%n] %v";

// Every logger writes to this one sink: adding the file to it (under its
// own lock) reaches loggers already in use on other threads.
std::shared_ptr<spdlog::sinks::dist_sink_mt> shared_sink() {
  static auto sink = [] {
    auto dist = std::make_shared<spdlog::sinks::dist_sink_mt>();
    dist->add_sink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    return dist;
  }();
  return sink;
}

std::shared_ptr<spdlog::sinks::basic_file_sink_mt> file_sink;

} // namespace

std::shared_ptr<spdlog::logger> get(const std::string& component) {
  std::lock_guard<std::mutex> guard{mtx};
  if (auto existing = spdlog::get(component))
    return existing;
  auto logger = std::make_shared<spdlog::logger>(component, shared_sink());
  logger->set_level(current_level);
  logger->set_pattern(pattern);
  spdlog::register_logger(logger);
  return logger;
}

bool set_level(std::string_view level) {
  spdlog::level::level_enum lvl;
  if (level == "warning" || level == "warn")
    lvl = spdlog::level::warn;
  else if (level == "trace")
    lvl = spdlog::level::trace;
  else if (level == "debug")
    lvl = spdlog::level::debug;
  else if (level == "info")
    lvl = spdlog::level::info;
  else if (level == "error")
    lvl = spdlog::level::err;
  else if (level == "critical")
    lvl = spdlog::level::critical;
  else if (level == "off")
    lvl = spdlog::level::off;
  else
    return false;
  std::lock_guard<std::mutex> guard{mtx};
  current_level = lvl;
  spdlog::apply_all([lvl](const std::shared_ptr<spdlog::logger>& l) {
    l->set_level(lvl);
  });
  return true;
}

std::string open_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path())
    std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    return "cannot create " + path.parent_path().string() + ": "
           + ec.message();
  std::shared_ptr<spdlog::sinks::basic_file_sink_mt> sink;
  try {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path.string());
  } catch (const spdlog::spdlog_ex& e) {
    return e.what();
  }
  sink->set_pattern(pattern);
  close_file();
  std::lock_guard<std::mutex> guard{mtx};
  file_sink = sink;
  shared_sink()->add_sink(sink);
  return {};
}

void close_file() {
  std::lock_guard<std::mutex> guard{mtx};
  if (!file_sink)
    return;
  file_sink->flush();
  shared_sink()->remove_sink(file_sink);
  file_sink.reset();
}

} // namespace aiperf::log
