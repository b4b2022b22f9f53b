#include "runner/workflows/night_verdict.hpp"

#include "runner/common/errors.hpp"

namespace attnsweep::workflows {

NightVerdict night_verdict(const NightlyOutcome& outcome) {
  if (outcome.status != RunStatus::done) {
    return {"unfinished", kExitRuntimeFailure, std::string("nightly: the run did not finish (") + to_string(outcome.status) + ")"};
  }
  if (outcome.regression) return {"regression", kExitRuntimeFailure, "nightly: REGRESSION (exit 1)"};
  if (outcome.compared_nothing) return {"nothing_compared", kExitRuntimeFailure, "nightly: nothing was compared (exit 1)"};
  if (outcome.inconclusive) {
    return {"inconclusive", kExitInconclusive,
            outcome.trust_reasons.empty()
                ? "nightly: INCONCLUSIVE: no regression found, but cases could not be judged (exit 4; the summary says "
                  "which and why)"
                : "nightly: INCONCLUSIVE (exit 4): " + outcome.trust_reasons.front()};
  }
  if (outcome.baseline.empty()) return {"first_night", kExitOk, "nightly: no regression (a first night: tonight's run is the baseline)"};
  if (!outcome.watch.empty()) {
    return {"watch", kExitOk,
            "nightly: no regression; " + std::to_string(outcome.watch.size()) + " WATCH item" +
                (outcome.watch.size() == 1 ? "" : "s") + " (slower than the window tonight only; exit 0)"};
  }
  return {"pass", kExitOk, "nightly: no regression"};
}

}  // namespace attnsweep::workflows
