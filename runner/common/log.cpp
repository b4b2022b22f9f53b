#include "runner/common/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace attnsweep::log {
namespace {
// Logs go to stderr so that stdout holds only results (tables, plans).
spdlog::logger& logger() {
  static auto instance = [] {
    auto created = spdlog::stderr_color_mt("attnsweep");
    created->set_pattern("[%H:%M:%S.%e] %^%l%$ %v");
    created->set_level(spdlog::level::info);
    return created;
  }();
  return *instance;
}
}  // namespace

void set_level(const std::string& level) { logger().set_level(spdlog::level::from_str(level)); }
void debug(const std::string& message) { logger().debug(message); }
void info(const std::string& message) { logger().info(message); }
void warn(const std::string& message) { logger().warn(message); }
void error(const std::string& message) { logger().error(message); }

}  // namespace attnsweep::log
