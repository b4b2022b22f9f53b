#pragma once
// Wall time since a moment, on the steady clock: the one helper every phase
// timer, stopping rule and cool-down uses.
#include <chrono>

namespace attnsweep {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace attnsweep
