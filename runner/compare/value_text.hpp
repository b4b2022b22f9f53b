#pragma once
// How compare writes numbers into its findings and reasons, one way for every
// check: the findings' text is what the reports print and history shortens, so
// two checks must never write one kind of value two ways.
#include <string>

namespace attnsweep::compare {

// Shortest faithful text of a stored REAL: 700, 0.02, 1.5e-05.
std::string number_text(double value);
// One significant digit and the exponent: 1.6e-02.
std::string scientific(double value);
// A share as a percentage: 0.85 -> "85%".
std::string percent(double share, int digits = 0);
// A ratio as a signed change: 1.071 -> "+7.1%".
std::string signed_percent(double ratio);
// A p-value: "p = 0.0312", "p = 3.2e-40".
std::string p_text(double p);

}  // namespace attnsweep::compare
