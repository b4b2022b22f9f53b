#pragma once
// Nightlies that remember (issue 24, docs/reproducibility.md "The window and
// the alert rule"): each case's time tonight is judged against a window of the
// last good nights rather than against last night alone, and a slowdown fails
// the night only when the same case was slower on `consecutive` nights in a
// row; a first slow night is a watch item. Pure data in, pure data out: the
// nights are read into memory first (compare::read_run_cases, night_of), then judged.
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/compare/compare_runs.hpp"
#include "runner/compare/run_cases.hpp"

namespace attnsweep::workflows {

struct WindowSettings {
  int window = 5;       // --window: the last N good nights make the time baseline
  int consecutive = 2;  // --consecutive: a time regression must be seen on K nights in a row
};

// A count of nights as given to --window or --consecutive: a whole number from
// 1 to `most`. Throws BadInputError naming `option` and the default otherwise.
int parse_night_count(const std::string& text, const std::string& option, int most, int default_value);

// Refuses (BadInputError) a window too short for the alert rule: with
// 2 * (consecutive - 1) >= window, the slow nights of a lasting slowdown become
// the window's median before they are `consecutive` in a row.
void check_window_settings(const WindowSettings& window);

// Which files of a history folder are nights (issue 33): a night is chosen by
// the stamp in its name, nightly-<stamp>.db, so the stamp must be a time (a
// valid UTC time, YYYYMMDDTHHMMSSZ), not after tonight (a night from the future
// would be the newest, so the baseline, for ever), and the night's own: its
// latest run started between kStampEarlySeconds before it and kStampLateSeconds
// after it (nightly takes the stamp as it starts; its run begins after the
// baseline's check, the device probe and the ceilings, seconds to minutes
// later; a copy of a night under another night's name is a day away). nightly
// and history apply both, and skip a night that fails one with the reason these return.
inline constexpr long kStampEarlySeconds = 60;
inline constexpr long kStampLateSeconds = 12 * 3600;

// The UTC time a stamp ("20261201T031500Z") names; empty when it names none
// (a month 13, a 30 February, an hour 24, anything but the 16 characters).
std::optional<std::time_t> stamp_time(const std::string& stamp);
// The UTC time of runs.started_at ("2026-12-01T03:15:02Z"); empty when it is none.
std::optional<std::time_t> started_at_time(const std::string& started_at);
// The stamp of a time: 20261201T031500Z.
std::string stamp_of_time(std::time_t time);
// "20261201T031500Z" out of nightly-20261201T031500Z.db; the name itself when it is not one
// (nightly, history and the window take a night's stamp from its file name with this one function).
std::string stamp_in(const std::string& file);

// Why the night file `file` (nightly-<stamp>.db) cannot be a night when it is
// `now` (tonight's stamp); empty when it can. Its name alone: checked before it is copied.
std::string night_name_problem(const std::string& file, std::time_t now);
// Why the night `file`, whose latest run started at `started_at`, is not the
// night its name stamps; empty when it is.
std::string night_run_problem(const std::string& file, const std::string& started_at);

// One case of one night, as the window reads it.
struct NightCase {
  CaseStatus status = CaseStatus::ok;
  std::vector<double> kept_us;  // the kept eager samples (compare::kept_eager_times_us)
  std::optional<double> power_cap_share, thermal_cap_share;
  int other_processes = 0;      // other compute processes on the GPU while it ran
  // Its validity label was `suspect` (docs/measurement.md, "Validity"): never in
  // a window, and tonight not judged; `suspect_reason` as compare words it.
  bool suspect = false;
  std::string suspect_reason;
};

// One night's cases by what they measure (a key measured twice: the first in plan order).
using Night = std::map<compare::CaseKey, NightCase>;

// A night's cases as compare read them (each night is read once, for compare and the window alike).
Night night_of(const compare::RunCases& run);

// A case's time tonight against the window's nights.
struct WindowTime {
  // baseline_* describe the window through its median night (the nights ordered
  // by median, the middle one; the lower middle of an even count):
  // baseline_median_us is its median, baseline_samples its samples (the
  // Mann-Whitney test's other side), quantile_ratio against its 10th
  // percentile; caps against the median of the nights' shares.
  compare::TimeComparison time;
  int nights = 0;  // nights of the window in which the case was timed
  std::optional<double> lowest_median_us, highest_median_us;  // the spread of the nights' medians
};

// Judges `tonight` against `window` (null entries: nights without the case
// timed, left out), with compare's rules: SAME under the threshold or the
// microsecond floor; SLOWER/FASTER needs p < alpha (tonight's samples against
// the window's median night's) and the 10th percentile to move the same way;
// else AMBIGUOUS.
WindowTime judge_against_window(const NightCase& tonight, const std::vector<const NightCase*>& window,
                                const compare::CompareSettings& settings);

// What the alert rule makes of a case tonight.
enum class Alert {
  none,        // not slower against its window (or not judged)
  watch,       // slower tonight, on fewer than `consecutive` nights in a row
  regression,  // slower on `consecutive` nights in a row, tonight included
};

struct CaseAlert {
  WindowTime tonight;
  int streak = 0;  // nights in a row, tonight first, on which the case was slower (unmarked) than its window
  Alert alert = Alert::none;
};

// `nights[0]` is tonight, then the good nights newest first. Each night i is
// judged against nights i+1 .. i+window; the streak counts nights in a row
// from tonight (at most `consecutive`).
CaseAlert alert_for(const compare::CaseKey& key, const std::vector<const Night*>& nights,
                    const WindowSettings& window, const compare::CompareSettings& settings);

// The baseline side of a time finding: "310.2 us (window of 5 nights, 305.1-320.4 us)".
std::string window_text(const WindowTime& time);

}  // namespace attnsweep::workflows
