#include "runner/storage/store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <system_error>
#include <utility>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/file_kind.hpp"
#include "runner/common/text.hpp"
#include "schema_sql.hpp"
#include "runner/storage/case_columns.hpp"
#include "runner/storage/case_record.hpp"
#include "runner/storage/claim_columns.hpp"
#include "runner/storage/database_files.hpp"
#include "runner/storage/fields.hpp"
#include "runner/storage/migrations.hpp"
#include "runner/storage/new_database.hpp"
#include "runner/storage/open_for_reading.hpp"
#include "runner/storage/run_columns.hpp"
#include "runner/storage/run_device_columns.hpp"
#include "runner/storage/sqlite_failure.hpp"
#include "runner/storage/trace_location.hpp"

namespace attnsweep::storage {
namespace {

using fields::Table;
using fields::Value;
using fields::to_value;

// ---- opening ----------------------------------------------------------------

constexpr int kBusyTimeoutMs = 10000;

// Creates `path` as an empty file, only if nothing is there: true when this
// call made it, false when another process got there first.
bool create_empty_file(const std::string& path, const std::string& refused) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  if (errno == EEXIST) return false;
  throw BadInputError(refused + "cannot create it: " + std::strerror(errno));
}

// After a failed statement inside a transaction: SQLite has already rolled
// back after some errors (disk full, I/O), and a ROLLBACK then fails with "no
// transaction is active", which must not replace the error that caused it.
void rollback_if_active(SQLite::Database& db) noexcept {
  if (sqlite3_get_autocommit(db.getHandle())) return;
  try {
    db.exec("ROLLBACK");
  } catch (...) {
  }
}

// The first problem PRAGMA quick_check finds, on one line; empty when it finds none.
std::string quick_check_problem(SQLite::Database& db) {
  std::string problem = db.execAndGet("PRAGMA quick_check(1)").getString();
  if (problem == "ok") return "";
  const std::string banner = "*** in database main ***";
  if (problem.rfind(banner, 0) == 0) problem.erase(0, banner.size());
  for (char& c : problem) c = (c == '\n' || c == '\r') ? ' ' : c;
  const auto first = problem.find_first_not_of(' ');
  return first == std::string::npos ? "malformed" : problem.substr(first);
}

// Reads what the file at `path` is, writing nothing (a read-only connection:
// not even a checkpoint on close): the schema version of an attnsweep database
// that passes quick_check (when asked), 0 for an empty one. Throws
// BadInputError otherwise.
int inspect(const std::string& path, bool quick_check) {
  SQLite::Database db(path, SQLite::OPEN_READONLY, kBusyTimeoutMs);
  db.exec("BEGIN");  // one snapshot: another process may be creating the schema right now
  const int version = recognise_schema_version(db, path);
  const std::string problem = version > 0 && quick_check ? quick_check_problem(db) : "";
  db.exec("COMMIT");
  if (!problem.empty()) {
    throw BadInputError(path + ": the database is damaged (PRAGMA quick_check: " + problem +
                        "); nothing was written to it. Keep a copy, and use another --db");
  }
  return version;
}

// ---- claims -------------------------------------------------------------------

std::optional<std::time_t> parse_utc_iso8601(const std::string& text) {
  std::tm utc{};
  char zone = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &utc.tm_year, &utc.tm_mon, &utc.tm_mday, &utc.tm_hour,
                  &utc.tm_min, &utc.tm_sec, &zone) != 7 || zone != 'Z') {
    return std::nullopt;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  return timegm(&utc);
}

// Whether `pid` is a process of this host that can still write: kill(pid, 0)
// does not fail with ESRCH (EPERM: it exists, another user's), and it is not
// a zombie (ended, not yet reaped by its parent).
bool process_alive(std::int64_t pid) {
  if (pid <= 0 || pid > INT_MAX) return false;  // kill() would signal a group, or no such pid
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (std::getline(stat, line)) {
    const auto name_end = line.rfind(')');  // "pid (name) state ...": the name may hold spaces
    if (name_end != std::string::npos && name_end + 2 < line.size() && line[name_end + 2] == 'Z') return false;
  }
  return true;
}

// A run's claim as stored; no holder when owner_pid is NULL.
struct StoredClaim {
  std::optional<Claim> holder;
  std::string claimed_at, heartbeat_at;
};

