#include "runner/execute/progress.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "runner/common/text.hpp"

namespace attnsweep::execute {
namespace {

std::string two_digits(long long value) { return (value < 10 ? "0" : "") + std::to_string(value); }

}  // namespace

void StatusCounts::add(CaseStatus status) {
  switch (status) {
    case CaseStatus::ok: ++ok; return;
    case CaseStatus::unsupported: ++unsupported; return;
    case CaseStatus::oom:
    case CaseStatus::error:
    case CaseStatus::crashed:
    case CaseStatus::timeout: ++failed; return;
  }
}

std::string duration_text(double seconds) {
  const long long whole = std::isfinite(seconds) && seconds > 0 ? std::llround(seconds) : 0;
  if (whole < 60) return std::to_string(whole) + "s";
  if (whole < 3600) return std::to_string(whole / 60) + "m" + two_digits(whole % 60) + "s";
  const long long minutes = (whole + 30) / 60;  // to the nearest minute
  return std::to_string(minutes / 60) + "h" + two_digits(minutes % 60) + "m";
}

std::string progress_line(const ProgressSnapshot& snapshot, std::size_t width) {
  const int percent = snapshot.total > 0 ? static_cast<int>(100LL * snapshot.done / snapshot.total) : 100;
  const StatusCounts& counts = snapshot.counts;
  std::string line = "[" + std::to_string(snapshot.done) + "/" + std::to_string(snapshot.total) + " " +
                     std::to_string(percent) + "%] " + std::to_string(counts.ok) + " ok, " +
                     std::to_string(counts.unsupported) + " unsupported, " + std::to_string(counts.failed) +
                     " failed | " + duration_text(snapshot.elapsed_seconds) + " elapsed";
  if (snapshot.done < snapshot.total && !snapshot.ended) {
    line += ", ETA " + (snapshot.seconds_left ? duration_text(*snapshot.seconds_left) : std::string("--"));
  }
  // Shorter than the width: a line that fills the last column makes some terminals wrap.
  const std::size_t room = width > 1 ? width - 1 : 0;
  if (!snapshot.running.empty() && !snapshot.ended) {
    const std::string now = " | now: ";
    const std::string ellipsis = "...";
    std::string labels = text::join(snapshot.running, ", ");
    const std::size_t fixed = line.size() + now.size();
    constexpr std::size_t kShortestLabel = 8;  // less than this says nothing: drop the labels instead
    if (fixed + labels.size() <= room) {
      line += now + labels;
    } else if (fixed + kShortestLabel + ellipsis.size() <= room) {
      line += now + labels.substr(0, room - fixed - ellipsis.size()) + ellipsis;
    }
  }
  if (line.size() > room) line.resize(room);
  return line;
}

std::optional<double> estimate_seconds_left(const Pace& pace, std::int64_t remaining_expected_ns, int remaining_cases,
                                            double now_seconds) {
  if (remaining_cases <= 0) return 0.0;
  if (pace.finished_cases <= 0) return std::nullopt;
  double left = 0;
  if (pace.finished_expected_ns > 0) {
    const double wall_per_expected = pace.seconds_at_last_finish / static_cast<double>(pace.finished_expected_ns);
    left = static_cast<double>(remaining_expected_ns) * wall_per_expected;
  } else {
    left = remaining_cases * (pace.seconds_at_last_finish / pace.finished_cases);
  }
  return std::max(0.0, left - std::max(0.0, now_seconds - pace.seconds_at_last_finish));
}

Progress::Progress(const std::vector<PlannedCase>& planned, const std::map<int, CaseStatus>& stored_before) {
  for (const PlannedCase& c : planned) expected_ns_[c.plan_index] = c.expected_ns;
  for (const auto& [plan_index, expected] : expected_ns_) {
    const auto stored = stored_before.find(plan_index);
    if (stored == stored_before.end()) {
      remaining_expected_ns_ += expected;
    } else {
      ++done_;
      counts_.add(stored->second);
    }
  }
  positions_given_ = done_;
}

std::int64_t Progress::expected_ns(int plan_index) const {
  const auto found = expected_ns_.find(plan_index);
  return found == expected_ns_.end() ? 0 : found->second;
}

int Progress::started(int plan_index, const std::string& label, double now_seconds) {
  const int position = ++positions_given_;
  running_[plan_index] = Running{label, now_seconds, position};
  return position;
}

std::optional<Progress::Ran> Progress::finished(int plan_index, CaseStatus status, double now_seconds) {
  std::optional<Ran> took;
  const auto running = running_.find(plan_index);
  if (running != running_.end()) {
    took = Ran{running->second.position, now_seconds - running->second.started_seconds};
    running_.erase(running);
  }
  const std::int64_t expected = expected_ns(plan_index);
  ++done_;
  counts_.add(status);
  remaining_expected_ns_ = std::max<std::int64_t>(0, remaining_expected_ns_ - expected);
  pace_.finished_expected_ns += expected;
  pace_.finished_cases += 1;
  pace_.seconds_at_last_finish = now_seconds;
  return took;
}

ProgressSnapshot Progress::snapshot(double now_seconds) const {
  ProgressSnapshot snapshot;
  snapshot.total = total();
  snapshot.done = done_;
  snapshot.counts = counts_;
  snapshot.elapsed_seconds = now_seconds;
  snapshot.seconds_left = estimate_seconds_left(pace_, remaining_expected_ns_, total() - done_, now_seconds);
  std::vector<const Running*> in_flight;
  for (const auto& [plan_index, running] : running_) in_flight.push_back(&running);
  std::sort(in_flight.begin(), in_flight.end(), [](const Running* a, const Running* b) { return a->position < b->position; });
  for (const Running* running : in_flight) snapshot.running.push_back(running->label);
  return snapshot;
}

}  // namespace attnsweep::execute
