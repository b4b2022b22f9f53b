#pragma once
// The report of one run (attnsweep report, docs/report.md): what a reader of
// the database wants to see first, gathered once from the database and then
// written as one self-contained HTML page (html_report.hpp) or as markdown
// tables (markdown_report.hpp). LibTorch-free; reads through RunReader.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/compare/compare_runs.hpp"
#include "runner/profile/profile_summary.hpp"
#include "runner/storage/run_reader.hpp"

namespace attnsweep::run_report {

// The variant every speed-up is measured against (the study's baseline).
inline constexpr const char* kBaselineVariant = "naive";

struct ReportCase {
  storage::CaseRow row;
  std::vector<KernelStat> kernels;  // per-kernel rows, in the order stored
  // Shares of the ceilings measured on the GPU that ran the case (the results view's).
  std::optional<double> tflops_share, bandwidth_share;
  // The measured DRAM bytes' bandwidth over that GPU's copy ceiling (hardware counters, issue 39).
  std::optional<double> dram_share;
  // naive's median over this case's, same shape, dtype, mask and pass; both ok.
  std::optional<double> speedup_over_naive;
  // The trace as this process opens it, and its link from the report's folder; empty when none is stored.
  std::string trace_file, trace_link;
  bool trace_exists = false;
  // With --compare: this case in the previous run, when it was there.
  std::optional<compare::CaseComparison> previous;
  // The previous median over this one (> 1: faster now); both timed.
  std::optional<double> speedup_over_previous;
};

struct RunReport {
  std::string db_path;  // as the user named it
  storage::RunRow run;
  std::vector<ReportCase> cases;  // in plan order
  // The environment fingerprint, label and value, in reading order; unknown facts left out.
  std::vector<std::pair<std::string, std::string>> environment;
  // Ceilings for the roofline: the run's, else the highest a GPU of the run measured.
  std::optional<double> ceiling_tflops, ceiling_gbps;
  std::optional<compare::Comparison> comparison;  // with --compare
  // Issue 37: the run's claims beside what it measured, and per case group the
  // fastest variant against PyTorch's own choice (the choice view).
  std::vector<compare::ClaimLine> claims;
  std::vector<compare::ChoiceLine> choices;
  std::string generated_at;                       // UTC, ISO 8601
  std::string trace_url_base;                     // --trace-url-base, without a trailing '/'

  int count(CaseStatus status) const;
  int failed() const;  // oom, error, crashed, timeout
  // The passes the stored cases have, in the order forward, backward,
  // forward_backward; empty when no case is stored.
  std::vector<Pass> passes() const;
  // A case of a pass other than forward is stored: the report then shows one
  // pass at a time (a selector in the HTML, a markdown section each) and names
  // the pass in its tables. False: it reads as a forward-only report always did.
  bool by_pass() const;
  // A case has its energy per pass (cases.energy_j): the report then shows the
  // energy charts and columns; without, it reads as it did before energy was measured.
  bool has_energy() const;
};


struct ReportRequest {
  std::string db_path;
  std::optional<std::int64_t> run_id;  // empty: the latest run
  std::string compare_with;            // OTHER_DB[:RUN]; empty: none
  std::string output_path;             // where the report goes ("-": stdout): trace links start from its folder
  std::string trace_url_base;
};

// Reads the run (and the previous one with --compare). Throws BadInputError
// for a missing or unreadable database, or a run that is not there.
RunReport build_run_report(const ReportRequest& request);

}  // namespace attnsweep::run_report