std::string describe_age(std::int64_t seconds) {
  if (seconds < 120) return std::to_string(seconds) + " s";
  if (seconds < 7200) return std::to_string(seconds / 60) + " min";
  return std::to_string(seconds / 3600) + " h";
}

}  // namespace

RunClaimedError::RunClaimedError(const std::string& path, std::int64_t run_id, Claim holder, std::string claimed_at,
                                 std::string heartbeat_at, std::optional<std::int64_t> heartbeat_age_seconds)
    : BadInputError(path + ": run " + std::to_string(run_id) + " is being run by pid " + std::to_string(holder.pid) +
                    " on host " + holder.host + " since " + claimed_at + ", last heartbeat " +
                    (heartbeat_age_seconds ? describe_age(*heartbeat_age_seconds) + " ago" : "'" + heartbeat_at + "'") +
                    "; wait for it, or stop it (the run can be taken over once that process has ended, or " +
                    std::to_string(kClaimStaleAfterSeconds / 60) + " min after its last heartbeat)"),
      run_id(run_id),
      holder(std::move(holder)),
      claimed_at(std::move(claimed_at)),
      heartbeat_at(std::move(heartbeat_at)),
      heartbeat_age_seconds(heartbeat_age_seconds) {}

void snapshot_database(const std::string& path, const std::string& target) {
  try {
    SQLite::Database db = open_for_reading(path, kBusyTimeoutMs);
    SQLite::Statement vacuum(db, "VACUUM INTO ?");
    vacuum.bind(1, target);
    vacuum.exec();
  } catch (const SQLite::Exception& error) {
    throw BadInputError(path + ": cannot write a copy to " + target + ": " + error.what());
  }
}

std::optional<std::set<std::string>> stored_run_uuids(const std::string& path) {
  try {
    SQLite::Database db(immutable_uri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    if (recognise_schema_version(db, path) <= 0) return std::nullopt;
    SQLite::Statement query(db, "SELECT run_uuid FROM runs");
    std::set<std::string> uuids;
    while (query.executeStep()) uuids.insert(query.getColumn(0).isNull() ? "" : query.getColumn(0).getString());
    return uuids;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void point_traces_at(const std::string& snapshot, std::int64_t run_id, const std::vector<PublishedTrace>& traces) {
  try {
    SQLite::Database db(snapshot, SQLite::OPEN_READWRITE, kBusyTimeoutMs);
    SQLite::Transaction transaction(db);
    SQLite::Statement clear(db, "UPDATE cases SET trace_path = NULL WHERE run_id = ?");
    clear.bind(1, run_id);
    clear.exec();
    SQLite::Statement point(db, "UPDATE cases SET trace_path = ? WHERE case_id = ?");
    for (const auto& trace : traces) {
      point.bind(1, trace.stored);
      point.bind(2, trace.case_id);
      point.exec();
      point.reset();
    }
    SQLite::Statement base(db, "UPDATE runs SET trace_path_base = ? WHERE run_id = ?");
    base.bind(1, kTraceBaseDatabase);
    base.bind(2, run_id);
    base.exec();
    transaction.commit();
  } catch (const SQLite::Exception& error) {
    throw std::runtime_error(snapshot + ": cannot point the copy at its traces: " + error.what());
  }
}

std::string random_uuid() {
  std::random_device entropy;
  std::uniform_int_distribution<int> nibble(0, 15);
  const char* digits = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) text += '-';
    int value = nibble(entropy);
    if (i == 12) value = 4;                    // version 4: random
    if (i == 16) value = 8 | (value & 3);      // the RFC 4122 variant
    text += digits[value];
  }
  return text;
}

std::string utc_now_iso8601() { return text::utc_now("%Y-%m-%dT%H:%M:%SZ"); }

struct Store::Impl {
  SQLite::Database database;
  std::string path;
  int version;            // the schema version found at the open
  bool prepared = false;  // schema current, journal mode WAL, foreign keys on
  // Never creates: the constructor has made the file (or found it) by then.
  Impl(const std::string& path, int version)
      : database(path, SQLite::OPEN_READWRITE, kBusyTimeoutMs), path(path), version(version) {}

  // Whether the schema is to be created or migrated by the first write.
  bool upgrade_pending() const { return !prepared && version < kSchemaVersion; }

  // Before the first write: the schema brought to the current version (one
  // writer at a time creates or migrates: others wait on the lock, then find
  // the current version and do nothing), then WAL and foreign keys. Nothing
  // before it writes, so a command refused after the open changes nothing.
  void prepare() {
    if (prepared) return;
    if (upgrade_pending()) {
      database.exec("PRAGMA foreign_keys = OFF");
      database.exec("BEGIN IMMEDIATE");
      try {
        bring_schema_up_to_date(database, path);
        database.exec("COMMIT");
      } catch (...) {
        rollback_if_active(database);
        throw;
      }
    }
    finish_preparing();
  }
  // After a write transaction that brought the schema up to date itself (claim_run).
  void finish_preparing() {
    version = kSchemaVersion;
    database.exec("PRAGMA journal_mode = WAL");
    database.exec("PRAGMA foreign_keys = ON");
    prepared = true;
  }
};

namespace {

// For a write of a run in progress: how to go on once the cause is fixed.
std::string continue_run(std::int64_t run_id) {
  const std::string id = std::to_string(run_id);
  return "continue run " + id + " with --resume " + id + " (the cases stored so far are kept)";
}

// A write that fails in SQLite (a lock held too long, a full disk) as one line
// naming the file, the reason and `what_to_do` (runner/storage/sqlite_failure.hpp).
template <typename Body>
auto written(SQLite::Database& db, const std::string& path, const std::string& what_to_do, Body body)
    -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& error) {
    throw DatabaseWriteError(describe_sqlite_failure(path, error.getExtendedErrorCode(), error.what(),
                                                     sqlite3_system_errno(db.getHandle()), what_to_do));
  }
}

