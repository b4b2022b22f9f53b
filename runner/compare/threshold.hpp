#pragma once
// --threshold PCT of compare and nightly, parsed in one place.
#include <string>

namespace attnsweep::compare {

// "5" -> 0.05. Throws BadInputError (one line, naming --threshold and what is
// allowed) for anything but a plain number > 0 and < 100.
double parse_threshold_percent(const std::string& text);

// --min-change-us US: a plain number >= 0. Throws BadInputError otherwise.
double parse_min_change_us(const std::string& text);

}  // namespace attnsweep::compare
