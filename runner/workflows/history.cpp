#include "runner/workflows/history.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report_assets.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"
#include "runner/workflows/night_window.hpp"
#include "runner/workflows/good_nights.hpp"
#include "runner/workflows/scratch_folder.hpp"

namespace attnsweep::workflows {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The family of a case: everything but the variant ("8x16x1024x64 bf16 causal cuda").
std::string family_of(const compare::CaseKey& key) {
  const std::string label = key.label();
  return label.substr(std::min(label.size(), key.variant.size() + 1));
}

std::string environment_text(const std::vector<compare::EnvironmentDifference>& differences) {
  std::vector<std::string> parts;
  for (const auto& d : differences) {
    parts.push_back(d.fact + ": " + (d.baseline.empty() ? "(none)" : d.baseline) + " -> " +
                    (d.candidate.empty() ? "(none)" : d.candidate));
  }
  return text::join(parts, "; ");
}

// Compare's counted findings of one case, as one line.
std::string changes_of(const compare::CaseComparison& c) {
  std::vector<std::string> parts;
  for (const compare::Finding& f : c.findings) {
    if (f.severity == compare::Severity::info) continue;
    if (f.check == compare::Check::time) {
      parts.push_back(f.detail.substr(0, f.detail.find(',')));  // "SLOWER +98.2%"
    } else {
      parts.push_back(f.field + " " + f.baseline + " -> " + f.candidate);
    }
  }
  return text::join(parts, "; ");
}

// The HTML page's script: one line chart per family, changed nights drawn larger.
constexpr const char* kHistoryScript = R"JS(
const data = JSON.parse(document.getElementById('history-data').textContent);
const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const main = document.getElementById('charts');
for (const family of data.families) {
  const section = document.createElement('section');
  const title = document.createElement('h3');
  title.textContent = family.name;
  section.appendChild(title);
  const holder = document.createElement('div');
  holder.className = 'chart';
  const canvas = document.createElement('canvas');
  holder.appendChild(canvas);
  section.appendChild(holder);
  main.appendChild(section);
  const datasets = family.lines.map((line, i) => ({
    label: line.variant,
    data: line.median_us,
    borderColor: colors[i % colors.length],
    backgroundColor: colors[i % colors.length],
    spanGaps: false,
    pointRadius: line.changed.map(c => c ? 7 : 2),
    pointStyle: line.changed.map(c => c ? 'triangle' : 'circle'),
  }));
  new Chart(canvas, {
    type: 'line',
    data: {labels: data.nights, datasets},
    options: {
      animation: false, maintainAspectRatio: false,
      scales: {y: {title: {display: true, text: 'median us per forward'}}},
      plugins: {tooltip: {callbacks: {afterLabel: (item) => {
        const line = family.lines[item.datasetIndex];
        const lines = [];
        if (line.kernels[item.dataIndex] !== null) lines.push('kernels per forward: ' + line.kernels[item.dataIndex]);
        if (line.energy_j[item.dataIndex] !== null) lines.push('energy per pass: ' + line.energy_j[item.dataIndex].toPrecision(3) + ' J');
        if (line.changed[item.dataIndex]) lines.push('changed: ' + line.changed[item.dataIndex]);
        const environment = data.environment[item.dataIndex];
        if (line.changed[item.dataIndex] && environment) lines.push('environment: ' + environment);
        return lines;
      }}}},
    },
  });
}
)JS";

constexpr const char* kHistoryStyle = R"CSS(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
.chart { position: relative; height: 300px; max-width: 1000px; }
.changed { background: #fff3cd; }
)CSS";


}  // namespace