using Keys = std::vector<Value>;

// Each of `rows` into `table` (kernels, ops, samples: a case's children) after the
// key values `keys_of` gives it. The SQL is built once per call site: each passes
// a lambda of its own type, so each has its own instance of this function.
template <typename Row, typename KeysOf>
void insert_rows(SQLite::Database& db, const fields::Table<Row>& table, const std::vector<Row>& rows, KeysOf keys_of) {
  static const std::string sql = fields::insert_sql(table);
  SQLite::Statement insert(db, sql);
  for (const Row& row : rows) {
    fields::bind_row(insert, table, keys_of(row), row);
    insert.exec();
    insert.reset();
  }
}

}  // namespace

Store::Store(const std::string& path, Open mode) : path_(path) {
  refuse_side_file_name(path);
  const std::string refused = path + ": cannot use as a results database: ";
  const bool creates = mode == Open::create_if_absent || mode == Open::create_new;
  bool created = false;  // an empty file made here, filled in place
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) throw BadInputError(refused + std::strerror(errno));
    if (!creates) throw BadInputError(path + ": database not found");
    // Made whole beside it and linked into place: two processes creating one
    // database never meet inside a half-made file (issue 21, finding 9).
    const NewDatabase made = create_whole_database(path, [](const std::string& file) { Store fill(file); });
    if (made == NewDatabase::unsupported) {
      created = create_empty_file(path, refused);  // a folder without hard links: made in place
    } else if (made == NewDatabase::made_by_another && mode == Open::create_new) {
      throw BadInputError(path + ": another process created it just now; nothing ran");
    }
    if (::stat(path.c_str(), &info) != 0) throw BadInputError(refused + std::strerror(errno));
  } else if (mode == Open::create_new) {
    throw BadInputError(path + ": already exists; nothing ran");
  }
  // SQLite would write a journal beside /dev/null, or block on a FIFO.
  if (!S_ISREG(info.st_mode)) throw BadInputError(refused + "it is " + file_kind(info.st_mode) + ", not a regular file");
  if (!creates && info.st_size == 0) {
    throw BadInputError(path + ": database not found (the file is empty)");
  }
  try {
    const int version = inspect(path, mode != Open::existing_without_quick_check);
    impl_ = std::make_unique<Impl>(path, version);
    // `run` writes its run at once; an existing database (--resume, merge's
    // output) is migrated by its first write, after the command's checks.
    if (creates) impl_->prepare();
  } catch (...) {
    impl_.reset();  // closed before its files are removed
    if (created) remove_database_files(path);
    try {
      throw;
    } catch (const SQLite::Exception& error) {
      const int code = error.getErrorCode();
      if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_FULL) {
        throw BadInputError(describe_sqlite_failure(path, error.getExtendedErrorCode(), error.what(), 0));
      }
      throw BadInputError(refused + error.what());
    }
  }
}

Store::~Store() = default;

