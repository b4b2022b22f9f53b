// Issue 38: when a compared night is no pass though nothing regressed
// (runner/workflows/night_trust.hpp): the environment changed in a fact that
// moves times, or under half the cases timed on both nights were judged on time.
#include <gtest/gtest.h>

#include "runner/workflows/night_trust.hpp"

namespace attnsweep::workflows {
namespace {

compare::CaseComparison timed_case(compare::TimeVerdict verdict) {
  compare::CaseComparison c;
  c.time.verdict = verdict;
  return c;
}

TEST(NightTrust, UnderHalfTheTimedCasesJudgedIsNoPass) {
  compare::Comparison comparison;
  comparison.cases = {timed_case(compare::TimeVerdict::same), timed_case(compare::TimeVerdict::suspect),
                      timed_case(compare::TimeVerdict::suspect)};
  compare::CaseComparison failed = timed_case(compare::TimeVerdict::not_timed);
  failed.candidate_status = CaseStatus::unsupported;  // not timed on both: not counted
  comparison.cases.push_back(failed);
  NightTrust trust = night_trust(comparison);
  EXPECT_EQ(trust.timed, 3);
  EXPECT_EQ(trust.judged, 1);
  ASSERT_EQ(trust.reasons.size(), 1u);
  EXPECT_EQ(trust.reasons[0],
            "only 1 of the 3 cases timed on both nights could be judged on time (under 50%; the rest suspect or not judged)");

  // A case not judged for a shared GPU counts as not judged, an ignored one not at all; half judged is enough.
  comparison.cases[1] = timed_case(compare::TimeVerdict::same);
  comparison.cases[1].unjudged = {compare::Unjudged::Why::shared_gpu, "shared GPU"};
  comparison.cases[2] = timed_case(compare::TimeVerdict::slower);
  comparison.cases[2].ignored = "a nightly rule's reason";
  comparison.cases.push_back(timed_case(compare::TimeVerdict::same));
  trust = night_trust(comparison);
  EXPECT_EQ(trust.timed, 3);
  EXPECT_EQ(trust.judged, 2);
  EXPECT_TRUE(trust.reasons.empty()) << trust.reasons[0];
}

TEST(NightTrust, AnEnvironmentChangeThatMovesTimesIsNoPassAndComesFirst) {
  compare::Comparison comparison;
  comparison.cases = {timed_case(compare::TimeVerdict::suspect), timed_case(compare::TimeVerdict::suspect)};
  comparison.environment = {{"hostname", "a", "b", false},
                            {"env_vars.PYTORCH_NO_CUDA_MEMORY_CACHING", "", "1", false},
                            {"power_limit_w", "700", "500", false},
                            {"env_vars.TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "", "1", false},
                            {"env_vars.OMP_NUM_THREADS", "1", "2", false},
                            {"timing_protocol", "v1", "v2", true}};
  const NightTrust trust = night_trust(comparison);
  ASSERT_EQ(trust.reasons.size(), 5u);
  EXPECT_EQ(trust.reasons[0],
            "the environment changed in a fact that moves times: env_vars.PYTORCH_NO_CUDA_MEMORY_CACHING (unset) -> 1");
  EXPECT_EQ(trust.reasons[1], "the environment changed in a fact that moves times: power_limit_w 700 -> 500");
  EXPECT_NE(trust.reasons[2].find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"), std::string::npos);
  EXPECT_NE(trust.reasons[3].find("timing_protocol v1 -> v2"), std::string::npos);
  EXPECT_NE(trust.reasons[4].find("only 0 of the 2 cases"), std::string::npos);
  // The host and the thread count are informational, as before.
  EXPECT_FALSE(moves_times({"hostname", "a", "b", false}));
  EXPECT_FALSE(moves_times({"env_vars.OMP_NUM_THREADS", "1", "2", false}));
  EXPECT_TRUE(moves_times({"sm_clock_max_mhz", "1980", "1500", false}));
  EXPECT_TRUE(moves_times({"env_vars.CUDA_LAUNCH_BLOCKING", "", "1", false}));
}

}  // namespace
}  // namespace attnsweep::workflows
