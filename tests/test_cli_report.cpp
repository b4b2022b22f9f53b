// `attnsweep report` end to end on the CPU: a real sweep with traces, the HTML
// rendered by headless Chromium (skipped only where no Chromium is installed)
// with a probe that checks the charts drew, the markdown tables, --compare,
// trace links that survive moving the folder, and each bad input's one line.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/common/sha256.hpp"
#include "runner/measure/statistics.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/cli_run_cut_short.hpp"
#include "tests/support/cli_test.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/run_record.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::Outcome;
using nlohmann::json;

// 18 CPU cases: naive and sdpa_math run (12 ok), sdpa_cudnn is CUDA-only (6 unsupported).
const char* const kConfig = R"(name: report-test
device: cpu
variants: [naive, sdpa_math, sdpa_cudnn]
dtypes: [fp32, bf16]
shapes: {batch: 1, heads: 2, seq_len: [16, 32, 64], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false, traces: true}
)";
constexpr int kCases = 18, kOk = 12;

using attnsweep::testing::read_file;

int matches(const std::string& text, const std::string& pattern) {
  const std::regex expression(pattern);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), expression), std::sregex_iterator()));
}

std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// The data the report embedded for its script.
json embedded_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const auto start = html.find(open);
  if (start == std::string::npos) return json();
  const auto end = html.find("</script>", start);
  return json::parse(html.substr(start + open.size(), end - start - open.size()));
}

// Debian's chromium-headless-shell, or chromium; ATTNSWEEP_CHROMIUM names another.
std::string chromium() {
  if (const char* chosen = std::getenv("ATTNSWEEP_CHROMIUM")) return chosen;
  for (const char* candidate : {"/usr/bin/chromium-headless-shell", "/usr/bin/chromium"}) {
    if (fs::exists(candidate)) return candidate;
  }
  return "";
}

// Chromium's options for a headless page that runs its script for up to 10 s of
// virtual time, with its profile in `profile_folder`; with `hide_scrollbars` for screenshots.
std::string chromium_flags(const std::string& profile_folder, bool hide_scrollbars = true) {
  return std::string(" --headless --no-sandbox --disable-gpu") + (hide_scrollbars ? " --hide-scrollbars" : "") +
         " --user-data-dir=" + profile_folder + " --virtual-time-budget=10000 ";
}

// Declares `name`, the Chromium to draw the report in, or skips the test where there is none.
#define REQUIRE_CHROMIUM(name)         \
  const std::string name = chromium(); \
  if (name.empty()) GTEST_SKIP() << "no Chromium (Debian chromium-headless-shell or chromium)"

std::string shell(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  pclose(pipe);
  return output;
}

// The page as a browser draws it: a probe script is added around the report's
// own (in a copy), and Chromium prints the DOM after. What the probe saw, as
// JSON; null when the page printed no probe. `flags` go to Chromium.
json probe_in_chromium(const std::string& browser, const std::string& report, const std::string& flags) {
  std::string html = read_file(report);
  const std::string catch_errors =
      "<script>window.__probeErrors=[];window.addEventListener('error',function(e){window.__probeErrors.push("
      "String(e.message));});</script>";
  // For a run of several passes, what each pass button shows after a click (by_pass).
  const std::string probe = R"(<script>(function(){
var r = window.attnsweepReport || {charts: []};
var texts = function (selector) { return Array.prototype.map.call(document.querySelectorAll(selector), function (e) { return e.textContent; }); };
function snapshot() {
  var kinds = {}, points = {};
  r.charts.forEach(function (c) {
    kinds[c.kind] = (kinds[c.kind] || 0) + 1;
    c.chart.data.datasets.forEach(function (d, i) {
      if (d.roof || d.reference) return;
      points[c.kind] = (points[c.kind] || 0) + c.chart.getDatasetMeta(i).data.length;
    });
  });
  return {canvases: document.querySelectorAll('canvas').length, charts: kinds, points: points,
    drawn: r.charts.filter(function (c) { return c.chart.chartArea && c.chart.chartArea.right > c.chart.chartArea.left + 100; }).length,
    titles: r.charts.map(function (c) { return c.chart.options.plugins.title.text; }),
    rows: document.querySelectorAll('#results-table tbody tr.case-row').length,
    headers: texts('#results-table thead th'),
    cells: Array.prototype.map.call(document.querySelectorAll('#results-table tbody tr.case-row'), function (tr) {
      return Array.prototype.map.call(tr.children, function (td) { return td.textContent; }); }),
    failures: document.querySelectorAll('#failures tbody tr').length,
    failures_text: document.getElementById('failures').textContent,
    selected: texts('#pass-selector button.selected'),
    shape_lists: r.shapeLists ? r.shapeLists() : null,
    time_heading: document.querySelector('#charts-time h2').textContent,
    shape_note: (function (p) { return p && !p.hidden ? p.textContent : ''; })(document.getElementById('shape-note')),
    shape_charts: r.charts.filter(function (c) { return /-shapes$/.test(c.kind); }).map(function (c) {
      return {kind: c.kind, type: c.chart.config.type, title: c.chart.options.plugins.title.text, labels: c.chart.data.labels,
        legend: c.chart.legend.legendItems.map(function (item) { return item.text; }), y: c.chart.scales.y.type,
        box: c.chart.canvas.parentNode.className,
        datasets: c.chart.data.datasets.map(function (d) { return {label: d.label, data: d.data, cases: d.cases || null}; }),
        // The categories as drawn under the bars: the angle Chart.js turned them by, the distance
        // between neighbours, and the widest line and line count of each (in the ticks' font).
        x_ticks: (function (scale) {
          var font = Chart.helpers.toFont(scale.options.ticks.font);
          scale.ctx.save();
          scale.ctx.font = font.string;
          var ticks = scale.ticks.map(function (t) {
            var lines = [].concat(t.label);
            return {lines: lines.length, widest: Math.max.apply(null, lines.map(function (l) { return scale.ctx.measureText(l).width; }))};
          });
          scale.ctx.restore();
          return {rotation: scale.labelRotation, line_height: font.lineHeight, ticks: ticks,
                  spacing: scale.ticks.length > 1 ? scale.getPixelForTick(1) - scale.getPixelForTick(0) : scale.width};
        })(c.chart.scales.x)};
    }),
    // A split group's length sweeps (docs/report.md): a small chart of lines per sweep family.
    split_groups: r.splitGroups ? r.splitGroups() : null,
    family_note: (function (p) { return p && !p.hidden ? p.textContent : ''; })(document.getElementById('family-note')),
    family_headings: texts('.family-set h3'),
    family_charts: r.charts.filter(function (c) { return /-family$/.test(c.kind); }).map(function (c) {
      return {kind: c.kind, type: c.chart.config.type, title: c.chart.options.plugins.title.text, x: c.chart.scales.x.type,
        y: c.chart.scales.y.type, legend: c.chart.legend.legendItems.map(function (item) { return item.text; }),
        box: c.chart.canvas.parentNode.parentNode.className,
        datasets: c.chart.data.datasets.filter(function (d) { return !d.reference; }).map(function (d) {
          return {label: d.label, points: d.data}; }),
        references: c.chart.data.datasets.filter(function (d) { return d.reference; }).length};
    })};
}
var out = snapshot();
out.errors = window.__probeErrors;
out.rendered = document.body.getAttribute('data-rendered');
out.pass_buttons = texts('#pass-selector button');
out.injected = document.querySelectorAll('img, iframe, object, embed').length;
out.scripts = document.scripts.length;
out.trace_links = Array.prototype.map.call(document.querySelectorAll('a.trace'), function (a) { return a.href; });
out.planted = window.__planted || null;
out.by_pass = {};
Array.prototype.forEach.call(document.querySelectorAll('#pass-selector button'), function (button) {
  button.click();
  out.by_pass[button.getAttribute('data-pass')] = snapshot();
});
out.errors_after_clicks = window.__probeErrors;
var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
})();</script>)";
  html.insert(html.find("<head>") + 6, catch_errors);
  html.insert(html.rfind("</body>"), probe);
  const std::string probed = (fs::path(report).parent_path() / "probed.html").string();
  std::ofstream(probed) << html;
  const std::string dom = shell(browser + flags + "--dump-dom file://" + probed);
  // Found with find, not std::regex: libstdc++'s regex recurses per character and
  // overflows the stack on a probe of a few hundred kilobytes (a run of many charts).
  const std::string open = "<pre id=\"probe\">";
  const auto start = dom.find(open);
  if (start == std::string::npos) return json();
  const auto end = dom.find("</pre>", start);
  if (end == std::string::npos) return json();
  std::string text = dom.substr(start + open.size(), end - start - open.size());
  for (const auto& [entity, character] : {std::pair<std::string, std::string>{"&quot;", "\""}, {"&gt;", ">"}, {"&lt;", "<"}, {"&amp;", "&"}}) {
    for (std::size_t at = 0; (at = text.find(entity, at)) != std::string::npos; ++at) text.replace(at, entity.size(), character);
  }
  return json::parse(text);
}

class CliReport : public attnsweep::testing::CliTest {
 protected:
  CliReport() : CliTest("report") {}
  void SetUp() override {
    config_ = write("sweep.yaml", kConfig);
    db_ = path("results.db");
    const Outcome outcome = run("-q run " + config_ + " --db " + db_);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  }

  static Outcome run(const std::string& arguments) { return attnsweep::testing::run_attnsweep(arguments); }

  // Exit 2, one line "error: report: ..." holding `expected`, and no report written.
  void expect_refused(const std::string& arguments, const std::string& expected) {
    const std::string before = attnsweep::sha256_hex(read_file(db_));
    const Outcome outcome = run("report " + arguments);
    EXPECT_EQ(outcome.exit_code, 2) << arguments << "\n" << outcome.output;
    EXPECT_EQ(lines(outcome.output), 1u) << outcome.output;
    EXPECT_EQ(outcome.output.rfind("error: report: ", 0), 0u) << outcome.output;
    EXPECT_NE(outcome.output.find(expected), std::string::npos) << outcome.output;
    EXPECT_EQ(attnsweep::sha256_hex(read_file(db_)), before) << "the database changed";
    EXPECT_FALSE(fs::exists(path("results-report.html")));
  }

  std::string config_, db_;
};