History read_history(const HistoryRequest& request) {
  const std::string& dir = request.history_dir;
  struct stat info {};
  if (stat(dir.c_str(), &info) != 0) throw BadInputError(dir + ": no such folder (the nightly --history folder)");
  if (!S_ISDIR(info.st_mode)) throw BadInputError(dir + " is not a folder (give the nightly --history folder)");
  const std::vector<std::string> files = night_files(dir);

  History history;
  history.history_dir = dir;
  ScratchFolder scratch;
  const std::time_t now = std::time(nullptr);
  std::vector<std::unique_ptr<storage::ReadableDatabase>> databases;  // parallel to history.nights
  // Newest first until --last readable nights are found (unreadable ones do not
  // count against it), then put back in time order.
  for (auto it = files.rbegin(); it != files.rend() && history.nights.size() < static_cast<std::size_t>(request.last);
       ++it) {
    const std::string& file = *it;
    const std::string copy = scratch.path() + "/" + file;
    // Nights as nightly chooses them (night_window.hpp): a stamp in the future, or one that is no time, is no night.
    const std::string misnamed = night_name_problem(file, now);
    if (!misnamed.empty()) {
      history.skipped.push_back(file + ": " + misnamed);
      continue;
    }
    std::error_code error;
    fs::copy_file(dir + "/" + file, copy, fs::copy_options::overwrite_existing, error);
    if (error) {
      history.skipped.push_back(file + ": cannot copy it (" + error.message() + ")");
      continue;
    }
    try {
      auto database = std::make_unique<storage::ReadableDatabase>(copy);
      const auto run = database->reader().latest_run();
      if (!run) {
        history.skipped.push_back(file + ": no run in it");
        continue;
      }
      database->reader().check_run(run->run_id);  // a damaged night is skipped, by its value (issue 33)
      const std::string not_its_night = night_run_problem(file, run->started_at);
      if (!not_its_night.empty()) {
        history.skipped.push_back(file + ": " + not_its_night);
        continue;
      }
      history.nights.push_back({file, stamp_in(file), *run, {}, 0});
      databases.push_back(std::move(database));
    } catch (const std::exception& problem) {
      std::string why = storage::without_db_advice(problem.what());
      for (auto at = why.find(copy); at != std::string::npos; at = why.find(copy)) why.replace(at, copy.size(), file);
      history.skipped.push_back(file + ": " + why);
    }
  }
  std::reverse(history.nights.begin(), history.nights.end());
  std::reverse(databases.begin(), databases.end());
  std::reverse(history.skipped.begin(), history.skipped.end());
  if (history.nights.empty()) {
    throw BadInputError(dir + ": no readable nightly-<stamp>.db in it" +
                        (history.skipped.empty() ? std::string() : " (" + text::join(history.skipped, "; ") + ")"));
  }

  // Each night's cases, and what changed against the night before (compare's verdicts).
  std::map<compare::CaseKey, std::size_t> case_order;
  std::vector<compare::CaseKey> keys;
  std::map<std::pair<compare::CaseKey, std::size_t>, HistoryPoint> points;
  // Each night is read once, for its points and for compare on either side of
  // it, and kept only while it can still be a later night's baseline.
  std::vector<std::optional<compare::RunCases>> runs(history.nights.size());
  for (std::size_t i = 0; i < history.nights.size(); ++i) {
    HistoryNight& night = history.nights[i];
    runs[i] = compare::read_run_cases(databases[i]->reader(), night.run.run_id);
    for (const compare::ComparedCase& compared : runs[i]->cases) {
      const storage::CaseRow& row = compared.row;
      const compare::CaseKey& key = compared.key;
      if (points.count({key, i})) continue;  // a key measured twice: the first
      if (!case_order.count(key)) {
        case_order[key] = keys.size();
        keys.push_back(key);
      }
      HistoryPoint point;
      point.key = key;
      point.night = i;
      point.status = row.status;
      if (row.status == CaseStatus::ok) point.median_us = row.median_us();
      point.kernels_per_forward = row.kernels_per_forward;
      if (row.status == CaseStatus::ok) point.energy_j = row.energy_j;
      points.emplace(std::make_pair(key, i), std::move(point));
    }
    // Against the nearest earlier night that nightly could have used: finished,
    // on the same kind of device (an interrupted or CPU-fallback night is no
    // baseline for the next).
    std::optional<std::size_t> previous;
    for (std::size_t j = i; j-- > 0;) {
      const storage::RunRow& earlier = history.nights[j].run;
      if (earlier.status == RunStatus::done && earlier.device.kind() == night.run.device.kind()) {
        previous = j;
        break;
      }
    }
    if (previous) {
      const compare::Comparison comparison = compare::compare_runs(*runs[*previous], *runs[i], request.settings);
      night.environment = comparison.environment;
      for (const compare::CaseComparison& c : comparison.cases) {
        const std::string changed = changes_of(c);
        if (changed.empty()) continue;
        ++night.changed_cases;
        const auto found = points.find({c.key, i});
        if (found != points.end()) found->second.changed = changed;
      }
    }
    // An unfinished night is no one's baseline; a finished one replaces the
    // earlier baseline of its kind of device.
    for (std::size_t j = 0; j <= i; ++j) {
      const storage::RunRow& earlier = history.nights[j].run;
      const bool superseded = night.run.status == RunStatus::done && j < i && earlier.device.kind() == night.run.device.kind();
      if (superseded || (j == i && night.run.status != RunStatus::done)) runs[j].reset();
    }
  }
  // Accepted changes (acceptance.hpp): marked on the night each names, for the cases it covers.
  std::string unreadable;
  history.acceptances = read_acceptances(dir, unreadable);
  for (std::istringstream lines(unreadable); std::getline(lines, unreadable);) {
    history.skipped.push_back(unreadable.substr(unreadable.find(' ') + 1));
  }
  for (auto& [where, point] : points) {
    for (const Acceptance& a : history.acceptances) {
      if (a.night != history.nights[where.second].stamp || !a.covers(where.first)) continue;
      point.accepted += std::string(point.accepted.empty() ? "" : "; ") + "ACCEPTED by " + a.by + " (" + a.reason + ", " + a.file + ")";
    }
  }
  for (const compare::CaseKey& key : keys) {
    for (std::size_t i = 0; i < history.nights.size(); ++i) {
      const auto found = points.find({key, i});
      if (found != points.end()) history.points.push_back(found->second);
    }
  }
  return history;
}

