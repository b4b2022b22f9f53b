#pragma once
// What a runs column is to compare (docs/compare.md, "Environment"): a fact it
// reports when two runs differ in it, and how that change bears on their
// times. Set where the column is declared (run_columns.cpp); read through
// run_facts.hpp. LibTorch- and SQLite-free.

namespace attnsweep::storage {

// How a change of a run-level fact between two runs bears on their times.
enum class MovesTimes {
  no,      // informational: it explains, it does not move times (the host, the seed)
  yes,     // it moves times (the power limit, the GPU's maximum SM clock): a night is no pass
  unlike,  // the times are not like with like (timing protocol, regime): also a loud warning
};

struct FactRole {
  bool gpu_only = false;  // a fact of the GPU and its timing: not compared where either run is on the CPU
  MovesTimes moves_times = MovesTimes::no;
};

}  // namespace attnsweep::storage