TEST_F(CliReport, TheHtmlIsOneFileWithEveryCaseItsReasonsAndItsTraces) {
  const Outcome outcome = run("report " + db_);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string report = path("results-report.html");  // the default: beside the database
  EXPECT_NE(outcome.output.find("report of run 1 (18 cases) written to " + report), std::string::npos) << outcome.output;
  const std::string html = read_file(report);
  // Self-contained: Chart.js inline, nothing loaded from anywhere.
  EXPECT_NE(html.find("Chart.js v"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  const json data = embedded_data(html);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["run"]["run_id"], 1);
  EXPECT_EQ(data["run"]["cpu"], true);
  ASSERT_EQ(data["cases"].size(), static_cast<std::size_t>(kCases));
  int ok = 0, unsupported = 0, traced = 0;
  for (const json& c : data["cases"]) {
    if (c["status"] == "ok") {
      ++ok;
      EXPECT_GT(c["time_us"].get<double>(), 0) << c.dump();
      EXPECT_GT(c["ai"].get<double>(), 0) << c.dump();
      if (c["variant"] == "naive") {
        EXPECT_DOUBLE_EQ(c["vs_naive"].get<double>(), 1.0);
      } else {
        EXPECT_GT(c["vs_naive"].get<double>(), 0) << c.dump();
      }
      // Each trace linked relative to the report, and there.
      const std::string link = c["trace"];
      EXPECT_EQ(link.rfind("results-traces/run1-", 0), 0u) << link;
      EXPECT_TRUE(c["trace_exists"].get<bool>());
      EXPECT_TRUE(fs::is_regular_file(fs::path(report).parent_path() / link)) << link;
      ++traced;
    } else {
      ++unsupported;
      EXPECT_EQ(c["status"], "unsupported");
      EXPECT_EQ(c["variant"], "sdpa_cudnn");
      EXPECT_FALSE(c["error"].get<std::string>().empty()) << c.dump();
      EXPECT_TRUE(c["time_us"].is_null());
    }
  }
  EXPECT_EQ(ok, kOk);
  EXPECT_EQ(unsupported, kCases - kOk);
  EXPECT_EQ(traced, kOk);
  // The environment fingerprint is there, and the section for failures.
  const json& environment = data["environment"];
  EXPECT_TRUE(std::any_of(environment.begin(), environment.end(), [](const json& fact) { return fact[0] == "torch"; }));
  EXPECT_NE(html.find("id=\"failures\""), std::string::npos);
  // Forward only: the page speaks of forwards, as it always did.
  EXPECT_EQ(data["passes"], json({"forward"}));
  for (const json& c : data["cases"]) {
    EXPECT_EQ(c["pass"], "forward");
    EXPECT_TRUE(c["grad_rel_error"].is_null());
  }
  EXPECT_NE(html.find("<h2>Kernels per forward</h2>"), std::string::npos);
  EXPECT_NE(html.find("the speed-up over naive attention on the same shape, dtype and mask."), std::string::npos);
  EXPECT_EQ(html.find("per pass"), std::string::npos);
}

// The page as a browser draws it: no script error, a canvas per chart, and as
// many points in the time charts as there are timed cases.
TEST_F(CliReport, ChromiumDrawsEveryChartWithAPointPerTimedCase) {
  REQUIRE_CHROMIUM(browser);
  ASSERT_EQ(run("report " + db_ + " -o " + path("r.html")).exit_code, 0);
  const std::string flags = chromium_flags(path("chromium"));
  const json probe_out = probe_in_chromium(browser, path("r.html"), flags);
  ASSERT_TRUE(probe_out.is_object());
  const std::string text = probe_out.dump();
  EXPECT_EQ(probe_out["errors"], json::array()) << text;
  EXPECT_EQ(probe_out["rendered"], "yes") << text;
  // One time chart and one speed-up chart per dtype and head_dim (fp32 and bf16, 8), one roofline per dtype;
  // no kernel chart on a CPU run.
  EXPECT_EQ(probe_out["charts"], json({{"time", 2}, {"speedup-naive", 2}, {"roofline", 2}})) << text;
  EXPECT_EQ(probe_out["canvases"], 6) << text;
  EXPECT_EQ(probe_out["drawn"], 6) << text;
  EXPECT_EQ(probe_out["points"]["time"], kOk) << text;
  EXPECT_EQ(probe_out["points"]["roofline"], kOk) << text;
  EXPECT_EQ(probe_out["points"]["speedup-naive"], kOk / 2) << text;  // sdpa_math's; naive is the reference
  EXPECT_EQ(probe_out["rows"], kCases) << text;
  EXPECT_EQ(probe_out["failures"], kCases - kOk) << text;
  // A forward-only run: no pass selector, no pass column, no gradient columns; words of a forward.
  EXPECT_EQ(probe_out["pass_buttons"], json::array()) << text;
  EXPECT_EQ(probe_out["by_pass"], json::object()) << text;
  for (const char* column : {"pass", "grad error", "backward backend"}) {
    EXPECT_EQ(std::count(probe_out["headers"].begin(), probe_out["headers"].end(), column), 0) << column << "\n" << text;
  }
  EXPECT_EQ(probe_out["headers"][3], "mask") << text;
  EXPECT_EQ(probe_out["headers"][4], "CPU time (µs)") << text;
  EXPECT_NE(probe_out["titles"].dump().find("CPU time per forward"), std::string::npos) << text;

  // A screenshot of the report itself, kept in the build folder to look at.
  const std::string screenshot = (fs::current_path() / "report-cpu-screenshot.png").string();
  fs::remove(screenshot);
  shell(browser + flags + "--window-size=1400,2600 --screenshot=" + screenshot + " file://" + path("r.html"));
  const std::string png = read_file(screenshot);
  ASSERT_GT(png.size(), 50000u) << screenshot;
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

TEST_F(CliReport, MarkdownHasTheStudysTableTheFailuresAndTheEnvironment) {
  const Outcome outcome = run("report " + db_ + " --format markdown");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string& md = outcome.output;
  EXPECT_EQ(md.rfind("# attnsweep report: report-test, run 1\n", 0), 0u) << md.substr(0, 200);
  EXPECT_NE(md.find("18 of 18 cases: 12 ok, 6 unsupported, 0 failed."), std::string::npos) << md;
  for (const char* heading : {"\n## Environment\n", "\n## Results\n", "\n## Unsupported and failed cases\n"}) {
    EXPECT_NE(md.find(heading), std::string::npos) << heading;
  }
  // Kernel counts and ceilings exist on CUDA runs only: a CPU run's table leaves those columns out.
  EXPECT_NE(md.find("| variant | shape | dtype | mask | status | CPU time (us) | CPU dispatch (us) | TFLOP/s | rel. error | numerics | validity | vs naive |"), std::string::npos) << md;
  EXPECT_NE(md.find("| naive | 1x2x16x8 | fp32 | causal | ok |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1.00x |"), std::string::npos) << md;  // naive against itself
  // One row per case in the results table, and the unsupported ones again with their reason.
  EXPECT_EQ(matches(md, "\\n\\| (naive|sdpa_math) \\| 1x2x\\d+x8 \\| (fp32|bf16) \\| causal \\| ok \\|"), kOk);
  EXPECT_EQ(matches(md, "\\n\\| sdpa_cudnn \\| 1x2x\\d+x8 \\| (fp32|bf16) \\| causal \\| unsupported \\| - \\|"), kCases - kOk);
  EXPECT_EQ(matches(md, "\\n\\| sdpa_cudnn \\| 1x2x\\d+x8 \\| (fp32|bf16) \\| causal \\| unsupported \\| [^|\\n]{10,} \\|(?=\\n)"),
            kCases - kOk);
  EXPECT_NE(md.find("| torch | 2."), std::string::npos) << md;
  // Forward only: one results section, no pass column, no gradient columns.
  EXPECT_EQ(md.find("## Results: "), std::string::npos) << md;
  EXPECT_EQ(md.find("| pass |"), std::string::npos) << md;
  EXPECT_EQ(md.find("grad error"), std::string::npos) << md;
  EXPECT_EQ(md.find("backward backend"), std::string::npos) << md;
  // -o writes the same text into a file.
  ASSERT_EQ(run("report " + db_ + " --format markdown -o " + path("r.md")).exit_code, 0);
  EXPECT_EQ(read_file(path("r.md")), md);
}

// Hardware counters (issue 39): the DRAM bandwidth's share is of the copy ceiling of the GPU that
// ran the case (run_devices, the results view's), not the run's: a --gpus run measures one per GPU.
TEST_F(CliReport, MarkdownCountersShareTheCeilingOfTheDeviceThatRanTheCase) {
  std::string expected, runs_share;
  {
    SQLite::Database db(db_, SQLite::OPEN_READWRITE);
    // The time fixed too (400 GB/s: 40% and 10%): with the measured CPU time, a loaded CI machine made the
    // bandwidth so small that both shares printed "0.0%".
    db.exec("UPDATE cases SET dram_read_bytes = 3e6, dram_write_bytes = 1e6, l2_hit_rate = 0.5, counter_seconds = 1.5, "
            "cpu_time_us_median = 10 WHERE variant = 'naive' AND dtype = 'fp32' AND seq_len_q = 64");
    db.exec("UPDATE runs SET ceiling_copy_gbps = 4000");
    ASSERT_EQ(db.exec("UPDATE run_devices SET ceiling_copy_gbps = 1000"), 1);
    expected = db.execAndGet("SELECT printf('%.1f%%', 100 * dram_bandwidth_share) FROM results "
                             "WHERE dram_read_bytes IS NOT NULL").getString();
    runs_share = db.execAndGet("SELECT printf('%.1f%%', 100 * dram_bandwidth_gbps / 4000) FROM results "
                               "WHERE dram_read_bytes IS NOT NULL").getString();
    const double gbps = db.execAndGet("SELECT dram_bandwidth_gbps FROM results WHERE dram_read_bytes IS NOT NULL").getDouble();
    ASSERT_GT(gbps, 0);
    ASSERT_NE(expected, runs_share);
  }
  const Outcome outcome = run("report " + db_ + " --format markdown");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string& md = outcome.output;
  ASSERT_NE(md.find("\n## Hardware counters\n"), std::string::npos) << md;
  const auto row = md.find("\n| naive | 1x2x64x8 | fp32 | causal | 3.00 | 1.00 |", md.find("## Hardware counters"));
  ASSERT_NE(row, std::string::npos) << md;
  const std::string line = md.substr(row + 1, md.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find("| " + expected + " | 50.0% |"), std::string::npos) << line << "\nexpected share " << expected;
  EXPECT_EQ(line.find("| " + runs_share + " |"), std::string::npos) << line;
}

TEST_F(CliReport, CompareAddsTheSpeedUpOverThePreviousRunAndItsVerdicts) {
  ASSERT_EQ(run("-q run " + config_ + " --db " + db_).exit_code, 0);  // run 2
  const Outcome outcome = run("report " + db_ + " --compare " + db_ + ":1 -o " + path("c.html"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const json data = embedded_data(read_file(path("c.html")));
  EXPECT_EQ(data["run"]["run_id"], 2);
  ASSERT_TRUE(data["compare"].is_object());
  EXPECT_EQ(data["compare"]["baseline"]["run_id"], 1);
  EXPECT_EQ(data["compare"]["baseline"]["path"], db_);
  int verdicts = 0;
  for (const json& c : data["cases"]) {
    if (c["status"] != "ok") continue;
    EXPECT_GT(c["vs_previous"].get<double>(), 0) << c.dump();
    EXPECT_TRUE(std::set<std::string>({"SAME", "FASTER", "SLOWER", "AMBIGUOUS"}).count(c["verdict"].get<std::string>())) << c.dump();
    ++verdicts;
  }
  EXPECT_EQ(verdicts, kOk);
  const std::string md = run("report " + db_ + " --compare " + db_ + ":1 --format markdown").output;
  EXPECT_NE(md.find("\n## Compared with run 1 of " + db_ + "\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| vs previous | verdict |"), std::string::npos) << md;
  // Run 1 reported with --run, against nothing.
  ASSERT_EQ(run("report " + db_ + " --run 1 -o " + path("one.html")).exit_code, 0);
  EXPECT_EQ(embedded_data(read_file(path("one.html")))["run"]["run_id"], 1);
  EXPECT_TRUE(embedded_data(read_file(path("one.html")))["compare"].is_null());
}

// The database and its traces copied elsewhere, the report written into a third folder:
// every trace link still leads to the file.
TEST_F(CliReport, TraceLinksFollowTheDatabaseWhereverItAndTheReportGo) {
  const fs::path moved = path("moved");
  fs::create_directories(moved);
  SQLite::Database(db_, SQLite::OPEN_READWRITE).exec("PRAGMA wal_checkpoint(TRUNCATE)");
  fs::copy_file(db_, moved / "results.db");
  fs::copy(path("results-traces"), moved / "results-traces");
  fs::create_directories(path("reports/deep"));
  const std::string report = path("reports/deep/r.html");
  ASSERT_EQ(run("report " + (moved / "results.db").string() + " -o " + report).exit_code, 0);
  int linked = 0;
  const json data = embedded_data(read_file(report));  // kept: a range over a temporary's member would dangle
  for (const json& c : data["cases"]) {
    if (c["status"] != "ok") continue;
    const std::string link = c["trace"];
    EXPECT_EQ(link.rfind("../../moved/results-traces/", 0), 0u) << link;
    EXPECT_TRUE(fs::is_regular_file(fs::path(report).parent_path() / link)) << link;
    ++linked;
  }
  EXPECT_EQ(linked, kOk);
  // --trace-url-base: where the folder is served, for Perfetto links.
  ASSERT_EQ(run("report " + db_ + " -o " + path("u.html") + " --trace-url-base https://example.org/night/").exit_code, 0);
  EXPECT_EQ(embedded_data(read_file(path("u.html")))["meta"]["trace_url_base"], "https://example.org/night");
}

// Text from the database is data, never markup: a run name, a variant and error
// messages holding "</script>", "<!--", "<img onerror>", quotes, '|', line
// breaks and bytes that are not UTF-8 neither end the embedded JSON, nor run,
// nor break a markdown table or heading.
TEST_F(CliReport, TextFromTheDatabaseIsShownAsTextInBothFormats) {
  const std::string name = "night</script><script>window.__planted=1</script><!-- x\n# not a heading | y";
  const std::string variant = "naive</SCRIPT ><img src=x onerror=\"window.__planted=2\">";
  const std::string error = "bad | pipe\r\nline <!-- comment --> <img src=x onerror=window.__planted=3> std::vector<float> & 'q' \"d\"";
  const std::string not_utf8 = std::string("cut \xC3\x28 \xFF </script>");
  {
    SQLite::Database db(db_, SQLite::OPEN_READWRITE);
    SQLite::Statement rename(db, "UPDATE runs SET name = ?");
    rename.bind(1, name);
    rename.exec();
    SQLite::Statement variants(db, "UPDATE cases SET variant = ? WHERE plan_index = 1");
    variants.bind(1, variant);
    variants.exec();
    SQLite::Statement errors(db, "UPDATE cases SET error_message = ? WHERE plan_index = 2");
    errors.bind(1, error);
    errors.exec();
    // Trace files whose names a URL would read otherwise: as a scheme, a fragment, a query.
    db.exec("UPDATE cases SET trace_path = 'javascript:window.__planted=4' WHERE plan_index = 0");
    db.exec("UPDATE cases SET trace_path = 'night #1/x?.json' WHERE plan_index = 3");
    SQLite::Statement bytes(db, "UPDATE cases SET error_message = CAST(? AS TEXT) WHERE plan_index = 5");
    bytes.bind(1, not_utf8.data(), static_cast<int>(not_utf8.size()));
    bytes.exec();
  }
  write("javascript:window.__planted=4", "{}");
  fs::create_directories(path("night #1"));
  write("night #1/x?.json", "{}");
  ASSERT_EQ(run("report " + db_ + " -o " + path("r.html")).exit_code, 0);
  const std::string html = read_file(path("r.html"));
  // One <script> element of data, then Chart.js and the report's: nothing planted ended it.
  EXPECT_EQ(matches(html, "</script>"), 3) << "a planted </script> ended an element";
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  const json data = embedded_data(html);  // parses: "<\!--" would not
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["run"]["name"], name);
  EXPECT_EQ(data["cases"][1]["variant"], variant);
  EXPECT_EQ(data["cases"][2]["error"], error);
  EXPECT_EQ(data["cases"][5]["error"], "cut \xEF\xBF\xBD( \xEF\xBF\xBD </script>");  // U+FFFD for each bad byte

  const std::string browser = chromium();
  if (!browser.empty()) {
    const std::string flags = chromium_flags(path("chromium"), false);
    const json probe_out = probe_in_chromium(browser, path("r.html"), flags);
    ASSERT_TRUE(probe_out.is_object());
    EXPECT_EQ(probe_out["errors"], json::array()) << probe_out.dump();
    EXPECT_EQ(probe_out["rendered"], "yes") << probe_out.dump();
    EXPECT_TRUE(probe_out["planted"].is_null()) << probe_out.dump();
    EXPECT_EQ(probe_out["injected"], 0) << probe_out.dump();
    EXPECT_EQ(probe_out["rows"], kCases) << probe_out.dump();
    const json& links = probe_out["trace_links"];
    ASSERT_EQ(links.size(), static_cast<std::size_t>(kOk)) << probe_out.dump();
    for (const json& link : links) EXPECT_EQ(link.get<std::string>().rfind("file:///", 0), 0u) << link;
    EXPECT_EQ(links[0], "file://" + path("javascript%3Awindow.__planted%3D4"));
    EXPECT_EQ(links[2], "file://" + path("night%20%231/x%3F.json"));
    EXPECT_NE(probe_out["failures_text"].get<std::string>().find("<img src=x onerror=window.__planted=3>"),
              std::string::npos) << probe_out.dump();
  }

  const Outcome outcome = run("report " + db_ + " --format markdown");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string& md = outcome.output;
  EXPECT_EQ(md.rfind("# attnsweep report: night\\</script>\\<script>window.__planted=1\\</script>\\<!-- x # not a heading | y, run 1\n", 0), 0u)
      << md.substr(0, 300);
  EXPECT_EQ(md.find("\n# not a heading"), std::string::npos);
  // No '<' a markdown viewer would read as a tag; every table row still one line of the table.
  EXPECT_EQ(matches(md, "[^\\\\]<"), 0) << md;
  EXPECT_NE(md.find("| bad \\| pipe line \\<!-- comment --> \\<img src=x onerror=window.__planted=3> std::vector\\<float> & 'q' \"d\" |"),
            std::string::npos) << md;
  EXPECT_EQ(matches(md, "\\n\\| naive\\\\</SCRIPT >\\\\<img src=x onerror=\"window.__planted=2\"> \\| 1x2x16x8 \\|"), 1) << md;
  EXPECT_EQ(matches(md, "\\n\\| sdpa_cudnn \\| 1x2x\\d+x8 \\| (fp32|bf16) \\| causal \\| unsupported \\| (?!- \\|)[^\\n]+ \\|(?=\\n)"),
            kCases - kOk) << md;
}

// Issue 21, finding 16: the run line's device name went out unescaped (a heading
// and an <img> planted in it rendered), and ESC sequences reached the terminal.
TEST_F(CliReport, TheRunLineIsEscapedAndNoControlCharacterReachesTheTerminal) {
  {
    SQLite::Database db(db_, SQLite::OPEN_READWRITE);
    db.exec("UPDATE runs SET device_name = 'CPU' || char(10) || '## injected' || char(10) || "
            "'<img src=x onerror=alert(1)>', hostname = 'h' || char(27) || '[2J', "
            "started_at = '2026' || char(27) || '[31m'");
  }
  const Outcome outcome = run("report " + db_ + " --format markdown");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string& md = outcome.output;
  EXPECT_EQ(md.find("\n## injected"), std::string::npos) << md;
  EXPECT_EQ(md.find("\n<img"), std::string::npos) << md;
  EXPECT_NE(md.find("\n\nCPU ## injected \\<img src=x onerror=alert(1)>, done, started 2026\\\\x1b[31m, finished "),
            std::string::npos) << md.substr(0, 400);
  EXPECT_EQ(md.find('\x1b'), std::string::npos) << md;
  EXPECT_NE(md.find("| h\\\\x1b[2J |"), std::string::npos) << md;
  EXPECT_EQ(matches(md, "[^\\\\]<"), 0) << md;
}

// Issue 33, item 15: bidirectional controls in stored text (U+202E, U+2066) reached the
// markdown and the HTML raw, reordering what a reader sees: "night-\u202elmth.exe" showed
// as "night-exe.html". Both formats show each as the escape "\u202e", on every page.
TEST_F(CliReport, BidirectionalControlsInStoredTextAreShownAsEscapes) {
  const std::string name = "night-\xE2\x80\xAElmth.exe \xE2\x81\xA6isolated\xE2\x81\xA9";
  {
    SQLite::Database db(db_, SQLite::OPEN_READWRITE);
    SQLite::Statement rename(db, "UPDATE runs SET name = ?, device_name = ?");
    rename.bind(1, name);
    rename.bind(2, "CPU \xE2\x80\x8F\xE2\x80\xAB");
    rename.exec();
    SQLite::Statement errors(db, "UPDATE cases SET error_message = ? WHERE status = 'unsupported'");
    errors.bind(1, "no \xE2\x80\xAD kernel");
    errors.exec();
  }
  const auto raw_bidi = [](const std::string& text) {
    for (const char* control : {"\xE2\x80\xAE", "\xE2\x81\xA6", "\xE2\x81\xA9", "\xE2\x80\x8F", "\xE2\x80\xAB", "\xE2\x80\xAD"}) {
      if (text.find(control) != std::string::npos) return true;
    }
    return false;
  };
  const Outcome markdown = run("report " + db_ + " --format markdown");
  ASSERT_EQ(markdown.exit_code, 0) << markdown.output;
  EXPECT_FALSE(raw_bidi(markdown.output)) << markdown.output;
  EXPECT_EQ(markdown.output.rfind("# attnsweep report: night-\\\\u202elmth.exe \\\\u2066isolated\\\\u2069, run 1\n", 0), 0u)
      << markdown.output.substr(0, 200);
  EXPECT_NE(markdown.output.find("CPU \\\\u200f\\\\u202b"), std::string::npos) << markdown.output.substr(0, 400);
  EXPECT_NE(markdown.output.find("no \\\\u202d kernel"), std::string::npos) << markdown.output;

  ASSERT_EQ(run("report " + db_ + " -o " + path("r.html")).exit_code, 0);
  const std::string html = read_file(path("r.html"));
  EXPECT_FALSE(raw_bidi(html));
  EXPECT_NE(html.find("<title>attnsweep: night-\\u202elmth.exe \\u2066isolated\\u2069 (run 1)</title>"), std::string::npos);
  const json data = embedded_data(html);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["run"]["name"], "night-\\u202elmth.exe \\u2066isolated\\u2069");  // what the page shows
  EXPECT_EQ(data["run"]["device_name"], "CPU \\u200f\\u202b");
  for (const json& c : data["cases"]) {
    if (c["status"] == "unsupported") EXPECT_EQ(c["error"], "no \\u202d kernel");
  }
}

// A run cut short: the report says which planned cases are missing instead of
// "every case ran", and a run with no case stored yet has a report too.
TEST_F(CliReport, ARunCutShortSaysItsCasesAreMissing) {
  attnsweep::testing::cut_run_short(db_, "plan_index >= 5", "interrupted");
  const std::string md = run("report " + db_ + " --format markdown").output;
  EXPECT_NE(md.find("5 of 18 cases: 4 ok, 1 unsupported, 0 failed."), std::string::npos) << md;
  EXPECT_NE(md.find("\n13 of the 18 planned cases are not in the database (the run is interrupted).\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("Every case ran"), std::string::npos) << md;
  attnsweep::testing::cut_run_short(db_, "1", "running");  // no case stored yet
  const std::string empty = run("report " + db_ + " --format markdown").output;
  EXPECT_NE(empty.find("\n## Results\n\nNo case of this run is stored.\n"), std::string::npos) << empty;
  EXPECT_NE(empty.find("\nNo stored case failed.\n\n18 of the 18 planned cases are not in the database (the run is running).\n"),
            std::string::npos) << empty;
  ASSERT_EQ(run("report " + db_ + " -o " + path("r.html")).exit_code, 0);
  const std::string browser = chromium();
  if (browser.empty()) return;
  const json probe_out = probe_in_chromium(browser, path("r.html"), chromium_flags(path("chromium"), false));
  ASSERT_TRUE(probe_out.is_object());
  EXPECT_EQ(probe_out["errors"], json::array()) << probe_out.dump();
  EXPECT_EQ(probe_out["rendered"], "yes") << probe_out.dump();
  const std::string failures = probe_out["failures_text"];
  EXPECT_NE(failures.find("18 of the 18 planned cases are not in the database (the run is running)."), std::string::npos) << failures;
  EXPECT_EQ(failures.find("every case ran"), std::string::npos) << failures;
}

// -o never replaces a database the report reads, SQLite's files beside one, or any other database.
TEST_F(CliReport, OutputNeverReplacesADatabaseOrItsLog) {
  const std::string other = path("other.db");
  fs::copy_file(db_, other);
  const std::string other_before = attnsweep::sha256_hex(read_file(other));
  expect_refused(db_ + " --compare " + other + " -o " + other, "-o " + other + ": is the database --compare reads");
  expect_refused(db_ + " --compare " + other + ":1 -o " + other, "is the database --compare reads");
  expect_refused(db_ + " -o " + db_ + "-wal", "-o " + db_ + "-wal: is SQLite's -wal file of " + db_);
  expect_refused(db_ + " -o " + db_ + "-journal", "is SQLite's -journal file of " + db_);
  expect_refused(db_ + " --compare " + other + " -o " + other + "-shm", "is SQLite's -shm file of " + other);
  expect_refused(db_ + " -o " + other, "-o " + other + ": is an SQLite database; name another file");
  EXPECT_EQ(attnsweep::sha256_hex(read_file(other)), other_before);
  EXPECT_FALSE(fs::exists(other + "-shm"));
}

// -o through a symbolic link writes the file it names and keeps the link; a
// FIFO (or a device: /dev/stdout) is written into, not replaced by a file.
TEST_F(CliReport, OutputThroughALinkOrIntoAFifoKeepsThem) {
  std::ofstream(path("target.html")) << "an older report\n";
  fs::create_symlink("target.html", path("link.html"));
  ASSERT_EQ(run("report " + db_ + " -o " + path("link.html")).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(path("link.html")));
  EXPECT_NE(read_file(path("target.html")).find("id=\"report-data\""), std::string::npos);

  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_symlink("fifo", path("to-fifo"));
  // Read the FIFO while the report is written (its buffer holds less than a report); never block on it.
  const int fd = ::open(path("fifo").c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  std::string received;
  bool writer_done = false;
  std::thread reader([&] {
    char buffer[65536];
    for (;;) {
      pollfd wait{fd, POLLIN, 0};
      if (::poll(&wait, 1, 100) > 0) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) received.append(buffer, static_cast<std::size_t>(n));
      } else if (__atomic_load_n(&writer_done, __ATOMIC_SEQ_CST)) {
        return;
      }
    }
  });
  const Outcome outcome = run("report " + db_ + " -o " + path("to-fifo"));
  __atomic_store_n(&writer_done, true, __ATOMIC_SEQ_CST);
  reader.join();
  ::close(fd);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  struct stat status {};
  ASSERT_EQ(::stat(path("fifo").c_str(), &status), 0);
  EXPECT_TRUE(S_ISFIFO(status.st_mode)) << "the FIFO was replaced by a file";
  EXPECT_TRUE(fs::is_symlink(path("to-fifo")));
  EXPECT_EQ(received.rfind("<!DOCTYPE html>", 0), 0u) << received.size();
  EXPECT_NE(received.find("</html>\n"), std::string::npos) << received.size();
}

// Issue 33, item 15: -o onto a dangling symbolic link replaced the link with the report and
// exited 0. A link that names nothing is refused (exit 2), kept, and nothing is made where it
// points: writing through it would create a file wherever the link says (a folder someone
// else chose, in a shared one), replacing it would lose the link; either is a guess.
TEST_F(CliReport, ADanglingLinkIsRefusedAndKept) {
  fs::create_directories(path("reports"));
  for (const std::string target : {"reports/gone.html", "missing/report.html"}) {
    SCOPED_TRACE(target);
    fs::remove(path("link.html"));
    fs::create_symlink(path(target), path("link.html"));
    expect_refused(db_ + " -o " + path("link.html"),
                   "-o " + path("link.html") + ": is a symbolic link to " + path(target) +
                       ", which does not exist; remove the link or name another file");
    EXPECT_TRUE(fs::is_symlink(path("link.html")));
    EXPECT_EQ(fs::read_symlink(path("link.html")), path(target));
    EXPECT_FALSE(fs::exists(path(target)));
  }
  EXPECT_TRUE(fs::is_empty(path("reports")));
}

// The saved schema-7 database reads through a migrated copy, its bytes untouched;
// a clock it did not record shows as '?', not as nothing.
TEST_F(CliReport, ASchemaSevenDatabaseIsReportedAndLeftAsItWas) {
  const std::string v7 = path("schema_v7.db");
  fs::copy_file(std::string(ATTNSWEEP_SOURCE_DIR) + "/tests/data/schema_v7.db", v7);
  const std::string before = attnsweep::sha256_hex(read_file(v7));
  const Outcome outcome = run("report " + v7 + " --format markdown");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("2 of 2 cases: 1 ok, 1 unsupported, 0 failed."), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("| SM / memory clock at start | 1980 / ? MHz |"), std::string::npos) << outcome.output;
  ASSERT_EQ(run("report " + v7).exit_code, 0);
  EXPECT_TRUE(embedded_data(read_file(path("schema_v7-report.html"))).is_object());
  EXPECT_EQ(attnsweep::sha256_hex(read_file(v7)), before);
  EXPECT_FALSE(fs::exists(v7 + "-wal"));
}

TEST_F(CliReport, EachBadInputIsOneLineAndExitTwoAndWritesNothing) {
  expect_refused(path("absent.db"), "absent.db: database not found");
  expect_refused(db_ + " --run 9", "has no run 9");
  expect_refused(db_ + " --run first", "--run: 'first' is not a run id (a positive integer) or latest");
  expect_refused(db_ + " -o " + path("no/such/folder/r.html"), "does not exist");
  expect_refused(db_ + " -o " + db_, "is the database itself");
  expect_refused(db_ + " -o " + path(""), "is a folder");
  expect_refused(db_ + " --compare " + path("other.db"), "--compare: " + path("other.db") + ": database not found");
  expect_refused(db_ + " --compare " + db_ + ":7", "has no run 7");
  const std::string text_file = write("notes.txt", "not a database\n");
  expect_refused(text_file, "notes.txt");
  // Files that are not ours: another program's SQLite database, a device, a FIFO, and a name with shell characters.
  {
    SQLite::Database foreign(path("foreign.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    foreign.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)");
  }
  expect_refused(path("foreign.db"), "foreign.db: ");
  expect_refused("/dev/zero", "/dev/zero: is not a regular file");
  ASSERT_EQ(::mkfifo(path("db-fifo").c_str(), 0600), 0);
  expect_refused(path("db-fifo"), "db-fifo: is not a regular file");
  // The shell passes this name through whole (single quotes); attnsweep must take it as a name, nothing more.
  expect_refused("'" + path("$(touch pwned); \"x\" `y` db") + "'", "database not found");
  EXPECT_FALSE(fs::exists("pwned"));
  const Outcome format = run("report " + db_ + " --format pdf");
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_NE(format.output.find("--format: unknown value 'pdf'; allowed: html, markdown"), std::string::npos) << format.output;
}

// A full disk (the device /dev/full) is a runtime failure, exit 1, in the system's
// words; the device is left as it was and nothing else is written.
TEST_F(CliReport, AFullDiskIsExitOneWithTheSystemsReason) {
  struct stat before {};
  if (::stat("/dev/full", &before) != 0 || !S_ISCHR(before.st_mode)) GTEST_SKIP() << "no /dev/full here";
  for (const char* format : {"html", "markdown"}) {
    const Outcome outcome = run("report " + db_ + " --format " + format + " -o /dev/full");
    EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
    EXPECT_EQ(lines(outcome.output), 1u) << outcome.output;
    EXPECT_NE(outcome.output.find("error: report: -o /dev/full: cannot write to it: No space left on device"),
              std::string::npos) << outcome.output;
  }
  struct stat after {};
  ASSERT_EQ(::stat("/dev/full", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
}

// ---- a run of several passes (issue 23) -------------------------------------
// Built with the store, as `run` will write it once backward passes are measured:
// naive, sdpa_flash and sdpa_auto at the study's shape in all three passes, and
// sdpa_cudnn's backward unsupported. Times after issue 23's H200 table.
class CliReportPasses : public attnsweep::testing::CliTest {
 protected:
  CliReportPasses() : CliTest("report-passes") {}
  void SetUp() override {
    using namespace attnsweep;
    db_ = path("passes.db");
    storage::Store store(db_);
    storage::RunRecord record = attnsweep::testing::h200_run_record("training");
    record.config_path = "configs/training.yaml";
    record.config_yaml = "variants: [naive, sdpa_flash, sdpa_auto, sdpa_cudnn]\n";
    record.timing_protocol = "cuda_event";
    record.planned_cases = 10;
    record.ceiling_bf16_tflops = 800;
    record.ceiling_copy_gbps = 4000;
    const std::int64_t run_id = store.begin_run(record);
    struct Row {
      const char* variant;
      Pass pass;
      double us;
      int kernels;
      std::optional<double> dq, dk, dv;
      const char* backend_backward;
    };
    const Row rows[] = {
        {"naive", Pass::forward, 800, 5, {}, {}, {}, ""},
        {"naive", Pass::backward, 1426, 9, 4.6e-3, 1.2e-3, 8.0e-4, ""},
        {"naive", Pass::forward_backward, 2200, 14, 4.1e-3, 1.1e-3, 7.0e-4, ""},
        {"sdpa_flash", Pass::forward, 96, 1, {}, {}, {}, ""},
        {"sdpa_flash", Pass::backward, 310, 5, 1.1e-3, 2.5e-3, 9.0e-4, ""},
        {"sdpa_flash", Pass::forward_backward, 400, 6, 1.0e-3, 2.4e-3, 8.0e-4, ""},
        {"sdpa_auto", Pass::forward, 70, 2, {}, {}, {}, ""},
        {"sdpa_auto", Pass::backward, 198, 4, 2.0e-3, 2.5e-3, 3.1e-3, "cudnn_attention"},
        {"sdpa_auto", Pass::forward_backward, 270, 6, 2.0e-3, 2.4e-3, 3.0e-3, "cudnn_attention"},
    };
    const Shape study{8, 16, 16, 1024, 1024, 64};
    int plan_index = 0;
    for (const Row& row : rows) {
      Case c{plan_index++, row.variant, study, Dtype::bf16, true};
      c.pass = row.pass;
      CaseResult r;
      r.device = Device::cuda(0);
      r.timer = "cuda_event";
      r.gpu_time_us = summarize({row.us, row.us, row.us});
      r.rel_error = 1e-3;
      r.flops = 1e9 * (row.pass == Pass::forward ? 1 : row.pass == Pass::backward ? 2.5 : 3.5);
      r.min_bytes = 1e7;
      r.tflops = r.flops / (row.us * 1e6);
      r.sdpa_backend = std::string(row.variant) == "sdpa_auto" ? "cudnn_attention" : "";
      r.grad_rel_error_q = row.dq;
      r.grad_rel_error_k = row.dk;
      r.grad_rel_error_v = row.dv;
      r.sdpa_backend_backward = row.backend_backward;
      ProfileSummary profile;
      profile.profiled_forwards = 2;
      profile.attempts = 1;
      profile.kernels_each_forward = {row.kernels, row.kernels};
      profile.memcpy_each_forward = {0, 0};
      profile.memset_each_forward = {0, 0};
      r.profile = profile;
      for (int i = 0; i < 3; ++i) r.samples.push_back({row.us, std::nullopt, row.us / 4, SampleMode::eager});
      ASSERT_TRUE(store.add_case(run_id, c, r).has_value());
    }
    Case cudnn{plan_index, "sdpa_cudnn", study, Dtype::bf16, true};
    cudnn.pass = Pass::backward;
    CaseResult refused;
    refused.status = CaseStatus::unsupported;
    refused.device = Device::cuda(0);
    refused.error_message = "cuDNN refused the backward of this shape";
    ASSERT_TRUE(store.add_case(run_id, cudnn, refused).has_value());
    store.finish_run(run_id, RunStatus::done);
  }

  static attnsweep::testing::Outcome run(const std::string& arguments) { return attnsweep::testing::run_attnsweep(arguments); }

  // Writes the run's report (r.html) and has `browser` draw it and click every pass:
  // what the page's probe found, once it loaded with no script error before or after the clicks.
  void probe_the_report(const std::string& browser, json& probe_out) {
    const std::string report = path("r.html");
    ASSERT_EQ(run("report " + db_ + " -o " + report).exit_code, 0);
    probe_out = probe_in_chromium(browser, report, chromium_flags(path("chromium")));
    ASSERT_TRUE(probe_out.is_object());
    const std::string text = probe_out.dump();
    EXPECT_EQ(probe_out["errors"], json::array()) << text;
    EXPECT_EQ(probe_out["errors_after_clicks"], json::array()) << text;
  }

  std::string db_;
};

TEST_F(CliReportPasses, TheHtmlCarriesEachCasesPassItsWorstGradientErrorAndSpeedUpsWithinThePass) {
  const std::string report = path("r.html");
  ASSERT_EQ(run("report " + db_ + " -o " + report).exit_code, 0);
  const std::string html = read_file(report);
  const json data = embedded_data(html);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["passes"], json({"forward", "backward", "forward_backward"}));
  ASSERT_EQ(data["cases"].size(), 10u);
  const auto find = [&](const std::string& variant, const std::string& pass) {
    for (const json& c : data["cases"]) {
      if (c["variant"] == variant && c["pass"] == pass) return c;
    }
    return json();
  };
  // The worst of dq, dk and dv, each also there; none for a forward.
  EXPECT_DOUBLE_EQ(find("sdpa_flash", "backward")["grad_rel_error"].get<double>(), 2.5e-3);
  EXPECT_EQ(find("sdpa_flash", "backward")["grad_rel_errors"], json({1.1e-3, 2.5e-3, 9.0e-4}));
  EXPECT_DOUBLE_EQ(find("naive", "backward")["grad_rel_error"].get<double>(), 4.6e-3);
  EXPECT_DOUBLE_EQ(find("sdpa_auto", "forward_backward")["grad_rel_error"].get<double>(), 3.0e-3);
  EXPECT_TRUE(find("sdpa_flash", "forward")["grad_rel_error"].is_null());
  EXPECT_EQ(find("sdpa_auto", "backward")["backend_backward"], "cudnn_attention");
  EXPECT_EQ(find("sdpa_auto", "backward")["backend"], "cudnn_attention");
  // Speed-ups over naive of the same pass only.
  EXPECT_DOUBLE_EQ(find("sdpa_flash", "forward")["vs_naive"].get<double>(), 800.0 / 96);
  EXPECT_DOUBLE_EQ(find("sdpa_flash", "backward")["vs_naive"].get<double>(), 1426.0 / 310);
  EXPECT_DOUBLE_EQ(find("sdpa_auto", "forward_backward")["vs_naive"].get<double>(), 2200.0 / 270);
  EXPECT_DOUBLE_EQ(find("naive", "backward")["vs_naive"].get<double>(), 1.0);
  EXPECT_TRUE(find("sdpa_cudnn", "backward")["vs_naive"].is_null());
  // The notes speak of passes.
  EXPECT_NE(html.find("<h2>Kernels per pass</h2>"), std::string::npos);
  EXPECT_NE(html.find("the speed-up over naive attention on the same shape, dtype, mask and pass."), std::string::npos);
}

// In Chromium: a selector of the three passes, the forward shown first; a click
// on each shows only that pass's cases in every chart and table, named by pass.
TEST_F(CliReportPasses, ChromiumShowsAPassSelectorThatFiltersEveryChartAndTable) {
  REQUIRE_CHROMIUM(browser);
  json probe_out;
  ASSERT_NO_FATAL_FAILURE(probe_the_report(browser, probe_out));
  const std::string text = probe_out.dump();
  EXPECT_EQ(probe_out["rendered"], "yes") << text;
  EXPECT_EQ(probe_out["pass_buttons"], json({"forward", "backward", "forward_backward"})) << text;
  EXPECT_EQ(probe_out["selected"], json({"forward"})) << text;
  EXPECT_EQ(probe_out["rows"], 3) << text;  // the forwards only, at first
  for (const std::string pass : {"forward", "backward", "forward_backward"}) {
    const json& view = probe_out["by_pass"][pass];
    ASSERT_TRUE(view.is_object()) << pass << "\n" << text;
    EXPECT_EQ(view["selected"], json({pass})) << text;
    const int timed = 3, rows = pass == "backward" ? 4 : 3;
    EXPECT_EQ(view["rows"], rows) << pass << "\n" << text;
    // Charts: time, tokens and TFLOP/s, speed-up, roofline, the share of the ceiling and the kernel
    // counts, all of this pass. Each pass is one shape, so bars (docs/report.md; issue 33, item 16:
    // it was a line chart of one point per variant).
    EXPECT_EQ(view["charts"], json({{"time-shapes", 1}, {"tokens-shapes", 1}, {"tflops-shapes", 1}, {"speedup-naive-shapes", 1},
                                    {"roofline", 1}, {"ceiling-share", 1}, {"kernels", 1}}))
        << pass << "\n" << text;
    EXPECT_EQ(view["drawn"], 7) << pass << "\n" << text;
    EXPECT_EQ(view["points"]["time-shapes"], timed) << pass << "\n" << text;  // a bar per variant over the one shape
    EXPECT_EQ(view["points"]["roofline"], timed) << pass << "\n" << text;
    EXPECT_EQ(view["points"]["speedup-naive-shapes"], timed - 1) << pass << "\n" << text;
    EXPECT_EQ(view["shape_lists"], json({"bf16, head_dim 64"})) << pass << "\n" << text;
    const std::string noun = pass == "forward_backward" ? "forward+backward" : pass;
    EXPECT_NE(view["titles"].dump().find("GPU time per " + noun), std::string::npos) << text;
    EXPECT_NE(view["titles"].dump().find("launches per " + noun), std::string::npos) << text;
    // Every row names its pass, in the pass column.
    const json& headers = view["headers"];
    const auto column = std::find(headers.begin(), headers.end(), "pass");
    ASSERT_NE(column, headers.end()) << text;
    const auto pass_at = static_cast<std::size_t>(column - headers.begin());
    for (const json& cells : view["cells"]) EXPECT_EQ(cells[pass_at], pass) << cells.dump();
    const bool has_grad = std::find(headers.begin(), headers.end(), "grad error") != headers.end();
    EXPECT_EQ(has_grad, pass != "forward") << text;
    EXPECT_EQ(view["failures"], pass == "backward" ? 1 : 0) << text;
  }
  // The backward's table: flash's worst gradient error (dk) and the backend sdpa_auto's backward ran on.
  const json& backward = probe_out["by_pass"]["backward"];
  const json& headers = backward["headers"];
  const auto at = [&](const char* name) { return static_cast<std::size_t>(std::find(headers.begin(), headers.end(), name) - headers.begin()); };
  ASSERT_LT(at("backward backend"), headers.size()) << headers.dump();
  bool flash = false, automatic = false;
  for (const json& cells : backward["cells"]) {
    if (cells[0] == "sdpa_flash") {
      flash = true;
      EXPECT_EQ(cells[at("grad error")], "2.5e-3") << cells.dump();
      EXPECT_EQ(cells[at("vs naive")], "4.60x") << cells.dump();
    }
    if (cells[0] == "sdpa_auto") {
      automatic = true;
      EXPECT_EQ(cells[at("grad error")], "3.1e-3") << cells.dump();
      EXPECT_EQ(cells[at("backward backend")], "cudnn_attention") << cells.dump();
    }
  }
  EXPECT_TRUE(flash && automatic) << backward.dump();
  EXPECT_NE(backward["failures_text"].get<std::string>().find("cuDNN refused the backward of this shape"), std::string::npos);

  // A screenshot of the backward view, kept in the build folder to look at.
  const std::string screenshot = (fs::current_path() / "report-passes-screenshot.png").string();
  fs::remove(screenshot);
  shell(browser + chromium_flags(path("chromium")) + "--window-size=1400,2200 --screenshot=" + screenshot +
        " file://" + path("r.html"));
  EXPECT_GT(read_file(screenshot).size(), 50000u) << screenshot;
}

TEST_F(CliReportPasses, MarkdownHasOneSectionPerPassWithThePassAndTheWorstGradientError) {
  const attnsweep::testing::Outcome outcome = run("report " + db_ + " --format markdown");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string& md = outcome.output;
  EXPECT_NE(md.find("10 of 10 cases: 9 ok, 1 unsupported, 0 failed."), std::string::npos) << md;
  EXPECT_EQ(md.find("\n## Results\n"), std::string::npos) << md;
  const auto forward = md.find("\n## Results: forward\n"), backward = md.find("\n## Results: backward\n"),
             both = md.find("\n## Results: forward_backward\n"), failures = md.find("\n## Unsupported and failed cases\n");
  ASSERT_NE(forward, std::string::npos) << md;
  ASSERT_NE(backward, std::string::npos) << md;
  ASSERT_NE(both, std::string::npos) << md;
  ASSERT_TRUE(forward < backward && backward < both && both < failures) << md;
  const std::string forward_part = md.substr(forward, backward - forward), backward_part = md.substr(backward, both - backward),
                    both_part = md.substr(both, failures - both);
  // The forward's table: no gradient columns; each row names its pass; speed-ups within the pass.
  EXPECT_NE(forward_part.find("| variant | shape | dtype | mask | pass | status | kernels | memcpy | memset | GPU time (us) | "
                              "TFLOP/s | of ceiling | rel. error | vs naive |"), std::string::npos) << forward_part;
  EXPECT_EQ(matches(forward_part, "\\n\\| [a-z_]+ \\| 8x16x1024x64 \\| bf16 \\| causal \\| forward \\| ok \\|"), 3) << forward_part;
  EXPECT_NE(forward_part.find("| sdpa_flash | 8x16x1024x64 | bf16 | causal | forward | ok | 1 | 0 | 0 | 96.0 |"), std::string::npos)
      << forward_part;
  EXPECT_NE(forward_part.find("| 8.33x |"), std::string::npos) << forward_part;
  EXPECT_NE(forward_part.find("launches per forward"), std::string::npos) << forward_part;
  // The backward's: the worst of dq, dk, dv, and the backend of sdpa_auto's backward.
  EXPECT_NE(backward_part.find("| rel. error | grad error | backward backend | vs naive |"), std::string::npos) << backward_part;
  EXPECT_EQ(matches(backward_part, "\\n\\| [a-z_]+ \\| 8x16x1024x64 \\| bf16 \\| causal \\| backward \\| (ok|unsupported) \\|"), 4)
      << backward_part;
  EXPECT_NE(backward_part.find("| sdpa_flash | 8x16x1024x64 | bf16 | causal | backward | ok | 5 | 0 | 0 | 310.0 |"), std::string::npos)
      << backward_part;
  EXPECT_NE(backward_part.find("| 1.0e-03 | 2.5e-03 | - | 4.60x |"), std::string::npos) << backward_part;  // flash
  EXPECT_NE(backward_part.find("| 1.0e-03 | 4.6e-03 | - | 1.00x |"), std::string::npos) << backward_part;  // naive
  EXPECT_NE(backward_part.find("| 1.0e-03 | 3.1e-03 | cudnn_attention | 7.20x |"), std::string::npos) << backward_part;
  EXPECT_NE(backward_part.find("grad error: the worst relative error of dq, dk and dv against float64 autograd"), std::string::npos);
  EXPECT_NE(backward_part.find("each timed after an untimed forward"), std::string::npos) << backward_part;
  EXPECT_EQ(matches(both_part, "\\n\\| [a-z_]+ \\| 8x16x1024x64 \\| bf16 \\| causal \\| forward_backward \\| ok \\|"), 3) << both_part;
  EXPECT_NE(both_part.find("| 1.0e-03 | 3.0e-03 | cudnn_attention | 8.15x |"), std::string::npos) << both_part;
  EXPECT_NE(both_part.find("launches per forward+backward"), std::string::npos) << both_part;
  // The unsupported case, with its pass.
  EXPECT_NE(md.find("| sdpa_cudnn | 8x16x1024x64 | bf16 | causal | backward | unsupported | cuDNN refused the backward of this shape |"),
            std::string::npos) << md;
}

// ---- energy per pass (issue 24) -----------------------------------------------
// The passes' run above with the energy window's columns planted as a GPU at
// 600 W gives them: joules per pass = median x 600 W, for the forward and
// forward_backward cases (a backward has none). The report shows an energy
// section, two charts per pass that has energy and two table columns; a run
// without energy shows none of it.
class CliReportEnergy : public CliReportPasses {
 protected:
  void plant_energy() {
    SQLite::Database(db_, SQLite::OPEN_READWRITE)
        .exec("UPDATE cases SET energy_power_w = 600, energy_j = gpu_time_us_median * 600e-6, energy_window_s = 0.5, "
              "energy_passes = CAST(0.5 / (gpu_time_us_median * 1e-6) AS INTEGER) "
              "WHERE pass != 'backward' AND status = 'ok'");
  }
};

TEST_F(CliReportEnergy, TheHtmlHasAnEnergySectionWhenARunHasEnergyAndEachCasesJoulesAndTflopPerJoule) {
  const std::string before = path("before.html");
  ASSERT_EQ(run("report " + db_ + " -o " + before).exit_code, 0);
  const std::string plain = read_file(before);
  EXPECT_EQ(plain.find("charts-energy"), std::string::npos) << "no energy: no section, no link";
  EXPECT_TRUE(embedded_data(plain)["cases"][0]["energy_j"].is_null());

  plant_energy();
  const std::string report = path("r.html");
  ASSERT_EQ(run("report " + db_ + " -o " + report).exit_code, 0);
  const std::string html = read_file(report);
  EXPECT_NE(html.find("<a href=\"#charts-energy\">Energy</a>"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"charts-energy\"><h2>Energy per pass</h2>"), std::string::npos);
  EXPECT_NE(html.find("Backward cases have none"), std::string::npos);
  EXPECT_LT(html.find("id=\"charts-roofline\""), html.find("id=\"charts-energy\""));  // next to the roofline
  EXPECT_LT(html.find("id=\"charts-energy\""), html.find("id=\"charts-kernels\""));
  const json data = embedded_data(html);
  const auto find = [&](const std::string& variant, const std::string& pass) {
    for (const json& c : data["cases"]) {
      if (c["variant"] == variant && c["pass"] == pass) return c;
    }
    return json();
  };
  const json flash = find("sdpa_flash", "forward");
  EXPECT_NEAR(flash["energy_j"].get<double>(), 96 * 600e-6, 1e-12);
  EXPECT_DOUBLE_EQ(flash["energy_power_w"].get<double>(), 600);
  EXPECT_NEAR(flash["tflop_per_joule"].get<double>(), 1e9 / 1e12 / (96 * 600e-6), 1e-9);
  const json step = find("sdpa_auto", "forward_backward");
  EXPECT_NEAR(step["energy_j"].get<double>(), 270 * 600e-6, 1e-12);
  EXPECT_NEAR(step["tflop_per_joule"].get<double>(), 3.5e9 / 1e12 / (270 * 600e-6), 1e-9);
  EXPECT_TRUE(find("sdpa_flash", "backward")["energy_j"].is_null());
  EXPECT_TRUE(find("sdpa_cudnn", "backward")["tflop_per_joule"].is_null());
}

TEST_F(CliReportEnergy, ChromiumDrawsTheEnergyChartsOfEachPassThatHasEnergy) {
  REQUIRE_CHROMIUM(browser);
  plant_energy();
  json probe_out;
  ASSERT_NO_FATAL_FAILURE(probe_the_report(browser, probe_out));
  const std::string text = probe_out.dump();
  for (const std::string pass : {"forward", "backward", "forward_backward"}) {
    const json& view = probe_out["by_pass"][pass];
    ASSERT_TRUE(view.is_object()) << pass << "\n" << text;
    const json& charts = view["charts"];
    if (pass == "backward") {
      EXPECT_FALSE(charts.contains("energy") || charts.contains("tflop-per-joule")) << text;
      continue;
    }
    // One shape per pass: bars (issue 33, item 16).
    EXPECT_EQ(charts["energy-shapes"], 1) << pass << "\n" << text;
    EXPECT_EQ(charts["tflop-per-joule"], 1) << pass << "\n" << text;
    EXPECT_EQ(view["points"]["energy-shapes"], 3) << pass << "\n" << text;  // naive, sdpa_flash, sdpa_auto
    // time, tokens, TFLOP/s, speed-up, roofline, ceiling share, 2 energy, kernels
    EXPECT_EQ(view["drawn"], 9) << pass << "\n" << text;
    const std::string noun = pass == "forward_backward" ? "forward+backward" : pass;
    EXPECT_NE(view["titles"].dump().find("bf16, head_dim 64: energy per " + noun + ", per shape"), std::string::npos) << text;
    // The table's two energy columns, flash's values in them.
    const json& headers = view["headers"];
    const auto at = [&](const char* name) {
      return static_cast<std::size_t>(std::find(headers.begin(), headers.end(), name) - headers.begin());
    };
    ASSERT_LT(at("energy (J)"), headers.size()) << headers.dump();
    ASSERT_LT(at("TFLOP/J"), headers.size()) << headers.dump();
    bool flash = false;
    for (const json& cells : view["cells"]) {
      if (cells[0] != "sdpa_flash") continue;
      flash = true;
      EXPECT_EQ(cells[at("energy (J)")], pass == "forward" ? "0.0576" : "0.240") << cells.dump();
      EXPECT_EQ(cells[at("TFLOP/J")], pass == "forward" ? "0.0174" : "0.0146") << cells.dump();
    }
    EXPECT_TRUE(flash) << view.dump();
  }
}

TEST_F(CliReportEnergy, MarkdownHasTheEnergyColumnsOnlyWhereAPassHasEnergy) {
  const attnsweep::testing::Outcome plain = run("report " + db_ + " --format markdown");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("energy"), std::string::npos) << plain.output;
  plant_energy();
  const attnsweep::testing::Outcome outcome = run("report " + db_ + " --format markdown");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string& md = outcome.output;
  const auto forward = md.find("\n## Results: forward\n"), backward = md.find("\n## Results: backward\n"),
             both = md.find("\n## Results: forward_backward\n"), failures = md.find("\n## Unsupported and failed cases\n");
  ASSERT_TRUE(forward < backward && backward < both && both < failures) << md;
  const std::string forward_part = md.substr(forward, backward - forward), backward_part = md.substr(backward, both - backward),
                    both_part = md.substr(both, failures - both);
  EXPECT_NE(forward_part.find("| TFLOP/s | of ceiling | energy (J) | TFLOP/J | rel. error |"), std::string::npos) << forward_part;
  EXPECT_NE(forward_part.find("| sdpa_flash | 8x16x1024x64 | bf16 | causal | forward | ok | 1 | 0 | 0 | 96.0 |"),
            std::string::npos) << forward_part;
  EXPECT_NE(forward_part.find("| 0.0576 | 0.0174 |"), std::string::npos) << forward_part;
  EXPECT_NE(forward_part.find("energy: joules per pass from NVML's energy counter"), std::string::npos) << forward_part;
  EXPECT_NE(both_part.find("| 0.24 | 0.0146 |"), std::string::npos) << both_part;  // flash's training step: 400 us x 600 W
  // The backward's table: no energy, no energy columns, no legend for them.
  EXPECT_EQ(backward_part.find("energy"), std::string::npos) << backward_part;
  EXPECT_EQ(backward_part.find("TFLOP/J"), std::string::npos) << backward_part;
}


// ---- lists of shapes (issue 25) ---------------------------------------------
// A config that lists shapes instead of sweeping a length, as a serving mix
// does: decoding 1, 4 and 16 queries over caches of 512 to 2048 keys (GQA 8/2),
// a chunked prefill of 128 queries over 1024 keys and a square prefill, in fp32
// and bf16 on the CPU. naive, sdpa_math and sdpa_flash run (30 ok);
// sdpa_efficient is CUDA-only (10 unsupported). Each dtype's charts are a
// group of bars per shape, a bar per variant (docs/report.md, "Length sweeps
// and lists of shapes").
const char* const kShapeListConfig = R"(name: serving-mix
device: cpu
variants: [naive, sdpa_math, sdpa_flash, sdpa_efficient]
dtypes: [fp32, bf16]
causal: false
shapes:
  head_dim: 16
  zip:
    - {batch: 1, heads: 8, kv_heads: 2, seq_len_q: 1, seq_len_kv: 512}
    - {batch: 4, heads: 8, kv_heads: 2, seq_len_q: 4, seq_len_kv: 1024}
    - {batch: 1, heads: 8, kv_heads: 2, seq_len_q: 16, seq_len_kv: 2048}
    - {batch: 1, heads: 8, kv_heads: 8, seq_len_q: 128, seq_len_kv: 1024}
    - {batch: 2, heads: 4, kv_heads: 4, seq_len_q: 256, seq_len_kv: 256}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false}
)";
// The shapes as the charts name them, in the order listed.
const std::vector<std::string> kShapeLabels = {"1x8/2 q=1 k=512", "4x8/2 q=4 k=1024", "1x8/2 q=16 k=2048", "1x8 q=128 k=1024",
                                               "2x4 q=256 k=256"};

// A chart's title as one line: a part of a split bar chart has two ("<group>, <part>"
// and what it shows), read here as "<group>, <part>: <what it shows>".
std::string title_text(const json& title) {
  return title.is_array() ? title[0].get<std::string>() + ": " + title[1].get<std::string>() : title.get<std::string>();
}

// A shape's category as the report's script writes it (report.js, shapeParts): the
// mask as attnsweep labels it ("full", "causal", "causal_bottom_right window[8,0]").
std::string shape_category(const json& c, bool with_mask) {
  const int b = c["batch"], h = c["heads"], kvh = c["kv_heads"], sq = c["seq_len_q"], skv = c["seq_len_kv"];
  std::string text = std::to_string(b) + "x" + std::to_string(h) + (kvh != h ? "/" + std::to_string(kvh) : "") + " q=" +
                     std::to_string(sq) + " k=" + std::to_string(skv);
  return with_mask ? text + " " + c["mask_label"].get<std::string>() : text;
}

class CliReportShapes : public attnsweep::testing::CliTest {
 protected:
  CliReportShapes() : CliTest("report-shapes") {}
  // Sweeps `config` on the CPU into a fresh database and writes its report (r.html).
  void sweep(const std::string& config) {
    const attnsweep::testing::Outcome outcome =
        attnsweep::testing::run_attnsweep("-q run " + write("sweep.yaml", config) + " --db " + db_);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    const attnsweep::testing::Outcome report = attnsweep::testing::run_attnsweep("report " + db_ + " -o " + report_);
    ASSERT_EQ(report.exit_code, 0) << report.output;
    data_ = embedded_data(read_file(report_));
    ASSERT_TRUE(data_.is_object());
  }
  std::string flags() const {
    return chromium_flags(path("chromium"));
  }
  // Has `browser` draw the report (r.html): what the page's probe found, once it
  // loaded with no script error, into probe_out_ (and as text into probe_text_,
  // what the tests show with a failure).
  void probe(const std::string& browser) {
    probe_out_ = probe_in_chromium(browser, report_, flags());
    ASSERT_TRUE(probe_out_.is_object());
    EXPECT_EQ(probe_out_["errors"], json::array()) << probe_out_.dump();
    probe_text_ = probe_out_.dump();
  }
  // The groups the probe found drawn as lists of shapes, sorted.
  static json sorted_shape_lists(const json& probe_out) {
    json lists = probe_out["shape_lists"];
    std::sort(lists.begin(), lists.end());
    return lists;
  }
  // Runs the swept config again (run 2), plants energy as a GPU's counter would give it
  // (100 W over each ok case's median) and reports run 2 against run 1 (r.html).
  void rerun_with_energy_against_the_first() {
    ASSERT_EQ(attnsweep::testing::run_attnsweep("-q run " + path("sweep.yaml") + " --db " + db_).exit_code, 0);
    SQLite::Database(db_, SQLite::OPEN_READWRITE)
        .exec("UPDATE cases SET energy_power_w = 100, energy_j = cpu_time_us_median * 100e-6, energy_window_s = 0.5, "
              "energy_passes = 10 WHERE run_id = 2 AND status = 'ok'");
    ASSERT_EQ(attnsweep::testing::run_attnsweep("report " + db_ + " --compare " + db_ + ":1 -o " + report_).exit_code, 0);
    data_ = embedded_data(read_file(report_));
    ASSERT_EQ(data_["run"]["run_id"], 2);
  }
  // A screenshot of the report, kept in the build folder as `name` to look at.
  void screenshot(const std::string& browser, const std::string& name) {
    const std::string file = (fs::current_path() / name).string();
    fs::remove(file);
    shell(browser + flags() + "--window-size=1400,3000 --screenshot=" + file + " file://" + report_);
    EXPECT_GT(read_file(file).size(), 50000u) << file;
  }
  // What each bar of a shape chart stands for: its case (found through the dataset's
  // case indexes) is of the dataset's variant and the category's shape, and the bar's
  // value is the one the kind shows, from the embedded data. Returns the bars counted.
  int check_bars(const json& chart, bool with_mask) {
    const std::string kind = chart["kind"], text = chart.dump();
    int bars = 0;
    double low = 1e300, high = 0;
    for (const json& dataset : chart["datasets"]) {
      for (std::size_t i = 0; i < dataset["data"].size(); ++i) {
        if (dataset["data"][i].is_null()) {
          EXPECT_TRUE(dataset["cases"][i].is_null()) << text;
          continue;
        }
        ++bars;
        const double value = dataset["data"][i];
        low = std::min(low, value);
        high = std::max(high, value);
        const json& c = data_["cases"][dataset["cases"][i].get<std::size_t>()];
        EXPECT_EQ(c["variant"], dataset["label"]) << text;
        EXPECT_EQ(c["status"], "ok") << text;
        EXPECT_EQ(shape_category(c, with_mask), chart["labels"][i]) << text;
        // The title starts with the chart's dtype and head_dim, then ": " (a whole group) or ", " (a part of it).
        const std::string group = c["dtype"].get<std::string>() + ", head_dim " + std::to_string(c["head_dim"].get<int>());
        const std::string title = title_text(chart["title"]);
        EXPECT_TRUE(title.rfind(group + ": ", 0) == 0 || title.rfind(group + ", ", 0) == 0) << text;
        const double time_us = c["time_us"];
        const double expected = kind == "time-shapes"            ? time_us
                                : kind == "tokens-shapes"        ? c["batch"].get<double>() * c["seq_len_q"].get<double>() / (time_us * 1e-6)
                                : kind == "tflops-shapes"        ? c["tflops"].get<double>()
                                : kind == "speedup-naive-shapes" ? c["vs_naive"].get<double>()
                                : kind == "speedup-previous-shapes" ? c["vs_previous"].get<double>()
                                : kind == "energy-shapes"        ? c["energy_j"].get<double>()
                                                                 : -1;
        EXPECT_NEAR(value, expected, 1e-9 * expected) << kind << " " << c.dump();
      }
    }
    // A log axis where the values (and 1x, on a speed-up chart) span more than 20x.
    if (kind.rfind("speedup-", 0) == 0) low = std::min(low, 1.0), high = std::max(high, 1.0);
    EXPECT_EQ(chart["y"], high / low > 20 ? "logarithmic" : "linear") << text;
    return bars;
  }

  // What each point of a sweep family's chart (a split group's, docs/report.md) stands
  // for: its case is of the dataset's variant, of the family the chart's title names
  // (group, batch x heads/kv_heads and query length; mask), at the point's key length,
  // with the value the kind shows. The legend is the datasets' variants and nothing
  // else. Returns the indexes of the cases drawn.
  std::vector<std::size_t> check_family(const json& chart) {
    const std::string kind = chart["kind"], text = chart.dump();
    EXPECT_EQ(chart["type"], "scatter") << text;
    EXPECT_EQ(chart["x"], "logarithmic") << text;
    EXPECT_EQ(chart["y"], "logarithmic") << text;
    EXPECT_EQ(chart["box"], "charts families") << text;  // small, three to a row
    EXPECT_EQ(chart["references"], kind.rfind("speedup-", 0) == 0 ? 1 : 0) << text;  // the dashed 1x line
    std::vector<std::size_t> indexes;
    json legend = json::array();
    for (const json& dataset : chart["datasets"]) {
      legend.push_back(dataset["label"]);
      double previous_keys = 0;
      for (const json& point : dataset["points"]) {
        const std::size_t index = point["index"];
        const json& c = data_["cases"][index];
        indexes.push_back(index);
        EXPECT_EQ(c["variant"], dataset["label"]) << text;
        EXPECT_EQ(c["status"], "ok") << text;
        EXPECT_EQ(family_title(c), chart["title"]) << c.dump() << "\n" << text;
        EXPECT_EQ(point["x"], c["seq_len_kv"]) << text;
        EXPECT_GT(point["x"].get<double>(), previous_keys) << text;  // along the keys
        previous_keys = point["x"];
        const double expected = kind == "time-family"               ? c["time_us"].get<double>()
                                : kind == "speedup-naive-family"    ? c["vs_naive"].get<double>()
                                : kind == "speedup-previous-family" ? c["vs_previous"].get<double>()
                                : kind == "energy-family"           ? c["energy_j"].get<double>()
                                                                    : -1;
        EXPECT_NEAR(point["y"].get<double>(), expected, 1e-9 * expected) << kind << " " << c.dump();
      }
    }
    EXPECT_EQ(chart["legend"], legend) << text;
    return indexes;
  }
  // A sweep family's chart title as the script writes it: two lines, the group with the
  // family's batch x heads[/kv_heads] and query length ("q=k" where it is the key length), and its mask.
  static json family_title(const json& c) {
    const int b = c["batch"], h = c["heads"], kvh = c["kv_heads"], sq = c["seq_len_q"], skv = c["seq_len_kv"];
    return json::array({c["dtype"].get<std::string>() + ", head_dim " + std::to_string(c["head_dim"].get<int>()) + ", " + std::to_string(b) +
                            "x" + std::to_string(h) + (kvh != h ? "/" + std::to_string(kvh) : "") + " q=" +
                            (sq != skv ? std::to_string(sq) : std::string("k")),
                        c["mask_label"]});
  }

  std::string db_ = path("shapes.db"), report_ = path("r.html");
  json probe_out_;
  std::string probe_text_;
  json data_;
};

TEST_F(CliReportShapes, TheHtmlOfAListOfShapesCarriesWhatEachShapesBarsNeed) {
  sweep(kShapeListConfig);
  ASSERT_EQ(data_["cases"].size(), 40u);
  std::set<std::string> shapes;
  int ok = 0;
  for (const json& c : data_["cases"]) {
    // The shape's axes apart, as the bars' categories and tokens per second read them.
    for (const char* field : {"batch", "heads", "kv_heads", "seq_len_q", "seq_len_kv", "head_dim", "head_dim_v"}) ASSERT_TRUE(c[field].is_number_integer()) << field << c.dump();
    EXPECT_EQ(c["head_dim"], 16);
    EXPECT_EQ(c["causal"], false);
    shapes.insert(shape_category(c, false));
    if (c["variant"] == "sdpa_efficient") {
      EXPECT_EQ(c["status"], "unsupported") << c.dump();
      EXPECT_TRUE(c["time_us"].is_null());
      continue;
    }
    ASSERT_EQ(c["status"], "ok") << c.dump();
    ++ok;
    EXPECT_GT(c["time_us"].get<double>(), 0) << c.dump();
    EXPECT_GT(c["tflops"].get<double>(), 0) << c.dump();
    EXPECT_GT(c["vs_naive"].get<double>(), 0) << c.dump();
  }
  EXPECT_EQ(ok, 30);
  EXPECT_EQ(shapes, std::set<std::string>(kShapeLabels.begin(), kShapeLabels.end()));
  // The fields the charts of a sweep read are still there under their names: shape, causal, time_us, vs_naive.
  EXPECT_EQ(data_["cases"][0]["shape"], "1x8/2x1x512x16");
}

// In Chromium: no line against sequence length, but per dtype a group of bars per
// shape for the time, tokens per second, TFLOP/s and speed-up over naive; the
// categories are the listed shapes, the legends the variants that ran, and there
// is a bar per timed case, each the value of its case.
TEST_F(CliReportShapes, ChromiumDrawsAGroupOfBarsPerShapeWithTheVariantsSideBySide) {
  REQUIRE_CHROMIUM(browser);
  sweep(kShapeListConfig);
  ASSERT_NO_FATAL_FAILURE(probe(browser));
  EXPECT_EQ(probe_out_["rendered"], "yes") << probe_text_;
  EXPECT_EQ(probe_out_["charts"], json({{"time-shapes", 2}, {"tokens-shapes", 2}, {"tflops-shapes", 2},
                                        {"speedup-naive-shapes", 2}, {"roofline", 2}})) << probe_text_;
  EXPECT_EQ(probe_out_["drawn"], 10) << probe_text_;
  EXPECT_EQ(sorted_shape_lists(probe_out_), json({"bf16, head_dim 16", "fp32, head_dim 16"})) << probe_text_;
  EXPECT_EQ(probe_out_["time_heading"], "Time and throughput per shape") << probe_text_;
  EXPECT_EQ(probe_out_["shape_note"].get<std::string>().rfind("The cases are a list of shapes, not a sweep of sequence lengths", 0), 0u)
      << probe_text_;
  std::map<std::string, int> bars;
  for (const json& chart : probe_out_["shape_charts"]) {
    const std::string kind = chart["kind"];
    EXPECT_EQ(chart["type"], "bar") << kind;
    EXPECT_EQ(chart["labels"], json(kShapeLabels)) << kind;
    const json variants = kind == "speedup-naive-shapes" ? json({"sdpa_math", "sdpa_flash"}) : json({"naive", "sdpa_math", "sdpa_flash"});
    EXPECT_EQ(chart["legend"], variants) << kind;
    EXPECT_EQ(chart["box"], "chart") << kind;  // 15 bars: half a row
    bars[kind] += check_bars(chart, false);
  }
  EXPECT_EQ(bars, (std::map<std::string, int>{{"time-shapes", 30}, {"tokens-shapes", 30}, {"tflops-shapes", 30}, {"speedup-naive-shapes", 20}}))
      << probe_text_;
  EXPECT_NE(probe_out_["titles"].dump().find("fp32, head_dim 16: CPU time per forward, per shape"), std::string::npos) << probe_text_;
  EXPECT_NE(probe_out_["titles"].dump().find("bf16, head_dim 16: tokens per second, per shape"), std::string::npos) << probe_text_;
  EXPECT_EQ(probe_out_["rows"], 40) << probe_text_;
  EXPECT_EQ(probe_out_["failures"], 10) << probe_text_;

  // A screenshot, kept in the build folder to look at (docs/report-shape-list.png is proofs/report/report_shape_list.yaml's).
  screenshot(browser, "report-shapes-screenshot.png");
}

// The rule, chart by chart (one per dtype and head_dim): a sweep when its cases
// are one family (mask, batch x heads/kv_heads, query length) whatever its key
// lengths, or when every family has 3 or more key lengths; a list of shapes
// otherwise. One run holds each side of the rule; sweeps are drawn as always.
TEST_F(CliReportShapes, EachChartIsALengthSweepOrAListOfShapesByTheDocumentedRule) {
  REQUIRE_CHROMIUM(browser);
  sweep(R"(name: sweep-or-list
device: cpu
variants: [naive, sdpa_math]
dtypes: fp32
causal: [true, false]
shapes:
  - {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}           # one family of 2 lengths: a sweep
  - {batch: [1, 2], heads: 2, seq_len: [16, 32, 64], head_dim: 16} # two families of 3 lengths: a sweep
  - {batch: 1, heads: 2, seq_len: 32, head_dim: 24}                # both masks of one shape: a list
  - {batch: [1, 2], heads: 2, seq_len: [16, 32], head_dim: 32}     # two families of 2 lengths: a list
exclude:
  - {causal: false, head_dim: [8, 16, 32]}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false}
)");
  ASSERT_EQ(data_["cases"].size(), 28u);
  ASSERT_NO_FATAL_FAILURE(probe(browser));
  EXPECT_EQ(sorted_shape_lists(probe_out_), json({"fp32, head_dim 24", "fp32, head_dim 32"})) << probe_text_;
  EXPECT_EQ(probe_out_["charts"], json({{"time", 2}, {"time-shapes", 2}, {"tokens-shapes", 2}, {"tflops-shapes", 2},
                                        {"speedup-naive", 2}, {"speedup-naive-shapes", 2}, {"roofline", 1}})) << probe_text_;
  EXPECT_EQ(probe_out_["drawn"], 13) << probe_text_;
  // The sweeps as before: a point per timed case of head_dim 8 and 16 (4 + 12), a line per variant and batch.
  EXPECT_EQ(probe_out_["points"]["time"], 16) << probe_text_;
  EXPECT_EQ(probe_out_["points"]["speedup-naive"], 8) << probe_text_;
  const json& titles = probe_out_["titles"];
  EXPECT_EQ(titles[0], "fp32, head_dim 8: CPU time per forward") << probe_text_;
  EXPECT_EQ(titles[1], "fp32, head_dim 16: CPU time per forward") << probe_text_;
  EXPECT_EQ(titles[2], "fp32, head_dim 24: CPU time per forward, per shape") << probe_text_;
  EXPECT_EQ(titles[3], "fp32, head_dim 32: CPU time per forward, per shape") << probe_text_;
  EXPECT_EQ(probe_out_["time_heading"], "Time against sequence length, and per shape") << probe_text_;
  EXPECT_EQ(probe_out_["shape_note"].get<std::string>().rfind("fp32, head_dim 24; fp32, head_dim 32: the cases are a list of shapes", 0), 0u)
      << probe_text_;
  for (const json& chart : probe_out_["shape_charts"]) {
    const bool masks = chart["title"].get<std::string>().find("head_dim 24") != std::string::npos;
    // Both masks of one shape: the mask is part of the category; one mask: it is not.
    EXPECT_EQ(chart["labels"], masks ? json({"1x2 q=32 k=32 causal", "1x2 q=32 k=32 full"})
                                     : json({"1x2 q=16 k=16", "1x2 q=32 k=32", "2x2 q=16 k=16", "2x2 q=32 k=32"})) << chart.dump();
    EXPECT_EQ(chart["legend"], chart["kind"] == "speedup-naive-shapes" ? json({"sdpa_math"}) : json({"naive", "sdpa_math"}))
        << chart.dump();
    EXPECT_EQ(check_bars(chart, masks), (masks ? 2 : 4) * (chart["kind"] == "speedup-naive-shapes" ? 1 : 2)) << chart.dump();
  }
}

