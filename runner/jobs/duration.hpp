#pragma once
// Job durations as `hf jobs run --timeout` reads them: whole seconds ("5400"),
// or a number with s, m, h or d ("90m", "1.5h", "2d"). HF Jobs stops a job
// after 30 minutes unless told otherwise.
#include <cstdint>
#include <string>

namespace attnsweep::jobs {

inline constexpr const char* kDefaultJobTimeout = "30m";

// Seconds, as hf computes them (int(float(number) x unit)). Throws
// BadInputError naming `option` for anything hf would refuse or a duration of 0.
std::int64_t parse_job_duration(const std::string& text, const std::string& option);

// "12.5 s" below a minute, "41.5 min" below two hours, "3.2 h" above.
std::string describe_duration(std::int64_t nanoseconds);

// A --timeout text for at least `seconds`: whole hours ("3h") from two hours
// up, else whole minutes rounded up to 10 ("50m").
std::string timeout_for(std::int64_t seconds);

}  // namespace attnsweep::jobs
