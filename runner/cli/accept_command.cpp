// `attnsweep accept DIR`: record in a nightly history folder that a change seen
// on one night is accepted for some cases (runner/workflows/acceptance.hpp).
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/workflows/acceptance.hpp"

namespace attnsweep::cli {

int accept_command(const AcceptOptions& options) {
  return guarded("error: ", [&] {
    workflows::AcceptRequest request;
    request.history_dir = options.history_dir;
    request.night = options.night;
    request.cases = options.cases;
    request.reason = options.reason;
    request.by = options.by;
    const workflows::Acceptance accepted = workflows::record_acceptance(request);
    std::cout << "accepted: the change of night " << accepted.night << " for " << text::join(accepted.cases, ", ")
              << " (" << accepted.reason << ", by " << accepted.by << " at " << accepted.at << ")\n"
              << "recorded in " << options.history_dir << "/" << accepted.file
              << "; from the next night on, these cases' time window starts at night " << accepted.night << "\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