// Issue 33, item 16: a group of one shape (a training sweep's head_dim 128) was drawn as a
// line chart of one point, where the run's other groups got bars; and the long categories of
// a bar chart (decodes over 16k keys, 16 to a chart) ran into each other under the bars.
// Now the one shape is a list of shapes (bars), and each bar chart's categories fit: side
// by side where the widest line fits the distance between them, else on one line turned
// until neighbours clear each other.
TEST_F(CliReportShapes, AGroupOfOneShapeIsBarsAndNoCategoriesOverlap) {
  REQUIRE_CHROMIUM(browser);
  std::string zip;
  for (int b = 1; b <= 16; ++b) {
    zip += "      - {batch: " + std::to_string(b) + ", heads: 2, seq_len_q: 1, seq_len_kv: " + std::to_string(16384 + 64 * b) + "}\n";
  }
  sweep("name: one-shape\ndevice: cpu\nvariants: [naive, sdpa_math]\ndtypes: fp32\n"
        "shapes:\n  - {batch: 1, heads: 2, seq_len: 32, head_dim: 8}\n  - head_dim: 16\n    zip:\n" + zip +
        "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false}\n");
  ASSERT_EQ(data_["cases"].size(), 34u);
  ASSERT_NO_FATAL_FAILURE(probe(browser));
  EXPECT_EQ(sorted_shape_lists(probe_out_), json({"fp32, head_dim 16", "fp32, head_dim 8"})) << probe_text_;
  EXPECT_EQ(probe_out_["charts"].value("time", 0), 0) << probe_text_;  // no line chart at all
  EXPECT_EQ(probe_out_["time_heading"], "Time and throughput per shape") << probe_text_;
  int one_shape = 0, long_labels = 0;
  for (const json& chart : probe_out_["shape_charts"]) {
    const std::string kind = chart["kind"], title = title_text(chart["title"]);
    EXPECT_EQ(chart["type"], "bar") << kind;
    if (title.rfind("fp32, head_dim 8:", 0) == 0) {
      ++one_shape;
      EXPECT_EQ(chart["labels"], json({"1x2 q=32 k=32"})) << title;
    } else {
      ++long_labels;
      EXPECT_EQ(chart["labels"].size(), 16u) << title;
    }
    const json& x = chart["x_ticks"];
    const double spacing = x["spacing"], rotation = x["rotation"], line_height = x["line_height"];
    for (const json& tick : x["ticks"]) {
      if (rotation == 0) {
        EXPECT_LE(tick["widest"].get<double>(), spacing) << title << ": side by side, neighbours overlap\n" << x.dump();
      } else {
        // Turned by the angle, neighbours are spacing x sin(angle) apart across their lines.
        EXPECT_EQ(tick["lines"], 1) << title << "\n" << x.dump();
        EXPECT_LE(tick["lines"].get<double>() * line_height, spacing * std::sin(rotation * M_PI / 180) + 0.5)
            << title << ": turned, neighbours overlap\n" << x.dump();
      }
    }
    if (chart["labels"].size() == 16u) EXPECT_GT(rotation, 0) << title << ": 16 categories of 11 characters in " << spacing << " px";
  }
  EXPECT_EQ(one_shape, 4) << probe_text_;  // time, tokens, TFLOP/s, speed-up over naive
  EXPECT_EQ(long_labels, 4) << probe_text_;
}

