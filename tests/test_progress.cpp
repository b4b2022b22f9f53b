// The progress of a sweep: the ETA arithmetic, the counts and positions, and
// the line that shows them (runner/execute/progress.hpp), and the choice
// between a live line and periodic lines (progress_display.hpp).
#include <gtest/gtest.h>

#include "runner/execute/progress.hpp"
#include "runner/execute/progress_display.hpp"

namespace attnsweep::execute {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(ProgressDuration, ReadsAsSecondsMinutesOrHours) {
  EXPECT_EQ(duration_text(0), "0s");
  EXPECT_EQ(duration_text(-5), "0s");
  EXPECT_EQ(duration_text(0.4), "0s");
  EXPECT_EQ(duration_text(44.6), "45s");
  EXPECT_EQ(duration_text(59.4), "59s");
  EXPECT_EQ(duration_text(65), "1m05s");
  EXPECT_EQ(duration_text(390), "6m30s");
  EXPECT_EQ(duration_text(3599), "59m59s");
  EXPECT_EQ(duration_text(3600), "1h00m");
  EXPECT_EQ(duration_text(7380 + 29), "2h03m");
  EXPECT_EQ(duration_text(7380 + 31), "2h04m");
}

TEST(ProgressEstimate, NoneBeforeTheFirstFinishAndZeroWithNothingLeft) {
  EXPECT_FALSE(estimate_seconds_left(Pace{}, 10 * kSecond, 5, 3.0).has_value());
  EXPECT_EQ(estimate_seconds_left(Pace{12.0, 4 * kSecond, 2}, 0, 0, 20.0), 0.0);
}

TEST(ProgressEstimate, RemainingExpectedCostAtTheMeasuredPace) {
  // 4 expected seconds took 12 wall seconds: 3 wall seconds per expected one.
  const Pace pace{12.0, 4 * kSecond, 2};
  EXPECT_DOUBLE_EQ(*estimate_seconds_left(pace, 10 * kSecond, 5, 12.0), 30.0);
  // 2.5 s after the latest finish, the cases in flight are that much further.
  EXPECT_DOUBLE_EQ(*estimate_seconds_left(pace, 10 * kSecond, 5, 14.5), 27.5);
  // Never below zero when a case runs longer than all that was expected.
  EXPECT_DOUBLE_EQ(*estimate_seconds_left(pace, 1 * kSecond, 1, 100.0), 0.0);
  // The cost, not the count, of the remaining cases decides: one big case left.
  EXPECT_DOUBLE_EQ(*estimate_seconds_left(pace, 20 * kSecond, 1, 12.0), 60.0);
}

TEST(ProgressEstimate, MeanCaseTimeWhenTheCostsAreUnknown) {
  const Pace pace{12.0, 0, 3};  // 4 s per case
  EXPECT_DOUBLE_EQ(*estimate_seconds_left(pace, 0, 5, 12.0), 20.0);
  EXPECT_DOUBLE_EQ(*estimate_seconds_left(pace, 0, 5, 13.0), 19.0);
}

ProgressSnapshot example_snapshot() {
  ProgressSnapshot snapshot;
  snapshot.total = 273;
  snapshot.done = 12;
  snapshot.counts = {10, 1, 1};
  snapshot.elapsed_seconds = 65;
  snapshot.seconds_left = 390;
  snapshot.running = {"sdpa_flash 1x32x4096x128 bf16 causal"};
  return snapshot;
}

TEST(ProgressLine, ShowsPositionCountsTimesAndTheCurrentCase) {
  EXPECT_EQ(progress_line(example_snapshot(), 120),
            "[12/273 4%] 10 ok, 1 unsupported, 1 failed | 1m05s elapsed, ETA 6m30s | now: sdpa_flash "
            "1x32x4096x128 bf16 causal");
}

TEST(ProgressLine, SaysWhenThereIsNoEstimateYetAndDropsTheEtaAtTheEnd) {
  ProgressSnapshot snapshot = example_snapshot();
  snapshot.seconds_left.reset();
  snapshot.running.clear();
  EXPECT_EQ(progress_line(snapshot, 120), "[12/273 4%] 10 ok, 1 unsupported, 1 failed | 1m05s elapsed, ETA --");
  snapshot.done = 273;
  snapshot.seconds_left = 0;
  EXPECT_EQ(progress_line(snapshot, 120), "[273/273 100%] 10 ok, 1 unsupported, 1 failed | 1m05s elapsed");
  // Ended early (interrupted): neither an ETA nor the case that was dropped.
  ProgressSnapshot interrupted = example_snapshot();
  interrupted.ended = true;
  EXPECT_EQ(progress_line(interrupted, 120), "[12/273 4%] 10 ok, 1 unsupported, 1 failed | 1m05s elapsed");
  ProgressSnapshot empty;
  EXPECT_EQ(progress_line(empty, 120), "[0/0 100%] 0 ok, 0 unsupported, 0 failed | 0s elapsed");
}

TEST(ProgressLine, ListsSeveralCasesInFlight) {
  ProgressSnapshot snapshot = example_snapshot();
  snapshot.running = {"naive 1x2x16x8 fp32 causal on cuda:0", "naive 1x2x32x8 fp32 causal on cuda:1"};
  EXPECT_EQ(progress_line(snapshot, 200),
            "[12/273 4%] 10 ok, 1 unsupported, 1 failed | 1m05s elapsed, ETA 6m30s | now: naive 1x2x16x8 fp32 causal "
            "on cuda:0, naive 1x2x32x8 fp32 causal on cuda:1");
}

TEST(ProgressLine, StaysShorterThanTheWidthByCuttingTheCaseLabelFirst) {
  const std::string head = "[12/273 4%] 10 ok, 1 unsupported, 1 failed | 1m05s elapsed, ETA 6m30s";
  // 100 columns: 99 characters at most, the label cut with "...".
  const std::string cut = progress_line(example_snapshot(), 100);
  EXPECT_EQ(cut.size(), 99u);
  EXPECT_EQ(cut, head + " | now: sdpa_flash 1x32x409...");
  EXPECT_EQ(progress_line(example_snapshot(), 89), head + " | now: sdpa_fla...");
  // Too little room for a useful label (8 characters): the line without it.
  EXPECT_EQ(progress_line(example_snapshot(), 88), head);
  EXPECT_EQ(progress_line(example_snapshot(), 80), head);
  EXPECT_EQ(progress_line(example_snapshot(), head.size() + 1), head);
  // Narrower than the counts: the line itself is cut.
  EXPECT_EQ(progress_line(example_snapshot(), 21), head.substr(0, 20));
  for (std::size_t width : {1u, 2u, 40u, 100u, 119u, 120u, 200u}) {
    EXPECT_LT(progress_line(example_snapshot(), width).size(), std::max<std::size_t>(width, 1)) << width;
  }
}

std::vector<PlannedCase> four_cases() {
  // Plan indexes 0..3, expected 1, 1, 2 and 4 seconds.
  return {{0, 1 * kSecond}, {1, 1 * kSecond}, {2, 2 * kSecond}, {3, 4 * kSecond}};
}

TEST(ProgressTracking, CountsStatusesPositionsAndTheCasesInFlight) {
  Progress progress(four_cases(), {});
  EXPECT_EQ(progress.total(), 4);
  EXPECT_EQ(progress.started(0, "a", 0.0), 1);
  EXPECT_EQ(progress.started(1, "b", 0.5), 2);
  ProgressSnapshot snapshot = progress.snapshot(1.0);
  EXPECT_EQ(snapshot.done, 0);
  EXPECT_EQ(snapshot.running, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(snapshot.seconds_left.has_value());
  // Out of order, as with --gpus: b ends first.
  const std::optional<Progress::Ran> b = progress.finished(1, CaseStatus::unsupported, 1.5);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->position, 2);
  EXPECT_DOUBLE_EQ(b->seconds, 1.0);
  EXPECT_DOUBLE_EQ(progress.finished(0, CaseStatus::crashed, 2.0)->seconds, 2.0);
  EXPECT_EQ(progress.started(2, "c", 2.0), 3);
  snapshot = progress.snapshot(2.0);
  EXPECT_EQ(snapshot.done, 2);
  EXPECT_EQ(snapshot.counts.ok, 0);
  EXPECT_EQ(snapshot.counts.unsupported, 1);
  EXPECT_EQ(snapshot.counts.failed, 1);
  EXPECT_EQ(snapshot.running, std::vector<std::string>{"c"});
  // 2 expected seconds took 2 wall seconds; 6 expected seconds remain.
  EXPECT_DOUBLE_EQ(*snapshot.seconds_left, 6.0);
  EXPECT_DOUBLE_EQ(progress.finished(2, CaseStatus::ok, 6.0)->seconds, 4.0);
  // 4 expected seconds in 6: 1.5 wall seconds each; 4 expected remain.
  EXPECT_DOUBLE_EQ(*progress.snapshot(6.0).seconds_left, 6.0);
  progress.started(3, "d", 6.0);
  progress.finished(3, CaseStatus::oom, 11.0);
  snapshot = progress.snapshot(11.0);
  EXPECT_EQ(snapshot.done, 4);
  EXPECT_EQ(snapshot.counts.ok, 1);
  EXPECT_EQ(snapshot.counts.failed, 2);
  EXPECT_EQ(*snapshot.seconds_left, 0.0);
  EXPECT_TRUE(snapshot.running.empty());
}

TEST(ProgressTracking, CasesStoredBeforeAResumeAreDoneButNotInThePace) {
  // Cases 0 and 3 were stored by the run's earlier process.
  Progress progress(four_cases(), {{0, CaseStatus::ok}, {3, CaseStatus::timeout}});
  ProgressSnapshot snapshot = progress.snapshot(0.0);
  EXPECT_EQ(snapshot.done, 2);
  EXPECT_EQ(snapshot.counts.ok, 1);
  EXPECT_EQ(snapshot.counts.failed, 1);
  EXPECT_EQ(progress.started(1, "b", 0.0), 3);  // positions continue after the stored ones
  progress.finished(1, CaseStatus::ok, 5.0);
  // The pace is this process's alone: 1 expected second in 5 wall seconds; case 2's 2 s remain.
  EXPECT_DOUBLE_EQ(*progress.snapshot(5.0).seconds_left, 10.0);
  EXPECT_EQ(progress_line(progress.snapshot(5.0), 120),
            "[3/4 75%] 2 ok, 0 unsupported, 1 failed | 5s elapsed, ETA 10s");
}

TEST(ProgressMode, LiveOnATerminalPlainLinesElsewhereNothingWhenQuiet) {
  EXPECT_EQ(choose_progress_mode(true, true, "xterm-256color"), ProgressMode::live_line);
  EXPECT_EQ(choose_progress_mode(true, true, ""), ProgressMode::live_line);
  EXPECT_EQ(choose_progress_mode(true, true, "dumb"), ProgressMode::periodic_lines);
  EXPECT_EQ(choose_progress_mode(true, false, "xterm"), ProgressMode::periodic_lines);
  EXPECT_EQ(choose_progress_mode(false, true, "xterm"), ProgressMode::off);
  EXPECT_EQ(choose_progress_mode(false, false, "xterm"), ProgressMode::off);
}

}  // namespace
}  // namespace attnsweep::execute