const std::vector<std::string>& version_fact_names() {
  static const std::vector<std::string> names = {"torch", "cuda", "cudnn", "driver", "commit", "attnsweep", "image",
                                                     "op_library"};
  return names;
}

std::vector<std::string> parse_version_facts(const std::string& list) {
  std::vector<std::string> facts;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    if (std::find(version_fact_names().begin(), version_fact_names().end(), item) == version_fact_names().end()) {
      throw BadInputError("--by: unknown fact '" + item + "'; allowed: " + text::join(version_fact_names(), ", ") +
                          " (comma-separated)");
    }
    if (std::find(facts.begin(), facts.end(), item) == facts.end()) facts.push_back(item);
  }
  if (facts.empty()) throw BadInputError("--by: give at least one of " + text::join(version_fact_names(), ", "));
  return facts;
}

namespace {

// A version fact of a night's run, by its --by name.
std::string version_of(const storage::RunRow& run, const std::string& fact) {
  if (fact == "torch") return run.torch_version;
  if (fact == "cuda") return run.cuda_version;
  if (fact == "cudnn") return run.cudnn_version;
  if (fact == "driver") return run.driver_version;
  if (fact == "commit") return run.git_sha;
  if (fact == "attnsweep") return run.attnsweep_version;
  if (fact == "op_library") return run.op_libraries;
  return run.container_image;
}

// Whether an environment difference is a version: the software a night ran.
bool is_version(const compare::EnvironmentDifference& difference) {
  for (const char* fact : {"torch_version", "cuda_version", "cudnn_version", "driver_version", "git_sha",
                           "attnsweep_version", "container_image", "op_libraries"}) {
    if (difference.fact == fact) return true;
  }
  return false;
}

}  // namespace

report::Table history_table(const History& history, const std::vector<std::string>& by) {
  using report::Align;
  using report::Cell;
  const bool energy = std::any_of(history.points.begin(), history.points.end(),
                                  [](const HistoryPoint& p) { return p.energy_j.has_value(); });
  report::Table table;
  table.columns = {{"night"}};
  for (const std::string& fact : by) table.columns.push_back({fact});
  for (report::Column column : std::vector<report::Column>{{"case"}, {"status"}, {"median_us", "us", Align::right},
                                                            {"kernels", "", Align::right}}) {
    table.columns.push_back(std::move(column));
  }
  if (energy) table.columns.push_back({"energy_j", "J", Align::right});
  table.columns.push_back({"changed", "", Align::left, ""});
  table.columns.push_back({"environment", "", Align::left, ""});
  for (const HistoryPoint& p : history.points) {
    const HistoryNight& night = history.nights[p.night];
    std::vector<Cell> row = {Cell::text(night.stamp)};
    for (const std::string& fact : by) {
      const std::string value = version_of(night.run, fact);
      row.push_back(value.empty() ? Cell::null() : Cell::text(value));
    }
    for (Cell cell : {Cell::text(p.key.label()), Cell::text(to_string(p.status)),
                      p.median_us ? Cell::real(*p.median_us, 1) : Cell::null(),
                      p.kernels_per_forward ? Cell::integer(*p.kernels_per_forward) : Cell::null()}) {
      row.push_back(std::move(cell));
    }
    if (energy) row.push_back(p.energy_j ? Cell::real(*p.energy_j, 4) : Cell::null());
    const std::string changed = p.changed + (p.changed.empty() || p.accepted.empty() ? "" : "; ") + p.accepted;
    row.push_back(changed.empty() ? Cell::null() : Cell::text(changed));
    const std::string environment = environment_text(night.environment);
    row.push_back(p.changed.empty() || environment.empty() ? Cell::null() : Cell::text(environment));
    table.add_row(std::move(row));
  }
  return table;
}

