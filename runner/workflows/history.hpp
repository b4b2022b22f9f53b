#pragma once
// `attnsweep history DIR`: the nights of a nightly history folder side by side
// (docs/reproducibility.md, "History"): each case's median, kernel count and
// energy per pass night by night, the nights on which a case changed (compare's counted
// findings against the night before) marked, with the environment differences
// that came with them (compare's), as a table or as an HTML page of one chart
// per case family. The folder is only read: each night is copied out first.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/report/table.hpp"
#include "runner/workflows/acceptance.hpp"

namespace attnsweep::workflows {

struct HistoryRequest {
  std::string history_dir;
  int last = 30;  // --last: the newest N nights
  compare::CompareSettings settings;
};

// The version facts a history can be split by (--by) and that a culprit list
// names (--culprits): torch, cuda, cudnn, driver, commit, attnsweep, image, op_library, each a
// column of `runs` (torch_version, ..., git_sha, attnsweep_version, container_image, op_libraries).
const std::vector<std::string>& version_fact_names();
// The names of --by (a comma-separated list) checked against version_fact_names();
// throws BadInputError naming what is allowed.
std::vector<std::string> parse_version_facts(const std::string& list);

struct HistoryNight {
  std::string file;  // nightly-<stamp>.db
  std::string stamp;
  storage::RunRow run;  // its latest run
  // Against the nearest earlier night that finished on the same kind of device
  // (empty for the first): what differs, and the cases that changed.
  std::vector<compare::EnvironmentDifference> environment;
  int changed_cases = 0;
};

// One case on one night.
struct HistoryPoint {
  compare::CaseKey key;
  std::size_t night = 0;  // index into History::nights
  CaseStatus status = CaseStatus::ok;
  std::optional<double> median_us;
  std::optional<int> kernels_per_forward;
  // Joules per pass (cases.energy_j, schema 11): empty where the night did not
  // measure it (measure.energy_window_ms off, the CPU, a backward case, nights
  // before schema 11); the table shows its column, and the page its tooltip line, only when a night has it.
  std::optional<double> energy_j;
  std::string changed;   // compare's counted findings against the night before, "; "-joined; empty: none
  std::string accepted;  // "ACCEPTED by NAME (reason, accept-<stamp>.json)": a change of this night kept; empty: none
};

struct History {
  std::string history_dir;
  std::vector<HistoryNight> nights;  // oldest first
  std::vector<HistoryPoint> points;  // by case (in first-seen plan order), then night
  std::vector<std::string> skipped;  // nights that could not be read, with the reason
  std::vector<Acceptance> acceptances;  // the folder's accepted changes (acceptance.hpp), oldest first
};

// Throws BadInputError when the folder is missing, not a folder, cannot be
// listed, or holds no readable night.
History read_history(const HistoryRequest& request);

// One row per case and night: night, the version facts of `by` (one column each:
// the night's torch, cuDNN, ...), case, status, median_us, kernels_per_forward
// (energy_j when a night has it), changed (and an acceptance), and the night's
// environment differences on changed rows.
report::Table history_table(const History& history, const std::vector<std::string>& by = {});

// The culprit list (like asv's `find`, without re-running): one row per case and
// night on which it changed (compare's counted findings against the night
// before): the case, the night, the change, the version facts that changed that
// night ("cudnn_version: 91900 -> 92000"; "none" when the versions were the same:
// the machine, the environment or noise), and the night's other differences.
report::Table culprit_table(const History& history);

// One HTML file: a table of the nights with their environment differences, and
// one Chart.js chart per case family (the cases that differ only by variant),
// a line per variant, the changed nights marked. Chart.js is the report's, embedded.
std::string history_html(const History& history);

}  // namespace attnsweep::workflows
