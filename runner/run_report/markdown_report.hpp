#pragma once
// The report's tables in GitHub markdown, for job logs, pull requests and
// dataset cards: the run and its environment, the study's table, the
// unsupported and failed cases, and with --compare the comparison's counts.
#include <ostream>

#include "runner/run_report/run_report.hpp"

namespace attnsweep::run_report {

void write_markdown_report(std::ostream& out, const RunReport& report);

}  // namespace attnsweep::run_report
