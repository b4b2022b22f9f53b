#include "runner/scale_out/merge.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "runner/common/errors.hpp"
#include "runner/common/sha256.hpp"
#include "runner/common/temp_folder.hpp"
#include "runner/config/config.hpp"
#include "runner/plan/cost.hpp"
#include "runner/plan/plan.hpp"
#include "runner/plan/shard.hpp"
#include "runner/storage/database_files.hpp"
#include "runner/storage/fields.hpp"
#include "runner/storage/migrations.hpp"
#include "runner/storage/new_database.hpp"
#include "runner/storage/older_schema.hpp"  // older_schema_version: RunReader has named any other problem
#include "runner/storage/open_for_reading.hpp"
#include "runner/storage/removed_on_signal.hpp"
#include "runner/storage/run_reader.hpp"
#include "runner/scale_out/row_copier.hpp"
#include "runner/scale_out/shard_environment.hpp"
#include "runner/scale_out/shard_inputs.hpp"
#include "runner/storage/sqlite_failure.hpp"
#include "runner/storage/store.hpp"
#include "runner/storage/trace_location.hpp"

namespace attnsweep::scale_out {
namespace {

// Merging reads and writes through the storage floor below it.
using namespace attnsweep::storage;  // NOLINT(google-build-using-namespace)

using fields::Value;


// ---- the merged run in the output ----------------------------------------------

// One row of merged_shards.
struct MergedShard {
  std::string source_run_uuid, source_db, source_status;
  std::int64_t source_run_id = 0;
  int planned_cases = 0, merged_cases = 0;

