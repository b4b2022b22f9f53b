#pragma once
// The run a test writes into a store by hand, without running a sweep: one
// builder, so that a new field of RunRecord or of its environment is set in one
// place for every test that stores a run (the store, the run reader, the report).
#include <string>

#include "runner/common/identities.hpp"
#include "runner/storage/store.hpp"

namespace attnsweep::testing {

// A run named `name` on one H200 (cuda:0, torch 2.11.0) under the test FLOP
// convention; the test sets what it is about.
inline storage::RunRecord h200_run_record(const std::string& name) {
  storage::RunRecord run;
  run.name = name;
  run.environment.device = Device::cuda(0);
  run.environment.device_name = "NVIDIA H200";
  run.environment.torch_version = "2.11.0";
  run.flop_convention = "test convention";
  return run;
}

// The unit tests' run of naive: its config, a stand-in digest, the test timing
// protocol and seed 7.
inline storage::RunRecord unit_run_record(const std::string& name) {
  storage::RunRecord run = h200_run_record(name);
  run.config_yaml = "variants: [naive]\n";
  run.config_sha256 = "abc123";
  run.timing_protocol = "test protocol";
  run.seed = 7;
  return run;
}

}  // namespace attnsweep::testing
