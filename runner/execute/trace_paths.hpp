#pragma once
// Where a sweep writes its Chrome traces: --traces DIR, or, when the config
// turns traces on, a directory next to the database; one file per case.
#include <cstdint>
#include <string>

#include "runner/plan/case.hpp"

namespace attnsweep::execute {

// Empty when traces are off.
std::string trace_directory(const std::string& traces_option, bool traces_in_config, const std::string& db_path);
// Creates it; throws BadInputError when it cannot.
void create_trace_directory(const std::string& directory);
// The trace file of one case; empty when traces are off.
std::string trace_file(const std::string& directory, std::int64_t run_id, const Case& c);

}  // namespace attnsweep::execute
