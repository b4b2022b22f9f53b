#include "runner/compare/run_cases.hpp"

#include <optional>
#include <utility>

#include "runner/common/errors.hpp"
#include "runner/compare/time_verdict.hpp"

namespace attnsweep::compare {
namespace {

storage::RunRow run_row(const storage::RunReader& reader, std::int64_t run_id) {
  std::optional<storage::RunRow> run = reader.run(run_id);
  if (!run) throw BadInputError(reader.path() + ": no run " + std::to_string(run_id));
  return std::move(*run);
}

RunCases with_samples(const storage::RunReader& reader, storage::RunRow run, std::vector<storage::CaseRow> rows) {
  RunCases result{{reader.path(), std::move(run)}, {}, &reader};
  result.cases.reserve(rows.size());
  for (storage::CaseRow& row : rows) {
    ComparedCase c{CaseKey::of(row), std::move(row), {}};
    // Only an ok case has a time to judge (compare_times asks both sides to be ok).
    if (c.row.status == CaseStatus::ok) c.kept_us = kept_eager_times_us(reader.samples(c.row.case_id), c.row.device.kind());
    result.cases.push_back(std::move(c));
  }
  return result;
}

}  // namespace

RunCases read_run_cases(const storage::RunReader& reader, std::int64_t run_id) {
  storage::RunRow run = run_row(reader, run_id);
  return with_samples(reader, std::move(run), reader.cases(run_id));
}

RunCases read_run_cases(const storage::RunReader& reader, std::int64_t run_id, std::vector<storage::CaseRow> rows) {
  return with_samples(reader, run_row(reader, run_id), std::move(rows));
}

}  // namespace attnsweep::compare