// With --compare and with energy (planted as a GPU's counter would give it: 100 W
// over each ok case's median), a list of shapes gets the same bars for the speed-up
// over the previous run and for the joules per forward.
TEST_F(CliReportShapes, TheSpeedUpOverThePreviousRunAndTheEnergyOfAListOfShapesAreBarsToo) {
  REQUIRE_CHROMIUM(browser);
  sweep(kShapeListConfig);
  ASSERT_NO_FATAL_FAILURE(rerun_with_energy_against_the_first());
  ASSERT_NO_FATAL_FAILURE(probe(browser));
  EXPECT_EQ(probe_out_["charts"], json({{"time-shapes", 2}, {"tokens-shapes", 2}, {"tflops-shapes", 2}, {"speedup-naive-shapes", 2},
                                        {"speedup-previous-shapes", 2}, {"energy-shapes", 2}, {"tflop-per-joule", 1}, {"roofline", 2}}))
      << probe_text_;
  std::map<std::string, int> bars;
  for (const json& chart : probe_out_["shape_charts"]) {
    EXPECT_EQ(chart["labels"], json(kShapeLabels)) << chart.dump();
    EXPECT_EQ(chart["legend"], chart["kind"] == "speedup-naive-shapes" ? json({"sdpa_math", "sdpa_flash"})
                                                                       : json({"naive", "sdpa_math", "sdpa_flash"})) << chart.dump();
    bars[chart["kind"]] += check_bars(chart, false);
  }
  EXPECT_EQ(bars["speedup-previous-shapes"], 30) << probe_text_;
  EXPECT_EQ(bars["energy-shapes"], 30) << probe_text_;
}

