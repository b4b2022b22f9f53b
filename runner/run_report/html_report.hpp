#pragma once
// The report as one self-contained HTML file: the run's data as JSON, Chart.js
// (Debian's libjs-chart.js, embedded when attnsweep is built) and the page's
// own script and style, all inline, so it opens offline and can be mailed or
// uploaded as one file. runner/run_report/assets/ holds the script and style.
#include <ostream>

#include "runner/run_report/run_report.hpp"

namespace attnsweep::run_report {

void write_html_report(std::ostream& out, const RunReport& report);

}  // namespace attnsweep::run_report
