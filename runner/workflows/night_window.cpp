#include "runner/workflows/night_window.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/measure/statistics.hpp"

namespace attnsweep::workflows {
namespace {

using compare::TimeVerdict;

double quantile_of(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, fraction);
}

double median_of(std::vector<double> values) { return quantile_of(std::move(values), 0.5); }

// The median of the window's known shares; empty when no night knows it.
std::optional<double> median_share(const std::vector<const NightCase*>& nights,
                                   std::optional<double> NightCase::*share) {
  std::vector<double> known;
  for (const NightCase* night : nights) {
    if (night->*share) known.push_back(*(night->*share));
  }
  if (known.empty()) return std::nullopt;
  return median_of(known);
}

// The case on night i, or null.
const NightCase* case_on(const compare::CaseKey& key, const Night& night) {
  const auto there = night.find(key);
  return there == night.end() ? nullptr : &there->second;
}

// The window of night `index`: the `window` nights after it, a night on which
// the case was suspect not counted (it is no baseline, and the window looks one
// night further back instead).
std::vector<const NightCase*> window_of(const compare::CaseKey& key, const std::vector<const Night*>& nights,
                                        std::size_t index, const WindowSettings& window) {
  std::vector<const NightCase*> earlier;
  for (std::size_t i = index + 1; i < nights.size() && earlier.size() < static_cast<std::size_t>(window.window); ++i) {
    const NightCase* c = case_on(key, *nights[i]);
    if (c && c->suspect) continue;
    earlier.push_back(c);
  }
  return earlier;
}

// Whether night `index` of `nights` was slower than its own window (the nights after it).
bool slower_than_its_window(const compare::CaseKey& key, const std::vector<const Night*>& nights, std::size_t index,
                            const WindowSettings& window, const compare::CompareSettings& settings) {
  const NightCase* c = case_on(key, *nights[index]);
  if (!c) return false;
  const WindowTime time = judge_against_window(*c, window_of(key, nights, index, window), settings);
  return time.time.verdict == TimeVerdict::slower && !time.time.marked();
}

// "2nd", "11th", "23rd": the night the refusal below speaks of.
std::string ordinal(int n) {
  const int tens = n % 100, ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th" : ones == 1 ? "st" : ones == 2 ? "nd" : ones == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

void check_window_settings(const WindowSettings& window) {
  // After K-1 slow nights the window holds them; once they are half of it, its
  // median night is a slow one and the K-th slow night is SAME: never a regression.
  if (2 * (window.consecutive - 1) >= window.window) {
    throw BadInputError("--consecutive " + std::to_string(window.consecutive) + " needs --window of more than " +
                        std::to_string(2 * (window.consecutive - 1)) + " nights (got " +
                        std::to_string(window.window) + "): by the " + ordinal(window.consecutive) +
                        " slow night the slow ones would be half the window, its median night slow, and the "
                        "slowdown never a regression");
  }
}

int parse_night_count(const std::string& text, const std::string& option, int most, int default_value) {
  const bool digits = !text.empty() && text.size() <= 4 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int value = digits ? std::stoi(text) : 0;
  if (!digits || value < 1 || value > most) {
    throw BadInputError(option + ": invalid value '" + text + "'; allowed: a whole number of nights from 1 to " +
                        std::to_string(most) + ", e.g. " + std::to_string(default_value) + " (the default)");
  }
  return value;
}

namespace {

// The UTC time of `text` read by `format` (strptime's), which must take all of it
// and be a real date and time: the fields read back from the time are the ones given.
std::optional<std::time_t> utc_time(const std::string& text, const char* format, std::size_t length) {
  if (text.size() != length) return std::nullopt;
  for (const char c : text) {
    if (!(c >= '0' && c <= '9') && c != 'T' && c != 'Z' && c != '-' && c != ':') return std::nullopt;
  }
  std::tm fields{};
  const char* end = strptime(text.c_str(), format, &fields);
  if (!end || *end != '\0') return std::nullopt;
  std::tm given = fields;
  const std::time_t time = timegm(&fields);
  std::tm back{};
  if (time == static_cast<std::time_t>(-1) || !gmtime_r(&time, &back)) return std::nullopt;
  if (back.tm_year != given.tm_year || back.tm_mon != given.tm_mon || back.tm_mday != given.tm_mday ||
      back.tm_hour != given.tm_hour || back.tm_min != given.tm_min || back.tm_sec != given.tm_sec) {
    return std::nullopt;  // 30 February became 2 March; a second 60 the next minute
  }
  return time;
}

}  // namespace

std::string stamp_in(const std::string& file) {
  const std::string prefix = "nightly-", suffix = ".db";
  if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return file;
  }
  return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

std::optional<std::time_t> stamp_time(const std::string& stamp) {
  if (stamp.size() != 16 || stamp[8] != 'T' || stamp[15] != 'Z') return std::nullopt;
  return utc_time(stamp, "%Y%m%dT%H%M%SZ", 16);
}

std::optional<std::time_t> started_at_time(const std::string& started_at) {
  if (started_at.size() != 20 || started_at[4] != '-' || started_at[7] != '-' || started_at[10] != 'T' ||
      started_at[13] != ':' || started_at[16] != ':' || started_at[19] != 'Z') {
    return std::nullopt;
  }
  return utc_time(started_at, "%Y-%m-%dT%H:%M:%SZ", 20);
}

std::string stamp_of_time(std::time_t time) {
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

std::string night_name_problem(const std::string& file, std::time_t now) {
  const std::string stamp = stamp_in(file);
  const std::optional<std::time_t> time = stamp_time(stamp);
  if (!time) return "its name's stamp " + stamp + " is not a valid UTC time (YYYYMMDDTHHMMSSZ)";
  if (*time > now) {
    return "its name's stamp " + stamp + " is in the future (now " + stamp_of_time(now) +
           "): a night from the future would be every later night's baseline";
  }
  return "";
}

std::string night_run_problem(const std::string& file, const std::string& started_at) {
  const std::string stamp = stamp_in(file);
  const std::optional<std::time_t> stamped = stamp_time(stamp);
  const std::optional<std::time_t> started = started_at_time(started_at);
  if (!started) return "its run's started_at '" + started_at + "' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)";
  if (!stamped) return "its name's stamp " + stamp + " is not a valid UTC time (YYYYMMDDTHHMMSSZ)";
  const double apart = std::difftime(*started, *stamped);
  if (apart > kStampLateSeconds || apart < -kStampEarlySeconds) {
    return "its run started at " + started_at + ", not between a minute before and 12 hours after its name's stamp " + stamp +
           " (a copy of another night under this name?)";
  }
  return "";
}

Night night_of(const compare::RunCases& run) {
  Night night;
  for (const compare::ComparedCase& compared : run.cases) {
    const storage::CaseRow& row = compared.row;
    if (night.count(compared.key)) continue;
    NightCase c;
    c.status = row.status;
    c.kept_us = compared.kept_us;  // an ok case's only
    c.power_cap_share = row.power_cap_share;
    c.thermal_cap_share = row.thermal_cap_share;
    c.other_processes = row.other_processes.value_or(0);
    c.suspect = row.status == CaseStatus::ok && row.suspect();
    if (c.suspect) c.suspect_reason = compare::suspect_reason(storage::CaseRow{}, row);
    night.emplace(compared.key, std::move(c));
  }
  return night;
}

WindowTime judge_against_window(const NightCase& tonight, const std::vector<const NightCase*>& window,
                                const compare::CompareSettings& settings) {
  WindowTime result;
  compare::TimeComparison& time = result.time;
  std::vector<const NightCase*> timed, sparse;  // sparse: timed, with fewer kept samples than a verdict needs
  for (const NightCase* night : window) {
    if (!night || night->status != CaseStatus::ok || night->suspect || night->kept_us.empty()) continue;
    (night->kept_us.size() >= settings.min_kept_samples ? timed : sparse).push_back(night);
  }
  // Only nights of too few samples: judged as compare judges two such runs
  // (AMBIGUOUS, "fewer than N kept samples"), not as an empty window (issue 55, item 4).
  if (timed.empty()) timed = sparse;
  result.nights = static_cast<int>(timed.size());
  time.candidate_power_cap_share = tonight.power_cap_share;
  time.candidate_thermal_cap_share = tonight.thermal_cap_share;
  time.baseline_power_cap_share = median_share(timed, &NightCase::power_cap_share);
  time.baseline_thermal_cap_share = median_share(timed, &NightCase::thermal_cap_share);
  if (tonight.status != CaseStatus::ok) {
    time.reason = std::string("status ") + to_string(tonight.status) + " tonight";
    return result;
  }
  if (tonight.suspect) {
    time.verdict = TimeVerdict::suspect;
    time.reason = tonight.suspect_reason;
    return result;
  }
  if (timed.empty()) {
    time.reason = "no night of the window timed this case";
    return result;
  }
  // The window's median night: the nights ordered by their medians, the middle
  // one (the lower middle of an even count, so that with two or four nights one
  // odd night never moves the baseline). Tonight is judged against that night's
  // samples: pooled with the others, slow nights already in the window would
  // blur a slowdown that the median of medians shows plainly (review, issue 24).
  std::vector<double> medians;
  for (const NightCase* night : timed) medians.push_back(median_of(night->kept_us));
  std::vector<std::size_t> order(timed.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return medians[a] < medians[b]; });
  result.lowest_median_us = medians[order.front()];
  result.highest_median_us = medians[order.back()];
  time = compare::judge_times(timed[order[(order.size() - 1) / 2]]->kept_us, tonight.kept_us, std::move(time), settings);
  if (time.verdict != TimeVerdict::slower && time.verdict != TimeVerdict::faster) return result;
  if (tonight.other_processes > 0) {
    time.cap_mark += (time.cap_mark.empty() ? "" : ", ") + std::string("shared GPU tonight (") +
                     std::to_string(tonight.other_processes) + " other compute process(es))";
  }
  return result;
}

CaseAlert alert_for(const compare::CaseKey& key, const std::vector<const Night*>& nights, const WindowSettings& window,
                    const compare::CompareSettings& settings) {
  CaseAlert alert;
  if (nights.empty()) return alert;
  const auto found = nights[0]->find(key);
  if (found == nights[0]->end()) return alert;
  alert.tonight = judge_against_window(found->second, window_of(key, nights, 0, window), settings);
  if (alert.tonight.time.verdict != TimeVerdict::slower || alert.tonight.time.marked()) return alert;
  alert.streak = 1;
  // Earlier nights, newest first: a night on which the case was suspect neither
  // extends the streak nor breaks it.
  for (std::size_t i = 1; alert.streak < window.consecutive && i < nights.size(); ++i) {
    const NightCase* c = case_on(key, *nights[i]);
    if (c && c->suspect) continue;
    if (!slower_than_its_window(key, nights, i, window, settings)) break;
    ++alert.streak;
  }
  alert.alert = alert.streak >= window.consecutive ? Alert::regression : Alert::watch;
  return alert;
}

std::string window_text(const WindowTime& time) {
  if (!time.time.baseline_median_us) return "- (no night of the window timed it)";
  std::string text = text::fixed(*time.time.baseline_median_us, 1) + " us (window of " + std::to_string(time.nights) +
                     (time.nights == 1 ? " night" : " nights");
  if (time.nights > 1) {
    text += ", " + text::fixed(*time.lowest_median_us, 1) + "-" + text::fixed(*time.highest_median_us, 1) + " us";
  }
  return text + ")";
}

}  // namespace attnsweep::workflows
