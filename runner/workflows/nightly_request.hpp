#pragma once
// What `attnsweep nightly` is asked to do (nightly.hpp): the pinned sweep, where
// its nights are kept or what they are compared with, and the rules that judge them.
#include <optional>
#include <string>

#include "runner/common/identities.hpp"
#include "runner/compare/compare_settings.hpp"
#include "runner/workflows/night_window.hpp"

namespace attnsweep::workflows {

struct NightlyRequest {
  std::string config_path;
  std::string history_dir;  // previous nights, and where this one is copied; or
  std::string baseline;     // DATABASE[:RUN], a pinned baseline (exactly one of the two)
  std::string db_path;      // the night's local database; empty: nightly-<stamp>.db here
  std::string summary_path; // empty: the database's path with .md
  std::string json_path;    // --summary-json: the night as JSON (nightly_json.hpp); empty: none
  std::optional<Device> device;
  compare::CompareSettings settings;
  WindowSettings window;    // --window, --consecutive: with --history only
};

}  // namespace attnsweep::workflows
