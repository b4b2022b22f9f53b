#include "runner/compare/run_argument.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"

namespace attnsweep::compare {
namespace {

std::string runs_listed(const storage::RunReader& reader) {
  // The newest 20: a long-lived database may hold hundreds of runs.
  constexpr std::size_t kListed = 20;
  std::vector<std::string> ids;
  for (const storage::RunRow& run : reader.runs()) ids.push_back(std::to_string(run.run_id));
  if (ids.size() <= kListed) return text::join(ids, ", ");
  return "..., " + text::join(std::vector<std::string>(ids.end() - kListed, ids.end()), ", ");
}

}  // namespace

RunArgument parse_run_argument(const std::string& text, const std::string& name) {
  const std::string allowed = "; give DATABASE or DATABASE:RUN (RUN a run id or latest), e.g. results.db:3";
  if (text.empty()) throw BadInputError(name + ": empty" + allowed);
  std::error_code ignored;
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || std::filesystem::exists(text, ignored)) return {text, std::nullopt};
  const std::string path = text.substr(0, colon), run = text.substr(colon + 1);
  if (path.empty()) throw BadInputError(name + ": '" + text + "' names no database before ':'" + allowed);
  if (run == "latest") return {path, std::nullopt};
  const bool digits = !run.empty() && run.size() <= 18 && std::all_of(run.begin(), run.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (!digits || std::stoll(run) <= 0) {
    throw BadInputError(name + ": '" + text + "': '" + run + "' after ':' is not a run id (a positive integer) or latest" +
                        allowed);
  }
  return {path, std::stoll(run)};
}

std::int64_t resolve_run(const storage::RunReader& reader, const RunArgument& argument, const std::string& name) {
  // The file as the user named it (the reader may read a migrated copy of it).
  const std::string& file = argument.path.empty() ? reader.path() : argument.path;
  if (!argument.run_id) {
    const std::optional<storage::RunRow> latest = reader.latest_run();
    if (!latest) throw BadInputError(name + ": " + file + " holds no run yet; give a database with a run");
    return latest->run_id;
  }
  if (!reader.run(*argument.run_id)) {
    throw BadInputError(name + ": " + file + " has no run " + std::to_string(*argument.run_id) +
                        "; its runs: " + runs_listed(reader) + " (leave out :RUN for the latest)");
  }
  return *argument.run_id;
}

}  // namespace attnsweep::compare
