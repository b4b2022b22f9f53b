#pragma once
// The SQL the command line shows as examples (docs/schema.md): like every SQL
// text of attnsweep, it is written in runner/storage.
#include <cstdint>
#include <string>

namespace attnsweep::storage {

// Every case of every run with its run's context: `attnsweep query`'s help names it.
inline constexpr const char* kExampleQuery = "SELECT * FROM results";

// A run's cases, fastest first: what `attnsweep run` suggests when it ends.
inline std::string run_results_query(std::int64_t run_id) {
  return "SELECT variant, dtype, kernels_per_forward, time_us_median, tflops FROM results WHERE run_id = " +
         std::to_string(run_id) + " ORDER BY time_us_median";
}

}  // namespace attnsweep::storage
