#pragma once
// Logging for the whole program. spdlog lives behind this interface because
// code that includes LibTorch headers must not include spdlog (torch ships fmt
// 12 headers, the system spdlog is built against fmt 9).
#include <string>

namespace attnsweep::log {

void set_level(const std::string& level);  // trace, debug, info, warn, error, off
void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
void error(const std::string& message);

}  // namespace attnsweep::log
