#pragma once
// `attnsweep plan`: the cases a config would run, and which the device cannot.
#include "runner/plan/plan.hpp"
#include "runner/report/table.hpp"

namespace attnsweep::report {

Table plan_table(const Plan& plan, const Device& device);

}  // namespace attnsweep::report
