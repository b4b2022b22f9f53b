#include "runner/measure/measured_passes.hpp"

#include <algorithm>

namespace attnsweep {

bool pass_is_measured(Pass pass) { return pass == Pass::forward; }

void refuse_unmeasured_passes(const Config& config) {
  if (std::all_of(config.passes.begin(), config.passes.end(), pass_is_measured)) return;
  throw ConfigError(config.source_path, config.passes_where, "passes",
                    "backward and forward_backward are not measured yet (issue 23); `attnsweep plan` lists their "
                    "cases, `attnsweep run` takes passes: [forward] only for now");
}

}  // namespace attnsweep
