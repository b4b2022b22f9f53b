#pragma once
// `attnsweep variants`: the catalogue, and which variants run on a device.
#include "runner/common/identities.hpp"
#include "runner/report/table.hpp"

namespace attnsweep::report {

Table variants_table(const Device& device);

}  // namespace attnsweep::report
