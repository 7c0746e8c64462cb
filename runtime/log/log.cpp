#include "runtime/log/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

namespace aiperf::log {

namespace {

std::mutex mtx;
spdlog::level::level_enum current_level = spdlog::level::info;

} // namespace

std::shared_ptr<spdlog::logger> get(const std::string& component) {
  std::lock_guard<std::mutex> guard{mtx};
  if (auto existing = spdlog::get(component))
    return existing;
  auto logger = spdlog::stderr_color_mt(component);
  logger->set_level(current_level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ [%n] %v");
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

} // namespace aiperf::log