  bool operator==(const MergedShard& other) const {  // source_db left out: a moved file is the same shard
    return source_run_uuid == other.source_run_uuid && source_run_id == other.source_run_id &&
           source_status == other.source_status && planned_cases == other.planned_cases &&
           merged_cases == other.merged_cases;
  }
};

std::map<int, MergedShard> merged_shards_of(SQLite::Database& db, std::int64_t run_id) {
  SQLite::Statement query(db, "SELECT shard_index, source_run_uuid, source_db, source_status, source_run_id, "
                              "planned_cases, merged_cases FROM merged_shards WHERE run_id = ?");
  query.bind(1, run_id);
  std::map<int, MergedShard> shards;
  while (query.executeStep()) {
    shards[query.getColumn(0).getInt()] = {query.getColumn(1).getString(), query.getColumn(2).getString(),
                                           query.getColumn(3).getString(), query.getColumn(4).getInt64(),
                                           query.getColumn(5).getInt(), query.getColumn(6).getInt()};
  }
  return shards;
}

// The merged run the inputs go into; no run: a new one.
struct Target {
  std::optional<RunRow> run;
  std::map<int, MergedShard> shards;
};

bool collides(const std::vector<ShardSource>& sources, const std::map<int, MergedShard>& shards) {
  return std::any_of(sources.begin(), sources.end(), [&](const ShardSource& source) {
    const auto merged = shards.find(source.index());
    return merged != shards.end() && merged->second.source_run_uuid != source.run.run_uuid;
  });
}

// A shard run of this sweep in the output: its name was most likely meant as
// an input (attnsweep merge s0.db s1.db s2.db, the output forgotten).
void refuse_shard_of_the_sweep(const std::string& out_path, const RunRow& run, const Sweep& sweep) {
  if (!is_shard_run(run) || !sweep_difference(run, sweep.reference).empty()) return;
  throw BadInputError(out_path + ": holds run " + std::to_string(run.run_id) + ", shard " +
                      shard_label(*run.shard_index, *run.shard_count) + " of this very sweep, so it looks like an "
                      "input; name the output first: attnsweep merge OUT.db IN.db... (OUT new, or holding other runs)");
}

// A shard already in the merged run is the same run, or the input is refused.
void refuse_overlap(const std::string& out_path, const Target& target, const std::vector<ShardSource>& sources) {
  for (const ShardSource& source : sources) {
    const auto merged = target.shards.find(source.index());
    if (merged == target.shards.end() || merged->second.source_run_uuid == source.run.run_uuid) continue;
    throw BadInputError(source.name() + " is another run of a shard that run " + std::to_string(target.run->run_id) +
                        " in " + out_path + " took from " + merged->second.source_db + " (run " +
                        std::to_string(merged->second.source_run_id) + ", run_uuid " +
                        merged->second.source_run_uuid.substr(0, 8) + "...); a shard is merged from one run: leave "
                        "this one out, or merge it into another database");
  }
}

// (1) the merged run that holds any of the inputs' shard runs; else (2) the
// latest merged run of the sweep still incomplete that none of them collides
// with; else (3) a new one. Read under the output's write lock.
Target choose_target(SQLite::Database& db, const std::string& file, const std::string& out_path,
                     const std::vector<ShardSource>& sources, const Sweep& sweep) {
  std::set<std::string> uuids;
  for (const ShardSource& source : sources) uuids.insert(source.run.run_uuid);
  std::optional<Target> holding, open, taken;
  for (const RunRow& run : RunReader(file).runs()) {
    refuse_shard_of_the_sweep(out_path, run, sweep);
    if (!is_merged_run(run)) continue;
    Target candidate{run, merged_shards_of(db, run.run_id)};
    const bool holds = std::any_of(candidate.shards.begin(), candidate.shards.end(),
                                   [&](const auto& shard) { return uuids.count(shard.second.source_run_uuid) > 0; });
    if (holds && holding) {
      throw BadInputError(out_path + ": the inputs' shard runs are in two merged runs already (runs " +
                          std::to_string(holding->run->run_id) + " and " + std::to_string(run.run_id) +
                          "); merge the inputs of each separately");
    }
    if (holds) {
      holding = std::move(candidate);
    } else if (sweep_difference(run, sweep.reference).empty()) {
      if (!collides(sources, candidate.shards)) {
        if (run.status == RunStatus::incomplete) open = std::move(candidate);  // runs come by run_id: the latest wins
      } else if (!run.sweep_id.empty()) {
        taken = std::move(candidate);  // the same launch already has another run of one of these shards
      }
    }
  }
  // With a sweep id, a second run of a shard is the same launch's shard run
  // twice: refused, not started as another merged run (which could never be
  // completed). Without one, launches cannot be told apart: a new merged run.
  if (!holding && !open && taken) refuse_overlap(out_path, *taken, sources);
  if (!holding) return open ? std::move(*open) : Target{};
  const std::string difference = sweep_difference(*holding->run, sweep.reference);
  if (!difference.empty()) {
    throw BadInputError(out_path + ": run " + std::to_string(holding->run->run_id) + ", which holds shards of the "
                        "inputs, is of another sweep: " + difference + "; merge into another database");
  }
  return std::move(*holding);
}



// A row as column names and values.
struct Row {
  std::vector<std::string> columns;
  std::vector<Value> values;