report::Table culprit_table(const History& history) {
  using report::Cell;
  report::Table table;
  table.columns = {{"case"}, {"night"}, {"changed"}, {"versions changed", "", report::Align::left, ""},
                   {"other differences", "", report::Align::left, ""}, {"accepted", "", report::Align::left, ""}};
  for (const HistoryPoint& p : history.points) {
    if (p.changed.empty()) continue;
    const HistoryNight& night = history.nights[p.night];
    std::vector<compare::EnvironmentDifference> versions, others;
    for (const compare::EnvironmentDifference& d : night.environment) (is_version(d) ? versions : others).push_back(d);
    table.add_row({Cell::text(p.key.label()), Cell::text(night.stamp), Cell::text(p.changed),
                   Cell::text(versions.empty() ? "none (the same versions: the machine, the environment or noise)"
                                               : environment_text(versions)),
                   others.empty() ? Cell::null() : Cell::text(environment_text(others)),
                   p.accepted.empty() ? Cell::null() : Cell::text(p.accepted)});
  }
  return table;
}

std::string history_html(const History& history) {
  // The data the script draws: nights, their environment differences, and per family one line per variant.
  json data;
  data["nights"] = json::array();
  data["environment"] = json::array();
  for (const HistoryNight& night : history.nights) {
    data["nights"].push_back(night.stamp);
    data["environment"].push_back(environment_text(night.environment));
  }
  std::vector<std::string> families;
  std::map<std::string, std::vector<std::string>> variants;  // by family, in first-seen order
  std::map<std::pair<std::string, std::string>, json> lines;
  for (const HistoryPoint& p : history.points) {
    const std::string family = family_of(p.key);
    if (!variants.count(family)) families.push_back(family);
    auto& names = variants[family];
    if (std::find(names.begin(), names.end(), p.key.variant) == names.end()) {
      names.push_back(p.key.variant);
      const std::size_t n = history.nights.size();
      lines[{family, p.key.variant}] = {{"variant", p.key.variant},
                                        {"median_us", std::vector<json>(n, nullptr)},
                                        {"kernels", std::vector<json>(n, nullptr)},
                                        {"energy_j", std::vector<json>(n, nullptr)},
                                        {"changed", std::vector<json>(n, "")}};
    }
    json& line = lines[{family, p.key.variant}];
    if (p.median_us) line["median_us"][p.night] = *p.median_us;
    if (p.kernels_per_forward) line["kernels"][p.night] = *p.kernels_per_forward;
    if (p.energy_j) line["energy_j"][p.night] = *p.energy_j;
    line["changed"][p.night] = p.changed;
  }
  data["families"] = json::array();
  for (const std::string& family : families) {
    json entry = {{"name", family}, {"lines", json::array()}};
    for (const std::string& variant : variants[family]) entry["lines"].push_back(lines[{family, variant}]);
    data["families"].push_back(entry);
  }

  std::ostringstream out;
  const std::string title = "attnsweep history: " + history.history_dir;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << report::html_text(title)
      << "</title>\n<style>" << kHistoryStyle << "</style>\n</head>\n<body>\n<h1>" << report::html_text(title)
      << "</h1>\n<h2>Nights</h2>\n<table>\n<tr><th>night</th><th>file</th><th>run</th><th>status</th><th>device</th>"
      << "<th>cases changed</th><th>environment against the night before</th></tr>\n";
  for (const HistoryNight& night : history.nights) {
    out << "<tr" << (night.changed_cases > 0 ? " class=\"changed\"" : "") << "><td>" << report::html_text(night.stamp)
        << "</td><td>" << report::html_text(night.file) << "</td><td>" << night.run.run_id << "</td><td>"
        << to_string(night.run.status) << "</td><td>" << report::html_text(night.run.device.to_string()) << "</td><td>"
        << night.changed_cases << "</td><td>" << report::html_text(environment_text(night.environment)) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (!history.skipped.empty()) {
    out << "<p>Skipped: " << report::html_text(text::join(history.skipped, "; ")) << "</p>\n";
  }
  out << "<h2>Median per forward, one chart per case family</h2>\n<p>A triangle marks a night on which the case "
         "changed against the night before (a count, backend, status or numerics change, or a FASTER or SLOWER time: "
         "attnsweep compare's verdicts); its tooltip lists the change and the environment differences that came "
         "with it.</p>\n<div id=\"charts\"></div>\n"
      << "<script type=\"application/json\" id=\"history-data\">"
      << report::json_in_script(data.dump(-1, ' ', false, json::error_handler_t::replace)) << "</script>\n<script>\n"
      << embedded::chart_js << "\n</script>\n<script>\n" << kHistoryScript << "</script>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace attnsweep::workflows
