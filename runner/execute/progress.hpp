#pragma once
// How far a sweep is: cases done of the total, their statuses, the time so far
// and an estimate of the time left; and the one line that shows it. Pure data
// and arithmetic: the caller passes the time (seconds since the sweep began),
// so it is tested without waiting. progress_display.hpp shows it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"

namespace attnsweep::execute {

// What the line counts: failed is oom, error, crashed and timeout together.
struct StatusCounts {
  int ok = 0;
  int unsupported = 0;
  int failed = 0;
  void add(CaseStatus status);
};

// What the line shows, as data.
struct ProgressSnapshot {
  int total = 0;
  int done = 0;  // finished, the cases a --resume found stored included
  StatusCounts counts;
  double elapsed_seconds = 0;
  std::optional<double> seconds_left;  // none before the first case finishes in this process
  std::vector<std::string> running;    // labels of the cases in flight, in the order they started
  bool ended = false;                  // the sweep ended (done, interrupted or failed): no ETA, no case in flight
};

// "[12/273 4%] 10 ok, 1 unsupported, 1 failed | 1m05s elapsed, ETA 6m30s | now: sdpa_flash 1x32x4096x128 bf16 causal",
// shorter than `width` characters: the case labels are cut first ("..."), then
// dropped, then the line itself is cut. Without an estimate yet, "ETA --"; no
// ETA and no case once every case is done or the sweep ended.
std::string progress_line(const ProgressSnapshot& snapshot, std::size_t width);

// "0s", "45s", "1m05s", "2h03m": seconds rounded to the nearest, never negative.
std::string duration_text(double seconds);

// The pace measured so far in this process.
struct Pace {
  double seconds_at_last_finish = 0;       // wall seconds from the sweep's start to the latest finish
  std::int64_t finished_expected_ns = 0;   // the cost model's expected time of the cases finished (plan/cost.hpp)
  int finished_cases = 0;
};
// The time left: the remaining cases' expected cost at the measured pace (wall
// seconds per expected second; with --gpus the wall clock already counts the
// devices working side by side), or their count times the mean wall time per
// case when the finished cases have no expected cost; less the seconds since
// the latest finish (the cases in flight have been running that long), never
// below 0. None before the first finish; 0 with nothing remaining.
std::optional<double> estimate_seconds_left(const Pace& pace, std::int64_t remaining_expected_ns, int remaining_cases,
                                            double now_seconds);

// A case of the plan and what the cost model expects it to take.
struct PlannedCase {
  int plan_index = 0;
  std::int64_t expected_ns = 0;
};

// Follows one sweep: cases start and finish (in any order, several at once
// with --gpus), each start gets its position, the i of "[i/N]".
class Progress {
 public:
  // `planned`: every case of the plan; `stored_before`: the statuses of those a
  // --resume found stored, counted as done but not in the pace.
  Progress(const std::vector<PlannedCase>& planned, const std::map<int, CaseStatus>& stored_before);

  // Returns the case's position: the cases stored before, plus one per start.
  int started(int plan_index, const std::string& label, double now_seconds);
  // A finished case seen starting: its position and how long it ran.
  struct Ran {
    int position = 0;
    double seconds = 0;
  };
  std::optional<Ran> finished(int plan_index, CaseStatus status, double now_seconds);
  ProgressSnapshot snapshot(double now_seconds) const;

  int total() const { return static_cast<int>(expected_ns_.size()); }
  std::int64_t expected_ns(int plan_index) const;

 private:
  struct Running {
    std::string label;
    double started_seconds = 0;
    int position = 0;
  };
  std::map<int, std::int64_t> expected_ns_;  // by plan index, every case of the plan
  std::int64_t remaining_expected_ns_ = 0;   // of the cases not finished
  int done_ = 0;
  int positions_given_ = 0;
  StatusCounts counts_;
  Pace pace_;
  std::map<int, Running> running_;  // by plan index
};

}  // namespace attnsweep::execute