std::int64_t Store::begin_run(const RunRecord& run, const Claim& owner) {
  return written(impl_->database, path_, "run again", [&] {
    impl_->prepare();
    auto& db = impl_->database;
    static const std::string sql = fields::insert_sql(run_columns());
    SQLite::Statement insert(db, sql);
    fields::bind_row(insert, run_columns(), {},
                     run_record(run, utc_now_iso8601(), owner, run.run_uuid.empty() ? random_uuid() : run.run_uuid));
    insert.exec();
    return db.getLastInsertRowid();
  });
}

void Store::claim_run(std::int64_t run_id, const Claim& claimant) {
  return written(impl_->database, path_, "run again", [&] {
    auto& db = impl_->database;
    // An older database is migrated in the claim's own transaction: a refused
    // claim (no such run, held by a live process, perhaps an older attnsweep's)
    // rolls the migration back with it.
    const bool upgrade = impl_->upgrade_pending();
    if (upgrade) db.exec("PRAGMA foreign_keys = OFF");
    // IMMEDIATE: the write lock before the read, so two claimants cannot both see the run free.
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    if (upgrade) bring_schema_up_to_date(db, path_);
    StoredClaim stored;
    {
      SQLite::Statement query(db, "SELECT owner_pid, owner_host, claimed_at, heartbeat_at FROM runs WHERE run_id = ?");
      query.bind(1, run_id);
      if (!query.executeStep()) throw BadInputError(path_ + ": no run " + std::to_string(run_id));
      if (!query.getColumn(0).isNull()) {
        stored.holder = Claim{query.getColumn(0).getInt64(), query.getColumn(1).isNull() ? "" : query.getColumn(1).getString()};
      }
      stored.claimed_at = query.getColumn(2).isNull() ? "" : query.getColumn(2).getString();
      stored.heartbeat_at = query.getColumn(3).isNull() ? "" : query.getColumn(3).getString();
    }
    if (stored.holder && !(*stored.holder == claimant)) {
      const auto heartbeat = parse_utc_iso8601(stored.heartbeat_at);
      const std::optional<std::int64_t> age =  // a clock behind the holder's reads as no age, not a negative one
          heartbeat ? std::optional<std::int64_t>(std::max<std::int64_t>(0, std::time(nullptr) - *heartbeat)) : std::nullopt;
      const bool on_this_host = stored.holder->host == Claim::this_process().host;
      const bool ended = on_this_host && !process_alive(stored.holder->pid);
      const bool silent = !age || *age > kClaimStaleAfterSeconds;
      if (!ended && !silent) {
        throw RunClaimedError(path_, run_id, *stored.holder, stored.claimed_at, stored.heartbeat_at, age);
      }
    }
    const std::string now = utc_now_iso8601();
    SQLite::Statement update(db, "UPDATE runs SET status = ?, finished_at = NULL, owner_pid = ?, owner_host = ?, "
                                 "claimed_at = ?, heartbeat_at = ? WHERE run_id = ?");
    update.bind(1, to_string(RunStatus::running));
    update.bind(2, claimant.pid);
    update.bind(3, claimant.host);
    update.bind(4, now);
    update.bind(5, now);
    update.bind(6, run_id);
    update.exec();
    transaction.commit();
    if (!impl_->prepared) impl_->finish_preparing();
  });
}

bool Store::heartbeat(std::int64_t run_id, const Claim& claimant) {
  return written(impl_->database, path_, continue_run(run_id), [&] {
    impl_->prepare();
    SQLite::Statement update(impl_->database, "UPDATE runs SET heartbeat_at = ? WHERE run_id = ? AND owner_pid = ? "
                                              "AND owner_host = ?");
    update.bind(1, utc_now_iso8601());
    update.bind(2, run_id);
    update.bind(3, claimant.pid);
    update.bind(4, claimant.host);
    return update.exec() == 1;
  });
}