// ---- length sweeps beside single shapes (issue 25: the H200 serving sweep) -----
// configs/serving.yaml in small: per mask (bottom-right causal, and that with a
// 32-key window) and per batch x heads/kv_heads (2x4/2, 2x8/2), decoding 1 and 4
// queries over 64, 128 and 256 keys: 8 families of 3 key lengths; beside them a
// chunked prefill of 32 queries over 128 keys per heads and mask: 4 single shapes
// (head_dim 16). And head_dim 8: 6 families of 3 key lengths (3 query lengths, 2
// masks), more than one chart of lines tells apart. naive and sdpa_math run (92
// ok), sdpa_efficient is CUDA-only (46 unsupported).
const char* const kMixedConfig = R"(name: serving-mixed
device: cpu
variants: [naive, sdpa_math, sdpa_efficient]
dtypes: fp32
causal: bottom_right
window: [none, {left: 8}]   # narrower than every shape's keys: a window reaching every key is planned without it
shapes:
  - {batch: 2, heads: [4, 8], kv_heads: 2, seq_len_q: [1, 4], seq_len_kv: [64, 128, 256], head_dim: 16}
  - {batch: 1, heads: [4, 8], kv_heads: 2, seq_len_q: 32, seq_len_kv: 128, head_dim: 16}
  - {batch: 1, heads: 2, seq_len_q: [1, 2, 4], seq_len_kv: [16, 32, 64], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false}
)";
const std::string kBottomRight = "causal_bottom_right", kWindow = "causal_bottom_right window[8,0]";
// The sweep families' chart titles, in the order drawn: per group (head_dim 8 first), by mask, then
// batch, heads and query length.
json mixed_family_titles() {
  json titles = json::array();
  for (const std::string& mask : {kBottomRight, kWindow}) {
    for (const char* q : {"1", "2", "4"}) titles.push_back({std::string("fp32, head_dim 8, 1x2 q=") + q, mask});
  }
  for (const std::string& mask : {kBottomRight, kWindow}) {
    for (const char* heads : {"4", "8"}) {
      for (const char* q : {"1", "4"}) titles.push_back({std::string("fp32, head_dim 16, 2x") + heads + "/2 q=" + q, mask});
    }
  }
  return titles;
}

