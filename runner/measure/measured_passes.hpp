#pragma once
// Which passes attnsweep can time (issue 23). The config and the plan know all
// three; the timing of the backward is not built yet, so a sweep that asks for
// it is refused before anything runs, never measured as a forward under
// another name. No LibTorch.
#include "runner/common/identities.hpp"
#include "runner/config/config.hpp"

namespace attnsweep {

bool pass_is_measured(Pass pass);

// Throws ConfigError at the config's `passes` key when it names a pass that is
// not measured yet: "file:line:column: passes: backward and forward_backward
// are not measured yet (issue 23); ...".
void refuse_unmeasured_passes(const Config& config);

}  // namespace attnsweep
