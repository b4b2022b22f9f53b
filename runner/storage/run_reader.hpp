#pragma once
// Reading a results database back: runs, their cases, and each case's
// kernels, ops and samples, as plain rows of the stored columns typed with the
// identities. The store writes, the reader reads: the file is opened read-only
// and never changed, so a reader can look at a sweep that is still running.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"
#include "runner/profile/profile_summary.hpp"
#include "runner/storage/case_row.hpp"
#include "runner/storage/case_shares.hpp"
#include "runner/storage/choice_row.hpp"
#include "runner/storage/claim_result.hpp"
#include "runner/storage/run_device.hpp"
#include "runner/storage/run_row.hpp"

namespace attnsweep::storage {

// A stored value outside what its column can hold (its type, the schema's CHECK
// set, or what the store writes: no negative time, count or size, one length
// per sequence): the database is damaged, bad input (exit 2). One line:
// "FILE: run N, case P (LABEL): cases.COLUMN = VALUE: allowed: WHAT" (docs/schema.md,
// "What readers refuse"). Every read below throws it for the row it reads.
class DamagedDatabaseError : public BadInputError {
 public:
  using BadInputError::BadInputError;
};

// A claim's value outside what the store writes (claim_results): the message
// "FILE: run N, claim FILE:NAME: claims.COLUMN = VALUE: allowed: WHAT", with
// its parts for a caller that shows the claim's name its own way (escaped).
class DamagedClaimError : public DamagedDatabaseError {
 public:
  DamagedClaimError(std::string run, std::string claim, std::string detail)
      : DamagedDatabaseError(run + ", claim " + claim + ": " + detail),
        run(std::move(run)), claim(std::move(claim)), detail(std::move(detail)) {}

  std::string run;     // "FILE: run N"
  std::string claim;   // "FILE:NAME", as stored
  std::string detail;  // "claims.COLUMN = VALUE: allowed: WHAT"
};

class RunReader {
 public:
  // Opens the database at `path` read-only. Throws BadInputError when the file
  // does not exist, is not a regular file, cannot be opened, is not an
  // attnsweep database (recognised as the Store does), or has a schema version
  // other than kSchemaVersion (a newer one is not understood; an older one is
  // migrated by the next Store that opens it).
  explicit RunReader(const std::string& path);
  ~RunReader();
  RunReader(RunReader&&) noexcept;
  RunReader& operator=(RunReader&&) noexcept;
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  std::optional<RunRow> run(std::int64_t run_id) const;
  std::optional<RunRow> latest_run() const;  // the highest run_id
  std::vector<RunRow> runs() const;          // by run_id

  std::vector<CaseRow> cases(std::int64_t run_id) const;  // by plan_index
  std::set<int> stored_plan_indexes(std::int64_t run_id) const;

  std::vector<KernelStat> kernels(std::int64_t case_id) const;  // in the order stored
  std::vector<OpStat> ops(std::int64_t case_id) const;          // in the order stored
  // Eager samples, then graph replays, each by sample_index.
  std::vector<TimingSample> samples(std::int64_t case_id) const;

  // The devices the run measured on (run_devices), in the order recorded.
  std::vector<RunDevice> run_devices(std::int64_t run_id) const;
  // The run's claims, each beside what the run measured of its case (the
  // claim_results view), in the order stored. Throws DamagedClaimError for a
  // claimed figure or plan_index outside what the store writes.
  std::vector<ClaimResult> claim_results(std::int64_t run_id) const;

  // The run's case groups as the choice view gives them (which backend to pick), in its order.
  std::vector<ChoiceRow> choices(std::int64_t run_id) const;
  // Each case's shares of the ceilings as the results view computes them.
  std::vector<CaseShares> case_shares(std::int64_t run_id) const;

  // Reads every stored value of the run: its row, its cases and their samples,
  // kernels and ops. Throws DamagedDatabaseError at the first out of its domain;
  // nightly, history and merge check a night or shard whole before using any of it.
  void check_run(std::int64_t run_id) const;

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

// RunRow::env_vars (a JSON object of name -> value) as a map; a text that is not
// a JSON object is one value under the name "". Compare and merge read it alike.
std::map<std::string, std::string> env_vars_of(const std::string& json_text);

}  // namespace attnsweep::storage