// In Chromium: head_dim 16 mixes length sweeps and single shapes, head_dim 8 holds 6
// sweep families; both are split. Each sweep family is a chart of its own (lines
// against the keys, a line per variant, the legend the variants, the title naming the
// family), the single shapes are bars (time, tokens per second, TFLOP/s, speed-up)
// with the mask in their categories, and every timed case is drawn exactly once.
TEST_F(CliReportShapes, ALengthSweepBesideSingleShapesIsAChartPerSweepFamilyAndBarsForTheRest) {
  REQUIRE_CHROMIUM(browser);
  sweep(kMixedConfig);
  ASSERT_EQ(data_["cases"].size(), 138u);
  int ok = 0;
  for (const json& c : data_["cases"]) {
    EXPECT_TRUE(c["mask_label"] == kBottomRight || c["mask_label"] == kWindow) << c.dump();
    if (c["status"] == "ok") ++ok;
  }
  ASSERT_EQ(ok, 92);
  ASSERT_NO_FATAL_FAILURE(probe(browser));
  EXPECT_EQ(probe_out_["rendered"], "yes") << probe_text_;
  // 14 sweep families: a time chart and a speed-up chart each; the 4 single shapes: 4 bar charts; a roofline.
  EXPECT_EQ(probe_out_["charts"], json({{"time-family", 14}, {"speedup-naive-family", 14}, {"time-shapes", 1}, {"tokens-shapes", 1},
                                        {"tflops-shapes", 1}, {"speedup-naive-shapes", 1}, {"roofline", 1}})) << probe_text_;
  EXPECT_EQ(probe_out_["drawn"], 33) << probe_text_;
  EXPECT_EQ(probe_out_["shape_lists"], json::array()) << probe_text_;
  json splits = probe_out_["split_groups"];
  std::sort(splits.begin(), splits.end());
  EXPECT_EQ(splits, json({"fp32, head_dim 16", "fp32, head_dim 8"})) << probe_text_;
  EXPECT_EQ(probe_out_["time_heading"], "Time against sequence length, and per shape") << probe_text_;
  EXPECT_EQ(probe_out_["shape_note"], "") << probe_text_;
  EXPECT_EQ(probe_out_["family_note"].get<std::string>().rfind(
                "fp32, head_dim 8: 6 length sweeps; fp32, head_dim 16: 8 length sweeps and 4 single shapes (docs/report.md", 0), 0u)
      << probe_text_;
  EXPECT_EQ(probe_out_["family_headings"],
            json({"fp32, head_dim 8: CPU time per forward against the number of keys, a chart per length sweep",
                  "fp32, head_dim 16: CPU time per forward against the number of keys, a chart per length sweep",
                  "fp32, head_dim 8: speed-up over naive against the number of keys, a chart per length sweep",
                  "fp32, head_dim 16: speed-up over naive against the number of keys, a chart per length sweep"})) << probe_text_;

  // The sweep families: in order, each its own chart, three points (key lengths) per variant.
  std::map<std::string, json> titles;
  std::map<std::string, std::multiset<std::size_t>> drawn;  // kind -> the cases drawn
  for (const json& chart : probe_out_["family_charts"]) {
    const std::string kind = chart["kind"];
    titles[kind].push_back(chart["title"]);
    EXPECT_EQ(chart["legend"], kind == "time-family" ? json({"naive", "sdpa_math"}) : json({"sdpa_math"})) << chart.dump();
    for (const json& dataset : chart["datasets"]) EXPECT_EQ(dataset["points"].size(), 3u) << chart.dump();
    for (const std::size_t index : check_family(chart)) drawn[kind].insert(index);
  }
  EXPECT_EQ(titles["time-family"], mixed_family_titles()) << probe_text_;
  EXPECT_EQ(titles["speedup-naive-family"], mixed_family_titles()) << probe_text_;
  EXPECT_EQ(drawn["time-family"].size(), 84u) << probe_text_;            // 14 families x 3 lengths x 2 variants
  EXPECT_EQ(drawn["speedup-naive-family"].size(), 42u) << probe_text_;   // sdpa_math's; naive is the reference

  // The single shapes: one bar chart per kind, both masks in the categories, in plan order.
  const json singles = {"1x4/2 q=32 k=128 " + kBottomRight, "1x4/2 q=32 k=128 " + kWindow, "1x8/2 q=32 k=128 " + kBottomRight,
                        "1x8/2 q=32 k=128 " + kWindow};
  for (const json& chart : probe_out_["shape_charts"]) {
    const std::string kind = chart["kind"];
    EXPECT_EQ(chart["type"], "bar") << kind;
    EXPECT_EQ(chart["labels"], singles) << kind;
    EXPECT_EQ(chart["title"].get<std::string>().rfind("fp32, head_dim 16, single shapes: ", 0), 0u) << kind;
    const bool speedup = kind == "speedup-naive-shapes";
    EXPECT_EQ(chart["legend"], speedup ? json({"sdpa_math"}) : json({"naive", "sdpa_math"})) << kind;
    EXPECT_EQ(check_bars(chart, true), speedup ? 4 : 8) << kind;
    for (const json& dataset : chart["datasets"]) {
      for (const json& index : dataset["cases"]) {
        if (!index.is_null()) drawn[kind == "time-shapes" ? "time-family" : kind].insert(index.get<std::size_t>());
      }
    }
  }
  EXPECT_NE(probe_out_["titles"].dump().find("fp32, head_dim 16, single shapes: CPU time per forward, per shape"), std::string::npos)
      << probe_text_;
  // Every timed case once: in its family's time chart, or among the single shapes' time bars.
  const std::multiset<std::size_t>& timed = drawn["time-family"];
  EXPECT_EQ(timed.size(), 92u) << probe_text_;
  EXPECT_EQ(std::set<std::size_t>(timed.begin(), timed.end()).size(), 92u) << probe_text_;
  EXPECT_EQ(probe_out_["rows"], 138) << probe_text_;
  EXPECT_EQ(probe_out_["failures"], 46) << probe_text_;

  // A screenshot, kept in the build folder to look at (docs/report-serving-h200.png is the H200 serving sweep's).
  screenshot(browser, "report-mixed-screenshot.png");
}

