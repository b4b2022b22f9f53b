#pragma once
// A Comparison as one JSON object for programs (`compare --format json`,
// docs/compare.md lists its keys; "format": "attnsweep-compare/1"). Apart from
// the text and markdown because it is a contract: every value typed and all of
// it there, where the reports for people shorten and fold.
#include <string>

#include "runner/compare/compare_runs.hpp"

namespace attnsweep::compare {

std::string render_json(const Comparison& comparison);

}  // namespace attnsweep::compare