std::optional<std::int64_t> Store::add_case(std::int64_t run_id, const Case& c, const CaseResult& result) {
  return written(impl_->database, path_, continue_run(run_id), [&]() -> std::optional<std::int64_t> {
    impl_->prepare();
    auto& db = impl_->database;
    // IMMEDIATE: the write lock before the first read. A transaction that reads
    // and then writes gets SQLITE_BUSY at once, without waiting, when another
    // process (a worker of --gpus) committed in between.
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    std::optional<int> shard_index;  // the run's, stored with each of its cases
    // A run made before schema 8 and resumed keeps its paths as given, so that one
    // run's paths are all relative to the same thing.
    std::string trace_path = result.trace_path;
    {
      SQLite::Statement run(db, "SELECT shard_index, trace_path_base FROM runs WHERE run_id = ?");
      run.bind(1, run_id);
      if (run.executeStep()) {
        if (!run.getColumn(0).isNull()) shard_index = run.getColumn(0).getInt();
        if (run.getColumn(1).getString() == kTraceBaseDatabase) trace_path = trace_path_to_store(path_, trace_path);
      }
    }
    // Only the (run_id, plan_index) key is let pass: any other refusal (a CHECK, NOT NULL) still throws.
    static const std::string case_sql = fields::insert_sql(case_columns()) + " ON CONFLICT (run_id, plan_index) DO NOTHING";
    SQLite::Statement insert(db, case_sql);
    fields::bind_row(insert, case_columns(), {},
                     case_record(c, result, CaseContext{run_id, utc_now_iso8601(), shard_index, trace_path}));
    if (insert.exec() == 0) return std::nullopt;  // already stored; the transaction rolls back, having written nothing
    const std::int64_t case_id = db.getLastInsertRowid();
    if (result.profile) {
      insert_rows(db, fields::kernels_table(), result.profile->kernels, [&](const KernelStat&) -> Keys { return {case_id}; });
      insert_rows(db, fields::ops_table(), result.profile->ops, [&](const OpStat&) -> Keys { return {case_id}; });
    }
    std::map<SampleMode, std::int64_t> next_index;  // numbered per mode
    insert_rows(db, fields::samples_table(), result.samples,
                [&](const TimingSample& s) -> Keys { return {case_id, next_index[s.mode]++}; });
    transaction.commit();
    return case_id;
  });
}

bool Store::finish_run(std::int64_t run_id, RunStatus status, const Claim& claimant) {
  return written(impl_->database, path_, continue_run(run_id), [&] {
    impl_->prepare();
    SQLite::Statement update(impl_->database,
                             "UPDATE runs SET status = ?, finished_at = ?, owner_pid = NULL, owner_host = NULL, "
                             "claimed_at = NULL, heartbeat_at = NULL WHERE run_id = ? "
                             "AND (owner_pid IS NULL OR (owner_pid = ? AND owner_host = ?))");
    update.bind(1, to_string(status));
    update.bind(2, utc_now_iso8601());
    update.bind(3, run_id);
    update.bind(4, claimant.pid);
    update.bind(5, claimant.host);
    return update.exec() == 1;
  });
}

void Store::set_run_gpus(std::int64_t run_id, const std::string& gpus) {
  return written(impl_->database, path_, continue_run(run_id), [&] {
    impl_->prepare();
    SQLite::Statement update(impl_->database, "UPDATE runs SET gpus = ? WHERE run_id = ?");
    update.bind(1, gpus);
    update.bind(2, run_id);
    update.exec();
  });
}

bool Store::add_run_device(std::int64_t run_id, const RunDevice& device) {
  return written(impl_->database, path_, continue_run(run_id), [&] {
    impl_->prepare();
    // The device's environment facts and ceilings (run_device_columns: the facts of
    // environment_facts.hpp, the list the fingerprint and the worker use too), under the run's keys.
    static const std::string sql = "INSERT OR IGNORE INTO run_devices (run_id, shard_index, " +
                                   fields::insert_columns(run_device_columns()) + ") SELECT run_id, shard_index, " +
                                   fields::insert_placeholders(run_device_columns()) + " FROM runs WHERE run_id = ?";
    SQLite::Statement insert(impl_->database, sql);
    const int next = fields::bind_row(insert, run_device_columns(), {to_value(utc_now_iso8601())}, device);
    insert.bind(next, run_id);
    return insert.exec() == 1;
  });
}

void Store::add_claims(std::int64_t run_id, const std::vector<ClaimRow>& claims) {
  if (claims.empty()) return;
  written(impl_->database, path_, continue_run(run_id), [&] {
    impl_->prepare();
    SQLite::Transaction transaction(impl_->database);
    static const std::string sql =
        fields::insert_sql(claim_columns()) + " ON CONFLICT (run_id, claims_file, name) DO NOTHING";
    SQLite::Statement insert(impl_->database, sql);
    for (const ClaimRow& claim : claims) {
      fields::bind_row(insert, claim_columns(), {to_value(run_id)}, claim);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
    return true;
  });
}

}  // namespace attnsweep::storage