// With --compare and with energy (100 W planted over each ok case's median), a split
// group's speed-up over the previous run and joules are a chart per sweep family and
// bars for the single shapes too.
TEST_F(CliReportShapes, TheSpeedUpOverThePreviousRunAndTheEnergyOfASplitGroupAreChartsPerSweepFamilyToo) {
  REQUIRE_CHROMIUM(browser);
  sweep(kMixedConfig);
  ASSERT_NO_FATAL_FAILURE(rerun_with_energy_against_the_first());
  ASSERT_NO_FATAL_FAILURE(probe(browser));
  EXPECT_EQ(probe_out_["charts"], json({{"time-family", 14}, {"speedup-naive-family", 14}, {"speedup-previous-family", 14},
                                        {"energy-family", 14}, {"time-shapes", 1}, {"tokens-shapes", 1}, {"tflops-shapes", 1},
                                        {"speedup-naive-shapes", 1}, {"speedup-previous-shapes", 1}, {"energy-shapes", 1},
                                        {"tflop-per-joule", 1}, {"roofline", 1}})) << probe_text_;
  std::map<std::string, int> points;
  for (const json& chart : probe_out_["family_charts"]) {
    const std::string kind = chart["kind"];
    if (kind != "speedup-previous-family" && kind != "energy-family") continue;
    EXPECT_EQ(chart["legend"], json({"naive", "sdpa_math"})) << chart.dump();
    points[kind] += static_cast<int>(check_family(chart).size());
  }
  EXPECT_EQ(points, (std::map<std::string, int>{{"speedup-previous-family", 84}, {"energy-family", 84}})) << probe_text_;
  std::map<std::string, int> bars;
  for (const json& chart : probe_out_["shape_charts"]) bars[chart["kind"]] += check_bars(chart, true);
  EXPECT_EQ(bars["speedup-previous-shapes"], 8) << probe_text_;
  EXPECT_EQ(bars["energy-shapes"], 8) << probe_text_;
}