  void set(const std::string& column, Value value) {
    const auto at = std::find(columns.begin(), columns.end(), column);
    if (at == columns.end()) throw std::logic_error("no column " + column);
    values[static_cast<std::size_t>(at - columns.begin())] = std::move(value);
  }
};

// The shard run's runs row, as the merged run's: every column but run_id (so
// columns added later come along), the merge's own columns set.
Row merged_runs_row(SQLite::Database& out, const ShardSource& shard, const Sweep& sweep) {
  Row row;
  for (const auto& column : columns_of(out, "runs")) {
    if (column != "run_id") row.columns.push_back(column);
  }
  SQLite::Database in = open_for_reading(shard.path, kBusyTimeoutMs);
  SQLite::Statement select(in, "SELECT " + column_list(row.columns) + " FROM runs WHERE run_id = ?");
  select.bind(1, shard.run.run_id);
  if (!select.executeStep()) throw std::runtime_error(shard.name() + ": the run is gone");
  for (int i = 0; i < select.getColumnCount(); ++i) row.values.push_back(value_of(select.getColumn(i)));
  row.set("shard_index", Value{});
  row.set("shard_source", std::string(kMergedRunSource));
  row.set("planned_cases", static_cast<std::int64_t>(sweep.sweep_cases()));
  row.set("status", std::string(to_string(RunStatus::incomplete)));  // finish_merged_run sets the real one
  row.set("finished_at", Value{});
  row.set("trace_path_base", std::string(kTraceBaseDatabase));  // copy_shard rebases every path
  for (const char* claim : {"owner_pid", "owner_host", "claimed_at", "heartbeat_at"}) row.set(claim, Value{});
  return row;
}

std::int64_t insert_run(SQLite::Database& out, Row row) {
  row.set("run_uuid", random_uuid());
  SQLite::Statement insert(out, "INSERT INTO runs (" + column_list(row.columns) + ") VALUES (" +
                                    placeholders(row.columns.size()) + ")");
  for (std::size_t i = 0; i < row.values.size(); ++i) fields::bind_value(insert, static_cast<int>(i) + 1, row.values[i]);
  insert.exec();
  return out.getLastInsertRowid();
}

// Copies the row over an existing merged run's, but for its own run_uuid.
void update_run(SQLite::Database& out, std::int64_t run_id, const Row& row) {
  std::string assignments;
  std::vector<Value> values;
  for (std::size_t i = 0; i < row.columns.size(); ++i) {
    if (row.columns[i] == "run_uuid") continue;
    assignments += (assignments.empty() ? "\"" : ", \"") + row.columns[i] + "\" = ?";
    values.push_back(row.values[i]);
  }
  SQLite::Statement update(out, "UPDATE runs SET " + assignments + " WHERE run_id = ?");
  for (std::size_t i = 0; i < values.size(); ++i) fields::bind_value(update, static_cast<int>(i) + 1, values[i]);
  update.bind(static_cast<int>(values.size()) + 1, run_id);
  update.exec();
}

// The merged run's row comes from its lowest shard: the inputs' when they hold
// a lower one than the run took so far, so the order of merges does not matter.
std::int64_t write_runs_row(SQLite::Database& out, const Target& target, const std::vector<ShardSource>& sources,
                            const Sweep& sweep) {
  const ShardSource& lowest = sources.front();  // they come by shard index
  if (!target.run) return insert_run(out, merged_runs_row(out, lowest, sweep));
  const bool lower = target.shards.empty() || lowest.index() < target.shards.begin()->first;
  if (lower) update_run(out, target.run->run_id, merged_runs_row(out, lowest, sweep));
  return target.run->run_id;
}

std::set<int> stored_plan_indexes(SQLite::Database& out, std::int64_t run_id) {
  SQLite::Statement query(out, "SELECT plan_index FROM cases WHERE run_id = ?");
  query.bind(1, run_id);
  std::set<int> indexes;
  while (query.executeStep()) indexes.insert(query.getColumn(0).getInt());
  return indexes;
}

struct ShardCopy {
  int cases_added = 0;
  int devices_added = 0;
};

// The shard run's cases the merged run lacks (by plan_index), each with its
// rows in every table of a case, and its run_devices rows. Only the cases
// checked against the plan are copied, whatever its sweep has stored since.
// A case's trace path for the merged run (trace_path_base 'database'): the
// trace the shard's database points at, from the output's folder. A shard of
// a run before schema 8 stored it as given: it is taken as relative to the
// current directory, where merge usually runs too.
Value merged_trace_path(const std::string& out_path, const ShardSource& shard, const CaseRow& stored) {
  if (stored.trace_path.empty()) return Value{};
  return trace_path_to_store(out_path, trace_file_of(shard.path, shard.run.trace_path_base, stored.trace_path));
}

ShardCopy copy_shard(SQLite::Database& out, const std::string& out_path, std::int64_t run_id, const ShardSource& shard,
                     std::set<int>& present) {
  SQLite::Database in = open_for_reading(shard.path, kBusyTimeoutMs);
  const Value merged_run = run_id, shard_index = static_cast<std::int64_t>(shard.index());
  RowCopier cases(in, out, "cases", "case_id", {"run_id", "shard_index", "trace_path"}, "case_id");
  std::vector<RowCopier> rows_of_a_case;
  for (const auto& table : tables_of_a_case(out)) rows_of_a_case.emplace_back(in, out, table, "case_id", std::vector<std::string>{"case_id"});
  ShardCopy copied;
  for (const CaseRow& stored : shard.cases) {
    if (!present.insert(stored.identity.plan_index).second) continue;  // merged already
    cases.copy(stored.case_id, {merged_run, shard_index, merged_trace_path(out_path, shard, stored)});
    const Value case_id = static_cast<std::int64_t>(out.getLastInsertRowid());
    for (RowCopier& rows : rows_of_a_case) rows.copy(stored.case_id, {case_id});
    ++copied.cases_added;
  }
  RowCopier devices(in, out, "run_devices", "run_id", {"run_id", "shard_index"}, "", "INSERT OR IGNORE");
  copied.devices_added = devices.copy(shard.run.run_id, {merged_run, shard_index});
  // The claims (issue 37): every shard stored the same ones, matched by plan_index
  // of the whole plan; the first shard merged gives them, the others are kept out.
  RowCopier claims(in, out, "claims", "run_id", {"run_id"}, "claim_id", "INSERT OR IGNORE");
  claims.copy(shard.run.run_id, {merged_run});
  return copied;
}

int merged_cases_of_shard(SQLite::Database& out, std::int64_t run_id, int index) {
  SQLite::Statement query(out, "SELECT count(*) FROM cases WHERE run_id = ? AND shard_index = ?");
  query.bind(1, run_id);
  query.bind(2, index);
  query.executeStep();
  return query.getColumn(0).getInt();
}

// Records where the shard came from; false, and nothing written, when the row says so already.
bool record_merged_shard(SQLite::Database& out, std::int64_t run_id, int index, const MergedShard& shard,
                         std::map<int, MergedShard>& shards) {
  const auto stored = shards.find(index);
  if (stored != shards.end() && stored->second == shard) return false;
  SQLite::Statement upsert(out, "INSERT OR REPLACE INTO merged_shards (run_id, shard_index, source_run_uuid, source_db, "
                                "source_run_id, source_status, planned_cases, merged_cases, merged_at) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  upsert.bind(1, run_id);
  upsert.bind(2, index);
  upsert.bind(3, shard.source_run_uuid);
  upsert.bind(4, shard.source_db);
  upsert.bind(5, shard.source_run_id);
  upsert.bind(6, shard.source_status);
  upsert.bind(7, shard.planned_cases);
  upsert.bind(8, shard.merged_cases);
  upsert.bind(9, utc_now_iso8601());
  upsert.exec();
  shards[index] = shard;
  return true;
}

// Where every shard stands, from merged_shards after the copy.
MergeReport report_of(std::int64_t run_id, const Target& target, const std::map<int, MergedShard>& shards,
                      const std::map<int, ShardMerge>& given, const Sweep& sweep) {
  MergeReport report;
  report.run_id = run_id;
  report.created = !target.run;
  report.shard_count = sweep.shard_count();
  report.sweep_cases = sweep.sweep_cases();
  report.status = RunStatus::done;
  for (int index = 0; index < sweep.shard_count(); ++index) {
    const auto this_merge = given.find(index);
    ShardMerge shard = this_merge != given.end() ? this_merge->second : ShardMerge{};
    shard.index = index;
    shard.planned_cases = static_cast<int>(sweep.parts[static_cast<std::size_t>(index)].size());
    if (const auto merged = shards.find(index); merged != shards.end()) {
      if (this_merge == given.end()) shard.state = ShardMerge::State::merged_earlier;
      shard.source_db = merged->second.source_db;
      shard.source_run_id = merged->second.source_run_id;
      shard.source_status = merged->second.source_status;
      shard.merged_cases = merged->second.merged_cases;
    }
    report.merged_cases += shard.merged_cases;
    report.cases_added += shard.cases_added;
    if (!shard.complete()) report.status = RunStatus::incomplete;
    report.shards.push_back(shard);
  }
  return report;
}

void finish_merged_run(SQLite::Database& out, std::int64_t run_id, RunStatus status, const std::string& started_at) {
  SQLite::Statement update(out, "UPDATE runs SET status = ?, started_at = min(started_at, ?), finished_at = ? "
                                "WHERE run_id = ?");
  update.bind(1, to_string(status));
  update.bind(2, started_at);
  update.bind(3, utc_now_iso8601());
  update.bind(4, run_id);
  update.exec();
}

// The merged run holds shards of the environment of its runs row (each merge checked them).
void refuse_other_environment(const std::string& out_path, const RunRow& merged, const ShardSource& source) {
  const std::vector<std::string> differences = shard_environment_differences(source.run, merged);
  if (differences.empty()) return;
  throw BadInputError(source.name() + " ran in another environment than the shards run " + std::to_string(merged.run_id) +
                      " in " + out_path + " took earlier: " + first_differences(differences) + "; " + kOneEnvironment +
                      ": run that shard again as the others ran, or merge it into another database");
}

// Every write of the merge, in the caller's transaction; returns where the
// shards stand and whether anything was written.
// `sources` come by shard index.
std::pair<MergeReport, bool> merge_into(SQLite::Database& out, const std::string& file, const std::string& out_path,
                                        const std::vector<ShardSource>& sources, const Sweep& sweep) {
  const Target target = choose_target(out, file, out_path, sources, sweep);
  if (target.run) refuse_overlap(out_path, target, sources);
  if (target.run) refuse_other_environment(out_path, *target.run, sources.front());
  const std::int64_t run_id = write_runs_row(out, target, sources, sweep);
  std::set<int> present = stored_plan_indexes(out, run_id);
  std::map<int, MergedShard> shards = target.shards;
  std::map<int, ShardMerge> given;
  bool changed = !target.run;
  std::string started_at = sources.front().run.started_at;
  for (const ShardSource& source : sources) {
    ShardCopy copied;
    try {
      copied = copy_shard(out, out_path, run_id, source, present);
    } catch (const SQLite::Exception& error) {  // SQLite's words name no file
      throw std::runtime_error(source.name() + ": cannot be merged into " + out_path + ": " + error.what());
    }
    const MergedShard merged{source.run.run_uuid, source.path, to_string(source.run.status), source.run.run_id,
                             source.run.planned_cases, merged_cases_of_shard(out, run_id, source.index())};
    const bool new_here = record_merged_shard(out, run_id, source.index(), merged, shards);
    ShardMerge& shard = given[source.index()];
    shard.cases_added += copied.cases_added;
    const bool took = copied.cases_added > 0 || copied.devices_added > 0 || new_here;
    if (took) {
      shard.state = ShardMerge::State::merged;
    } else if (shard.state != ShardMerge::State::merged) {  // the same run given twice: merged by the first
      shard.state = ShardMerge::State::already_merged;
    }
    changed = changed || took;
    started_at = std::min(started_at, source.run.started_at);
  }
  MergeReport report = report_of(run_id, target, shards, given, sweep);
  if (changed) finish_merged_run(out, run_id, report.status, started_at);
  return {report, changed};
}

// Every write of the merge into the database `file`, a current one, in one
// transaction: committed when it changed anything (then the journal mode is
// WAL, as in every database the store writes), else rolled back.
MergeReport merge_in_one_transaction(const std::string& file, const std::string& out_path,
                                     const std::vector<ShardSource>& sources, const Sweep& sweep, bool& changed) {
  SQLite::Database out(file, SQLite::OPEN_READWRITE, kBusyTimeoutMs);
  out.exec("PRAGMA foreign_keys = ON");
  // IMMEDIATE: the write lock before the output is read, so two merges into it take turns.
  SQLite::Transaction transaction(out, SQLite::TransactionBehavior::IMMEDIATE);
  auto [report, wrote] = merge_into(out, file, out_path, sources, sweep);
  changed = wrote;
  if (!changed) return report;  // it rolls back, having written nothing
  transaction.commit();
  out.exec("PRAGMA journal_mode = WAL");
  return report;
}

// A private folder under TMPDIR with one file name in it, removed (with any
// -wal and -shm beside the file) with this object.
class TrialFolder {
 public:
  explicit TrialFolder(const std::string& name) {
    std::string folder = (std::filesystem::path(temp_folder()) / "attnsweep-merge-XXXXXX").string();
    const StopSignalsBlocked blocked;  // a signal between mkdtemp and the registration would leave the folder
    if (!::mkdtemp(folder.data())) {
      throw BadInputError("cannot make a folder under TMPDIR (" + temp_folder() + ") for a migrated copy: " +
                          std::strerror(errno) + "; set TMPDIR to a writable folder");
    }
    folder_ = folder;
    file_ = folder + "/" + name;
    removed_on_signal_.emplace(file_, folder_);
  }
  ~TrialFolder() {
    remove_database_files(file_);
    ::rmdir(folder_.c_str());
  }
  TrialFolder(const TrialFolder&) = delete;
  TrialFolder& operator=(const TrialFolder&) = delete;
  const std::string& file() const { return file_; }

 private:
  std::string folder_, file_;
  std::optional<RemovedOnSignal> removed_on_signal_;  // a killed merge leaves no copy behind
};

// Merges into the database `file` (the output, or the private file a new
// output is made in), named `out_path` in messages and trace paths. An output
// of an older schema is changed only by a merge that is going to write: the
// merge is tried first on a migrated copy, so a refused merge, or one that
// finds nothing new, leaves the output byte-identical (not migrated).
MergeReport merge_into_file_as_is(const std::string& file, const std::string& out_path,
                                  const std::vector<ShardSource>& sources, const Sweep& sweep) {
  // Refuses, untouched, what is not attnsweep's, is newer, or is damaged. An
  // empty file (as the private file of a new output) gets the schema now.
  struct stat info {};
  const bool empty = ::stat(file.c_str(), &info) == 0 && info.st_size == 0;
  { Store checked(file, empty ? Store::Open::create_if_absent : Store::Open::existing); }
  bool changed = false;
  if (!empty && older_schema_version(file)) {
    TrialFolder trial(std::filesystem::path(file).filename().string());
    snapshot_database(file, trial.file());
    { Store migrated(trial.file(), Store::Open::create_if_absent); }  // migrated at the open
    MergeReport report = merge_in_one_transaction(trial.file(), out_path, sources, sweep, changed);
    if (!changed) return report;
    { Store migrated(file, Store::Open::create_if_absent); }  // the merge writes: the output is migrated now
  }
  return merge_in_one_transaction(file, out_path, sources, sweep, changed);
}

// As merge_into_file_as_is, a lock or a full disk on the output said in one
// line naming it, the reason and what to do (runner/storage/sqlite_failure.hpp).
MergeReport merge_into_file(const std::string& file, const std::string& out_path,
                            const std::vector<ShardSource>& sources, const Sweep& sweep) {
  try {
    return merge_into_file_as_is(file, out_path, sources, sweep);
  } catch (const SQLite::Exception& error) {
    throw DatabaseWriteError(describe_sqlite_failure(out_path, error.getExtendedErrorCode(), error.what(), 0,
                                                     "merge again (nothing was merged)"));
  }
}

}  // namespace

std::vector<int> MergeReport::missing_shards() const {
  std::vector<int> missing;
  for (const ShardMerge& shard : shards) {
    if (shard.state == ShardMerge::State::missing) missing.push_back(shard.index);
  }
  return missing;
}

MergeReport merge_shards(const std::string& out_path, const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw BadInputError("no shard databases to merge; give OUT.db and one or more IN.db");
  refuse_side_file_name(out_path);
  refuse_output_among_inputs(out_path, inputs);
  std::vector<ShardSource> sources = read_inputs(inputs);
  const Sweep sweep = check_one_sweep(sources);
  std::stable_sort(sources.begin(), sources.end(), [](const auto& a, const auto& b) { return a.index() < b.index(); });

  // A new output is merged into a file of its own and linked into place whole
  // (new_database.hpp): a refused merge leaves nothing behind, and a merge
  // that loses the race to create it merges into the winner's.
  struct stat existing {};
  if (::stat(out_path.c_str(), &existing) != 0 && errno == ENOENT) {
    std::optional<MergeReport> report;
    const NewDatabase made = create_whole_database(
        out_path, [&](const std::string& file) { report = merge_into_file(file, out_path, sources, sweep); });
    if (made == NewDatabase::made_here) return *report;
  }
  return merge_into_file(out_path, out_path, sources, sweep);
}

}  // namespace attnsweep::scale_out
