// `attnsweep run`: the sweep itself is runner/execute/sweep.cpp; here the
// options become a request, and the outcome a summary and what to do next.
#include <iostream>
#include <string>
#include <vector>

#include "runner/cli/commands.hpp"
#include "runner/cli/guarded.hpp"
#include "runner/common/interrupt.hpp"
#include "runner/common/text.hpp"
#include "runner/execute/sweep.hpp"
#include "runner/report/summary_table.hpp"
#include "runner/report/writers.hpp"
#include "runner/storage/example_queries.hpp"
#include "runner/workflows/publish.hpp"

namespace attnsweep::cli {

int run_command(const RunOptions& options) {
  return guarded("error: ", [&] {
    execute::SweepRequest request;
    request.config_path = options.config_path;
    request.db_path = options.db_path;
    if (!options.device.empty()) request.device = Device::parse(options.device);
    request.traces_dir = options.traces_dir;
    if (options.resume) request.resume = options.resume_run;
    request.isolate = options.isolate;
    request.shard = execute::choose_shard(options.shard, options.shards);
    request.sweep_id = execute::choose_sweep_id(options.sweep_id);
    request.sweep_id_given = !options.sweep_id.empty();
    request.gpus = options.gpus;
    std::optional<workflows::Published> published;  // --publish: where the copies went
    if (!options.publish_dir.empty()) request.at_end = workflows::publish_at_end(options.publish_dir, published);
    request.progress_interval_seconds = options.progress_interval_seconds;
    const execute::SweepOutcome outcome = execute::run_sweep(request);

    const auto& cases = outcome.cases;
    std::cout << "\n";
    report::write_table(std::cout, report::summary_table(cases), report::Format::table);
    if (outcome.shard) {
      std::cout << "\nshard " << outcome.shard->spec.label() << " (set by " << outcome.shard->source << "): "
                << outcome.planned_cases << " of the sweep's " << outcome.sweep_cases
                << " cases; merge the shards' databases with: attnsweep merge OUT.db SHARD.db...\n";
    }
    if (published) {
      std::cout << "\npublished: " << published->database << " and " << published->traces
                << " trace files\n";
    }
    if (!outcome.gpus.empty()) {
      std::vector<std::string> names;
      for (const auto& gpu : outcome.gpus) names.push_back(gpu.to_string());
      std::cout << "\nmeasured on " << text::join(names, ", ") << " (cases.device and cases.gpu_uuid say which)\n";
    }
    if (outcome.status == RunStatus::interrupted) {
      std::cout << "\nrun " << outcome.run_id << " interrupted (signal " << interrupt_signal() << ") with "
                << cases.size() << " of " << outcome.planned_cases << " cases stored in " << options.db_path << "\n"
                << "continue it with: attnsweep run " << text::shell_quote(options.config_path) << " --db "
                << text::shell_quote(options.db_path)
                << (options.gpus ? std::string() : " --device " + outcome.device.to_string())
                << (options.isolate ? " --isolate" : "")
                << (outcome.shard ? " --shard " + outcome.shard->spec.label() : "")
                << (options.gpus ? " --gpus " + text::shell_quote(*options.gpus) : "")
                << (options.traces_dir.empty() ? "" : " --traces " + text::shell_quote(options.traces_dir)) << " --resume "
                << outcome.run_id << "\n";
      return interrupted_exit_code();
    }
    std::cout << "\nrun " << outcome.run_id << " stored in " << options.db_path << "\n"
              << "example: sqlite3 -header -column " << text::shell_quote(options.db_path)
              << " \"" << storage::run_results_query(outcome.run_id) << "\"\n";
    if (!outcome.traces_dir.empty()) {
      std::cout << "traces: " << outcome.traces_dir << " (open in https://ui.perfetto.dev)\n";
    }
    return static_cast<int>(kExitOk);
  });
}

}  // namespace attnsweep::cli
