#pragma once
// What the nightly CLI tests share (tests/test_cli_nightly.cpp, tests/test_cli_history.cpp).
#include <fstream>
#include <sstream>
#include <string>

namespace attnsweep::testing {

// Two CPU cases whose forward is compute, not call overhead (about 0.3 ms). The
// nights run with one thread and --threshold 99: on a loaded 2-core machine
// torch's thread pool made one CPU median 90x slower, which is not what these
// tests are about; the planted slowdown repeats the forward 8 times.
inline const char* const kTinyNightlyConfig = R"(name: tiny-nightly
device: cpu
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 4, seq_len: 256, head_dim: 32}
measure: {warmup: 2, profiled_forwards: 1, min_samples: 40, max_samples: 40}
)";

// A whole file as text ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace attnsweep::testing