// No bar chart holds more shapes than fit: 16, or 10 where a chart holds both masks
// (each category then carries the mask, a long line). head_dim 8 lists 18 shapes per
// mask (3 heads x 3 query lengths x 2 key lengths): split by mask, then by heads (6
// shapes each); head_dim 16 lists 18 shapes per mask of one heads: split by mask,
// then into runs of 16; head_dim 24 lists 5 shapes per mask: 10, one chart with the
// masks in its categories. Each title says which part it is, and each timed case is
// one bar of one part.
TEST_F(CliReportShapes, ABarChartHoldsAtMostSixteenShapesSplitByMaskThenByHeadsThenInRuns) {
  REQUIRE_CHROMIUM(browser);
  sweep(R"(name: many-shapes
device: cpu
variants: [naive, sdpa_math]
dtypes: fp32
causal: bottom_right
window: [none, {left: 8}]
shapes:
  - {batch: 1, heads: [2, 4, 8], kv_heads: 2, seq_len_q: [1, 2, 4], seq_len_kv: [16, 32], head_dim: 8}
  - {batch: 1, heads: 2, seq_len_q: [1, 2, 3, 4, 5, 6, 7, 8, 9], seq_len_kv: [16, 32], head_dim: 16}
  - {batch: 1, heads: 2, seq_len_q: [1, 2, 3, 4, 5], seq_len_kv: 16, head_dim: 24}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, cuda_graph: false}
)");
  ASSERT_EQ(data_["cases"].size(), 164u);
  ASSERT_NO_FATAL_FAILURE(probe(browser));
  EXPECT_EQ(probe_out_["charts"], json({{"time-shapes", 11}, {"tokens-shapes", 11}, {"tflops-shapes", 11},
                                        {"speedup-naive-shapes", 11}, {"roofline", 1}})) << probe_text_;
  EXPECT_EQ(probe_out_["drawn"], 45) << probe_text_;
  EXPECT_EQ(sorted_shape_lists(probe_out_), json({"fp32, head_dim 16", "fp32, head_dim 24", "fp32, head_dim 8"})) << probe_text_;
  EXPECT_EQ(probe_out_["split_groups"], json::array()) << probe_text_;
  EXPECT_EQ(probe_out_["family_note"], "") << probe_text_;
  const std::string window = "causal_bottom_right window[8,0]";
  std::vector<std::string> parts;
  for (const std::string& mask : {kBottomRight, window}) {
    for (const char* heads : {"2 heads", "4/2 heads", "8/2 heads"}) parts.push_back("fp32, head_dim 8, " + mask + ", " + heads);
  }
  for (const std::string& mask : {kBottomRight, window}) {
    for (const char* run : {"shapes 1-16 of 18", "shapes 17-18 of 18"}) parts.push_back("fp32, head_dim 16, " + mask + ", " + run);
  }
  parts.push_back("fp32, head_dim 24");
  std::map<std::string, std::vector<std::string>> titles;
  std::map<std::string, std::multiset<std::size_t>> drawn;
  for (const json& chart : probe_out_["shape_charts"]) {
    const std::string kind = chart["kind"], title = title_text(chart["title"]);
    titles[kind].push_back(title.substr(0, title.find(": ")));
    // A part's title has two lines (the part, what it shows); a whole group's one.
    EXPECT_EQ(chart["title"].is_array(), title.rfind("fp32, head_dim 24: ", 0) != 0) << chart.dump();
    const std::size_t shapes = chart["labels"].size();
    EXPECT_LE(shapes, 16u) << chart.dump();
    EXPECT_EQ(chart["legend"], kind == "speedup-naive-shapes" ? json({"sdpa_math"}) : json({"naive", "sdpa_math"})) << chart.dump();
    // head_dim 24: both masks, in the categories (10 shapes). The others: one mask per chart, named in
    // the title and not in the categories (check_bars compares them without).
    const bool masks = title.rfind("fp32, head_dim 24: ", 0) == 0;
    if (masks) EXPECT_EQ(shapes, 10u) << chart.dump();
    check_bars(chart, masks);
    const std::string mask = title.find("window[8,0]") != std::string::npos ? window : kBottomRight;
    for (const json& dataset : chart["datasets"]) {
      for (std::size_t i = 0; i < dataset["cases"].size(); ++i) {
        if (dataset["cases"][i].is_null()) continue;
        const json& c = data_["cases"][dataset["cases"][i].get<std::size_t>()];
        if (!masks) EXPECT_EQ(c["mask_label"], mask) << title;
        if (title.find("head_dim 8,") != std::string::npos) {
          EXPECT_NE(title.find(", " + std::to_string(c["heads"].get<int>()) + (c["heads"] != 2 ? "/2" : "") + " heads"), std::string::npos)
              << title << " " << c.dump();
        }
        drawn[kind].insert(dataset["cases"][i].get<std::size_t>());
      }
    }
    // A chart of more than 8 shapes (4 with the masks in its categories) or 24 bars takes the whole row.
    EXPECT_EQ(chart["box"], shapes > (masks ? 4u : 8u) || shapes * chart["datasets"].size() > 24 ? "chart wide" : "chart")
        << chart.dump();
  }
  for (const char* kind : {"time-shapes", "tokens-shapes", "tflops-shapes", "speedup-naive-shapes"}) {
    EXPECT_EQ(titles[kind], parts) << kind;
    const std::size_t expected = std::string(kind) == "speedup-naive-shapes" ? 82 : 164;
    EXPECT_EQ(drawn[kind].size(), expected) << kind;
    EXPECT_EQ(std::set<std::size_t>(drawn[kind].begin(), drawn[kind].end()).size(), expected) << kind;  // each once
  }
  EXPECT_EQ(probe_out_["time_heading"], "Time and throughput per shape") << probe_text_;

  // A screenshot, kept in the build folder to look at.
  screenshot(browser, "report-many-shapes-screenshot.png");
}

}  // namespace
