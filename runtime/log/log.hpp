// One named spdlog logger per component (Seastar's `logger http_log("http")`,
// Envoy's Loggable<Id>). Loggers are created on first use and share one sink
// (stderr, plus the run's log file once open_file() is called) and one
// level, set from config/CLI with set_level().
#pragma once

#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace aiperf::log {

/// Returns the logger of `component` ("http", "mock_server", ...), creating
/// it on first use with the current global level. Thread-safe.
std::shared_ptr<spdlog::logger> get(const std::string& component);

/// Sets the level of every existing and future logger. Accepts trace, debug,
/// info, warning (warn), error, critical, off; returns false (and changes
/// nothing) for anything else.
[[nodiscard]] bool set_level(std::string_view level);

/// Also writes every logger's lines, at the current level, to `path`
/// (AIPerf's `<artifact-dir>/logs/aiperf.log`; its folder is created),
/// replacing a file opened before. Returns "" or why it cannot be opened.
[[nodiscard]] std::string open_file(const std::filesystem::path& path);

/// Flushes and closes the file of open_file(); stderr stays. No-op when
/// none is open.
void close_file();

/// The names accepted by set_level, for CLI help and error messages.
inline constexpr std::string_view level_names
  = "trace|debug|info|warning|error|critical|off";

} // namespace aiperf::log
