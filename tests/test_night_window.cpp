// The window and the alert rule of `nightly --history` (runner/workflows/night_window),
// on nights made in memory: what the review of issue 24 found the CLI tests could
// not reach (a mixed window, even windows, streaks, windows too short for K).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/workflows/night_window.hpp"

namespace attnsweep::workflows {
namespace {

// A night whose case took `us` microseconds in 40 samples with +-1% of spread.
NightCase night_at(double us) {
  NightCase c;
  for (int i = 0; i < 40; ++i) c.kept_us.push_back(us * (0.99 + 0.0005 * i));
  return c;
}

const compare::CaseKey kKey{"naive", Shape{1, 4, 4, 256, 256, 32}, Dtype::fp32, true, DeviceKind::cpu, Pass::forward};

// Nights newest first (tonight first), each with the one case at the given median.
std::vector<Night> nights_at(const std::vector<double>& medians) {
  std::vector<Night> nights;
  for (const double us : medians) nights.push_back(Night{{kKey, night_at(us)}});
  return nights;
}

CaseAlert alert(const std::vector<Night>& nights, int window, int consecutive) {
  std::vector<const Night*> pointers;
  for (const Night& night : nights) pointers.push_back(&night);
  compare::CompareSettings settings;
  return alert_for(kKey, pointers, WindowSettings{window, consecutive}, settings);
}

// The review's case: good x3, slow, good, slow, then slow again. Tonight is the
// second slow night in a row; the window (5 nights) holds two slow ones. Tested
// against the window's median night (a good one), the slowdown is plain.
TEST(NightWindow, ASlowdownIsARegressionOnItsSecondNightEvenWithSlowNightsInTheWindow) {
  const CaseAlert a = alert(nights_at({7000, 7000, 1000, 7000, 1000, 1000, 1000}), 5, 2);
  EXPECT_EQ(a.tonight.time.verdict, compare::TimeVerdict::slower) << a.tonight.time.reason;
  EXPECT_EQ(a.alert, Alert::regression);
  EXPECT_EQ(a.streak, 2);
  ASSERT_TRUE(a.tonight.time.baseline_median_us.has_value());
  EXPECT_NEAR(*a.tonight.time.baseline_median_us, 1000 * (0.99 + 0.0005 * 19.5), 1e-6);
}

TEST(NightWindow, AFirstSlowNightIsAWatchItemAndANormalNightBreaksTheStreak) {
  EXPECT_EQ(alert(nights_at({7000, 1000, 1000, 1000}), 5, 2).alert, Alert::watch);
  // slow, normal, slow: tonight's streak is one night.
  const CaseAlert broken = alert(nights_at({7000, 1000, 7000, 1000, 1000, 1000}), 5, 2);
  EXPECT_EQ(broken.alert, Alert::watch);
  EXPECT_EQ(broken.streak, 1);
}

// With two nights in the window, one of them odd, the baseline is the lower
// middle: the odd slow night does not move it, and tonight is SAME.
TEST(NightWindow, AnOddNightInAnEvenWindowDoesNotMoveTheBaseline) {
  const CaseAlert a = alert(nights_at({1000, 7000, 1000}), 5, 2);
  EXPECT_EQ(a.tonight.time.verdict, compare::TimeVerdict::same);
  EXPECT_EQ(a.tonight.nights, 2);
  EXPECT_EQ(a.alert, Alert::none);
}

// Issue 24: a suspect night tonight gets no time verdict (nor a watch item); a
// suspect night in the window is left out of it, so its odd time moves nothing.
TEST(NightWindow, ASuspectNightIsNotJudgedAndNotPartOfTheWindow) {
  std::vector<Night> nights = nights_at({7000, 1000, 1000, 1000});
  nights[0][kKey].suspect = true;
  nights[0][kKey].suspect_reason = "the candidate is suspect (power_capped)";
  const CaseAlert tonight = alert(nights, 5, 2);
  EXPECT_EQ(tonight.tonight.time.verdict, compare::TimeVerdict::suspect);
  EXPECT_EQ(tonight.tonight.time.reason, "the candidate is suspect (power_capped)");
  EXPECT_EQ(tonight.alert, Alert::none);

  // Window: 1000 (suspect, left out), 1000, 7000, 7000: without the suspect night
  // the median night is a slow one and tonight's 7000 is SAME; with it, the
  // lower middle of four would be 1000 and tonight SLOWER.
  std::vector<Night> window = nights_at({7000, 1000, 1000, 7000, 7000});
  window[1][kKey].suspect = true;
  const CaseAlert judged = alert(window, 5, 2);
  EXPECT_EQ(judged.tonight.nights, 3);
  EXPECT_EQ(judged.tonight.time.verdict, compare::TimeVerdict::same) << judged.tonight.time.reason;
}

// A suspect night between two slow nights neither extends nor breaks the
// streak, and the windows look one night further back past it.
TEST(NightWindow, ASuspectNightInsideAStreakIsSkipped) {
  std::vector<Night> nights = nights_at({7000, 7000, 7000, 1000, 1000, 1000, 1000, 1000});
  nights[1][kKey].suspect = true;
  const CaseAlert a = alert(nights, 5, 2);
  EXPECT_EQ(a.alert, Alert::regression);
  EXPECT_EQ(a.streak, 2);
  // Tonight's window: night 2 (7000) and four good ones; its median night a good one.
  EXPECT_EQ(a.tonight.nights, 5);
  // slow, normal, slow: the normal night breaks the streak; labelled suspect, it does not.
  std::vector<Night> broken = nights_at({7000, 1000, 7000, 1000, 1000, 1000, 1000, 1000});
  EXPECT_EQ(alert(broken, 5, 2).alert, Alert::watch);
  broken[1][kKey].suspect = true;
  EXPECT_EQ(alert(broken, 5, 2).alert, Alert::regression);
}

TEST(NightWindow, AWindowTooShortForTheAlertRuleIsRefused) {
  EXPECT_NO_THROW(check_window_settings(WindowSettings{5, 2}));
  EXPECT_NO_THROW(check_window_settings(WindowSettings{1, 1}));
  EXPECT_NO_THROW(check_window_settings(WindowSettings{5, 3}));
  for (const WindowSettings bad : {WindowSettings{1, 2}, WindowSettings{2, 2}, WindowSettings{3, 3}, WindowSettings{4, 3}}) {
    try {
      check_window_settings(bad);
      ADD_FAILURE() << bad.window << "/" << bad.consecutive << " accepted";
    } catch (const BadInputError& error) {
      EXPECT_NE(std::string(error.what()).find("--consecutive " + std::to_string(bad.consecutive) +
                                               " needs --window of more than"),
                std::string::npos)
          << error.what();
    }
  }
}

// Issue 33, item 15: "by the 2th slow night": the ordinal's suffix is English's.
TEST(NightWindow, TheRefusalNamesTheSlowNightWithItsOrdinal) {
  for (const auto& [consecutive, ordinal] : std::vector<std::pair<int, std::string>>{
           {2, "2nd"}, {3, "3rd"}, {4, "4th"}, {11, "11th"}, {12, "12th"}, {13, "13th"}, {21, "21st"}, {22, "22nd"},
           {23, "23rd"}, {101, "101st"}, {111, "111th"}}) {
    try {
      check_window_settings(WindowSettings{1, consecutive});
      ADD_FAILURE() << consecutive << " accepted";
    } catch (const BadInputError& error) {
      EXPECT_NE(std::string(error.what()).find("): by the " + ordinal + " slow night the slow ones"), std::string::npos)
          << error.what();
    }
  }
}

// A lasting slowdown with the defaults: WATCH, REGRESSION, REGRESSION, then the
// window's median night is a slow one and the new time is the baseline.
TEST(NightWindow, ALastingSlowdownFailsTwiceThenBecomesTheBaseline) {
  std::vector<double> history = {1000, 1000, 1000, 1000, 1000};
  std::vector<Alert> seen;
  for (int night = 0; night < 4; ++night) {
    history.insert(history.begin(), 7000);
    seen.push_back(alert(nights_at(history), 5, 2).alert);
  }
  EXPECT_EQ(seen, (std::vector<Alert>{Alert::watch, Alert::regression, Alert::regression, Alert::none}));
}

// Issue 33, item 5: which files of a history are nights. A stamp is a time: a
// real UTC date and time, not after now, from a minute before to 12 hours after its run's start.
TEST(NightStamp, AStampIsARealUtcTime) {
  ASSERT_TRUE(stamp_time("20261201T031500Z").has_value());
  EXPECT_EQ(*stamp_time("20261201T031500Z"), 1796094900);  // date -u -d 2026-12-01T03:15:00Z +%s
  EXPECT_EQ(stamp_of_time(1796094900), "20261201T031500Z");
  EXPECT_TRUE(stamp_time("20280229T000000Z").has_value());  // a leap day
  for (const std::string bad : {"20261301T000000Z", "20270229T000000Z", "20261131T000000Z", "20261201T240000Z",
                                "20261201T236000Z", "20261201T235960Z", "20261201T031500", "2026121T0315000Z",
                                "20261201 031500Z", "+0261201T031500Z", ""}) {
    EXPECT_FALSE(stamp_time(bad).has_value()) << bad;
  }
  ASSERT_TRUE(started_at_time("2026-12-01T03:15:00Z").has_value());
  EXPECT_EQ(*started_at_time("2026-12-01T03:15:00Z"), 1796094900);
  for (const std::string bad : {"2026-13-01T03:15:00Z", "2026-12-01 03:15:00", "2026-12-01T03:15:00.5Z", "x"}) {
    EXPECT_FALSE(started_at_time(bad).has_value()) << bad;
  }
}

TEST(NightStamp, ANightIsNamedByAPastStampWithinAnHourOfItsRun) {
  const std::time_t now = *stamp_time("20261203T113000Z");
  EXPECT_EQ(night_name_problem("nightly-20261201T031500Z.db", now), "");
  EXPECT_EQ(night_name_problem("nightly-20261203T113000Z.db", now), "");  // now itself is not after now
  EXPECT_EQ(night_name_problem("nightly-20261203T113001Z.db", now),
            "its name's stamp 20261203T113001Z is in the future (now 20261203T113000Z): a night from the future "
            "would be every later night's baseline");
  EXPECT_EQ(night_name_problem("nightly-20991231T235959Z.db", now).rfind("its name's stamp 20991231T235959Z is in "
                                                                          "the future", 0),
            0u);
  EXPECT_EQ(night_name_problem("nightly-20261301T000000Z.db", now),
            "its name's stamp 20261301T000000Z is not a valid UTC time (YYYYMMDDTHHMMSSZ)");

  EXPECT_EQ(night_run_problem("nightly-20261201T031500Z.db", "2026-12-01T03:15:03Z"), "");
  // A slow start (the ceilings, a device probe) is still its own night, up to 12 hours late.
  EXPECT_EQ(night_run_problem("nightly-20261201T031500Z.db", "2026-12-01T15:15:00Z"), "");
  EXPECT_EQ(night_run_problem("nightly-20261201T031500Z.db", "2026-12-01T03:14:00Z"), "");
  EXPECT_NE(night_run_problem("nightly-20261201T031500Z.db", "2026-12-01T03:13:59Z"), "");  // before its own stamp
  EXPECT_EQ(night_run_problem("nightly-20261201T031500Z.db", "2026-12-01T15:15:01Z"),
            "its run started at 2026-12-01T15:15:01Z, not between a minute before and 12 hours after its name's "
            "stamp 20261201T031500Z (a copy of another night under this name?)");
  EXPECT_NE(night_run_problem("nightly-20261202T031500Z.db", "2026-12-01T03:15:00Z"), "");  // last night's run
  EXPECT_EQ(night_run_problem("nightly-20261201T031500Z.db", "yesterday"),
            "its run's started_at 'yesterday' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)");
}

}  // namespace
}  // namespace attnsweep::workflows
