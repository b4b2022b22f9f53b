// `attnsweep plan`: validate a config and list its cases (or one shard's); runs nothing.
#include <iostream>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/log.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config.hpp"
#include "runner/config/measure_reader.hpp"
#include "runner/device/device.hpp"
#include "runner/execute/fit_check.hpp"
#include "runner/execute/shard_choice.hpp"
#include "runner/plan/claims_match.hpp"
#include "runner/plan/cost.hpp"
#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"
#include "runner/report/escaping.hpp"
#include "runner/report/plan_table.hpp"
#include "runner/report/writers.hpp"

namespace attnsweep::cli {

int plan_command(const PlanOptions& options) {
  return guarded("error: ", [&] {
    const Config config = load_config(options.config_path);
    const Plan whole = make_plan(config);
    // A claim whose case cannot be planned is refused before anything is printed.
    const std::vector<ClaimMatch> claims = match_claims(config, whole);
    const auto shard = execute::choose_shard(options.shard, options.shards);
    const Plan plan = shard ? shard_plan(whole, config.measure, shard->spec, options.config_path) : whole;
    const Device requested = options.device.empty() ? config.device : Device::parse(options.device);
    // Planning needs no GPU: "auto" is resolved, "cuda" and "cuda:N" are listed as they would run on a GPU.
    const Device device = requested.is_auto() ? resolve_device(requested) : requested;
    // The memory check `run` makes, wherever the memory can be known here: the machine's RAM
    // for the CPU, a GPU's only when it is present (planning for an absent GPU stays possible).
    if (device.is_cpu() || (device.is_cuda() && device.cuda_index() < cuda_device_count())) {
      execute::check_cases_fit(plan, device, device_memory_bytes(device), options.config_path);
    }
    if (const std::string warning = counters_warning(config.measure, device); !warning.empty()) log::warn(warning);
    report::write_table(std::cout, report::plan_table(plan, device), report::Format::table);
    std::cout << plan.cases.size() << " cases";
    if (shard) {
      std::cout << " of " << whole.cases.size() << " (shard " << shard->spec.label() << ", set by " << shard->source
                << ")";
    }
    if (plan.excluded) std::cout << ", " << plan.excluded << " excluded";
    if (plan.duplicates) std::cout << ", " << plan.duplicates << " duplicates dropped";
    std::cout << " (" << options.config_path << ", device " << device << ")\n";
    if (!config.claims.empty()) {
      // Each claim and the case that measures it (issue 37): what `run` will store in the claims table.
      int matched = 0;
      std::string lines;
      for (const ClaimMatch& match : claims) {
        const std::string figure = match.claim.tflops ? text::figure(*match.claim.tflops) + " TFLOP/s"
                                                      : text::figure(*match.claim.time_us) + " us";
        // The claims file's text as given (its name, GPU, variant): one line each, no control bytes.
        std::string line = match.claim.file + ":" + match.claim.name + " (" + figure +
                           (match.claim.gpu.empty() ? "" : " on " + match.claim.gpu) + "): ";
        if (match.plan_index) {
          ++matched;
          line += "case " + std::to_string(*match.plan_index) + " " + match.claimed.label();
        } else {
          line += "not measured: " + match.unmatched_reason;
        }
        lines += "  " + report::terminal_safe(line) + "\n";
      }
      std::cout << "claims: " << matched << " of " << config.claims.size() << " match a case\n" << lines;
    }
    std::cout << "expected time on one H200 by the cost model: "
              << text::fixed(static_cast<double>(expected_plan_ns(plan, config.measure)) / 60e9, 1)
              << " min (docs/scale-out.md)\n";
    if (device.is_cpu()) {
      // On the CPU the float64 checks can outweigh everything else (issue 55, item 11): said apart.
      const ReferenceChecks checks = expected_reference_checks(plan, config.measure, /*cuda=*/false);
      std::cout << "the float64 checks on the CPU by the cost model: about "
                << text::fixed(static_cast<double>(checks.ns) / 60e9, 1) << " min";
      if (checks.over_limit > 0) {
        std::cout << "; " << checks.over_limit << " case group" << (checks.over_limit == 1 ? "" : "s")
                  << " over the limit of " << text::fixed(static_cast<double>(reference_limit_ns(config.measure)) / 1e9, 0)
                  << " s (" << kReferenceLimitCaseSeconds
                  << " x measure.max_case_seconds) will be measured without their numerics";
      }
      std::cout << " (docs/measurement.md)\n";
    }
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
