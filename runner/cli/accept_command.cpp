// `attnsweep accept DIR`: record in a nightly history folder that a change seen
// on one night is accepted for some cases (runner/workflows/acceptance.hpp).
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"
#include "runner/workflows/acceptance.hpp"

namespace attnsweep::cli {

int accept_command(const AcceptOptions& options) {
  return guarded("error: ", [&] {
    const workflows::Acceptance accepted = workflows::record_acceptance(options);
    // Given text is shown, never obeyed: escapes and line breaks as escapes (issue 55, item 17).
    using report::terminal_safe;
    std::cout << "accepted: the change of night " << accepted.night << " for "
              << terminal_safe(text::join(accepted.cases, ", ")) << " (" << terminal_safe(accepted.reason) << ", by "
              << terminal_safe(accepted.by) << " at " << accepted.at << ")\n"
              << "recorded in " << terminal_safe(options.history_dir) << "/" << accepted.file
              << "; from the next night on, these cases' time window starts at night " << accepted.night << "\n";
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
