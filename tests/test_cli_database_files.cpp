// Databases and the files beside them, end to end (issue 21, hardening round
// three, findings 6, 9, 10, 11, 14, 17 and 18): --publish never copies over
// the live database or an unrelated file, two processes creating one new
// database both store, SQLite's side-file names are never taken as a database,
// nightly never changes a stored night, every reader opens a WAL database on a
// read-only mount, and files that are not what they seem get one clear line.
#include <gtest/gtest.h>

#include "tests/support/damaged_database.hpp"
#include "tests/support/file_text.hpp"
#include "tests/support/spawn_attnsweep.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runner/common/sha256.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/cli_output_checks.hpp"
#include "tests/support/cli_test.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::Outcome;
using attnsweep::testing::run_attnsweep;

// Two quick CPU cases. target_rel_stdev 10 (1000%): five samples always meet it, so no case is
// `suspect: not_converged`, and a night of them is judged (one whose cases mostly could not be
// judged is inconclusive, exit 4: issue 38), which these tests of database files are not about.
const char* const kTinyConfig = R"(name: tiny
device: cpu
variants: [naive, sdpa_math]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 5, min_gpu_seconds: 0, max_case_seconds: 0.2,
          target_rel_stdev: 10}
)";

std::string read(const std::string& path) { return attnsweep::testing::read_file(path); }

using attnsweep::testing::contains;
using attnsweep::testing::damage;

int count_of(const std::string& db, const std::string& sql) {
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  return check.execAndGet(sql).getInt();
}

// Starts attnsweep with `arguments` in `folder`, stdout and stderr into `log`; returns its pid.
pid_t spawn(const std::vector<std::string>& arguments, const std::string& folder, const std::string& log) {
  return attnsweep::testing::spawn_attnsweep(arguments, log, {folder});
}
using attnsweep::testing::wait_exit;

class DatabaseFiles : public attnsweep::testing::CliTest {
 protected:
  DatabaseFiles() : CliTest("attnsweep-dbfiles") {}
  std::string config() { return write("tiny.yaml", kTinyConfig); }
  // A finished run of the tiny config in `db` (extra: more options).
  void run_into(const std::string& db, const std::string& extra = "") {
    const Outcome run = run_attnsweep("run " + config() + " --db " + db + " -q " + extra);
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
};

// Finding 6. Before: "run 3 stored", exit 0, then every reader failed
// "malformed database schema" (the copy went over the open database).
TEST_F(DatabaseFiles, PublishIntoTheDatabasesOwnFolderIsRefusedBeforeTheSweep) {
  const std::string db = path("results.db");
  run_into(db);
  run_into(db);
  const std::string before = attnsweep::sha256_hex(read(db));
  const Outcome published = run_attnsweep("run " + config() + " --db " + db + " --publish " + path(".") + " -q");
  EXPECT_EQ(published.exit_code, 2) << published.output;
  EXPECT_TRUE(contains(published.output, "error: --publish " + path(".") + ": ")) << published.output;
  EXPECT_TRUE(contains(published.output, "is the database itself (--db " + db + ")")) << published.output;
  EXPECT_EQ(attnsweep::sha256_hex(read(db)), before);
  EXPECT_EQ(count_of(db, "SELECT count(*) FROM runs"), 2);
}

// Finding 6. Before: a user's other.db.publish beside the database was deleted,
// and an unrelated DIR/<name>.db silently replaced.
TEST_F(DatabaseFiles, PublishNeverReplacesAnUnrelatedFileNorAUsersDotPublishFile) {
  const std::string notes = write("other.db.publish", "my notes\n");
  fs::create_directories(path("out"));
  run_into(path("other.db"), "--publish " + path("out"));
  EXPECT_EQ(read(notes), "my notes\n");
  EXPECT_EQ(count_of(path("out/other.db"), "SELECT count(*) FROM runs"), 1);
  // The same database published again: the earlier copy holds nothing it lacks, and is replaced.
  run_into(path("other.db"), "--publish " + path("out"));
  EXPECT_EQ(count_of(path("out/other.db"), "SELECT count(*) FROM runs"), 2);
  // Another database of the same name (another job's, a file of the user's) is never replaced.
  fs::create_directories(path("elsewhere"));
  run_into(path("elsewhere/other.db"));
  const std::string before = attnsweep::sha256_hex(read(path("out/other.db")));
  const Outcome foreign = run_attnsweep("run " + config() + " --db " + path("elsewhere/other.db") + " --publish " +
                                        path("out") + " -q");
  EXPECT_EQ(foreign.exit_code, 2) << foreign.output;
  EXPECT_TRUE(contains(foreign.output, "holds runs that " + path("elsewhere/other.db") + " lacks")) << foreign.output;
  EXPECT_EQ(attnsweep::sha256_hex(read(path("out/other.db"))), before);
  EXPECT_EQ(count_of(path("elsewhere/other.db"), "SELECT count(*) FROM runs"), 1);  // refused before the sweep
  write("out/text.db", "not a database\n");
  const Outcome text = run_attnsweep("run " + config() + " --db " + path("text.db") + " --publish " + path("out") + " -q");
  EXPECT_EQ(text.exit_code, 2) << text.output;
  EXPECT_TRUE(contains(text.output, "is not an attnsweep database")) << text.output;
  EXPECT_EQ(read(path("out/text.db")), "not a database\n");
  EXPECT_FALSE(fs::exists(path("text.db")));
  for (const auto& entry : fs::directory_iterator(path("."))) {
    EXPECT_EQ(entry.path().filename().string().find(".publish-"), std::string::npos) << entry.path();
  }
}

// Finding 6. Before: exit 1, "cannot copy out/traces/... to out/traces/...: File exists".
TEST_F(DatabaseFiles, PublishWithTheTracesWrittenIntoThePublishFolderSucceeds) {
  const Outcome run = run_attnsweep("run " + config() + " --db " + path("t.db") + " --traces " + path("out/traces") +
                                    " --publish " + path("out") + " -q");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "published: " + path("out/t.db") + " and 2 trace files")) << run.output;
  SQLite::Database copy(path("out/t.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(copy.execAndGet("SELECT count(*) FROM cases WHERE trace_path LIKE 'traces/%'").getInt(), 2);
}

// Finding 9, nightly. Two nightlies in one folder in one second share the
// default nightly-<stamp>.db name: the second is refused, never mixed into the first.
TEST_F(DatabaseFiles, TwoNightliesInOneSecondNeverShareADatabase) {
  config();
  run_into(path("base.db"));
  int refused = 0;
  for (int pair = 0; pair < 3; ++pair) {
    const std::string folder = path("m" + std::to_string(pair));
    fs::create_directories(folder);
    fs::copy_file(path("tiny.yaml"), folder + "/tiny.yaml");
    const std::vector<std::string> nightly = {"nightly", "tiny.yaml", "--baseline", path("base.db"), "--threshold", "99",
                                              "--min-change-us", "1000000"};
    const pid_t first = spawn(nightly, folder, path("a.log"));
    const pid_t second = spawn(nightly, folder, path("b.log"));
    const int a = wait_exit(first), b = wait_exit(second);
    for (const auto& [code, log] : {std::pair{a, path("a.log")}, std::pair{b, path("b.log")}}) {
      EXPECT_TRUE(code == 0 || code == 2) << read(log);
      if (code == 2) {
        ++refused;
        EXPECT_TRUE(contains(read(log), "already exists") || contains(read(log), "another process created it"))
            << read(log);
      }
    }
    for (const auto& entry : fs::directory_iterator(folder)) {
      if (entry.path().extension() != ".db") continue;
      EXPECT_EQ(count_of(entry.path().string(), "SELECT count(*) FROM runs"), 1) << entry.path();
    }
  }
  std::cout << "nightly pairs with one refused: " << refused << " of 3\n";
}

// Finding 10. Before: "run 1 stored in x.db-wal", which the next writer of x.db deleted.
TEST_F(DatabaseFiles, SqliteSideFileNamesAreRefusedAsADatabaseEverywhere) {
  run_into(path("x.db"));
  run_into(path("s0.db"), "--shard 0/2");
  const std::string message = "a database must not end in -wal, -shm or -journal: give another name";
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"run " + config() + " --db " + path("x.db-wal"), path("x.db-wal")},
      {"nightly " + config() + " --baseline " + path("x.db") + " --db " + path("n.db-journal"), path("n.db-journal")},
      {"merge " + path("m.db-shm") + " " + path("s0.db"), path("m.db-shm")},
      {"merge " + path("m.db") + " " + path("s0.db-wal"), path("s0.db-wal")},
      {"compare " + path("x.db") + " " + path("x.db-wal"), path("x.db-wal")},
      {"report " + path("x.db-journal") + " --format markdown", path("x.db-journal")},
      {"query " + path("x.db-shm") + " 'SELECT 1'", path("x.db-shm")},
      {"collect hf://buckets/acme/bench/x " + path("c.db-wal"), path("c.db-wal")},
  };
  for (const auto& [command, named] : commands) {
    const Outcome refused = run_attnsweep(command);
    EXPECT_EQ(refused.exit_code, 2) << command << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, "error: ")) << refused.output;
    EXPECT_TRUE(contains(refused.output, named + ": is named like SQLite's")) << command << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, message)) << command << "\n" << refused.output;
  }
  for (const char* left : {"n.db-journal", "m.db-shm", "m.db", "c.db-wal"}) EXPECT_FALSE(fs::exists(path(left))) << left;
  // Reading x.db may leave its empty -wal beside it; no run went there.
  EXPECT_TRUE(!fs::exists(path("x.db-wal")) || fs::file_size(path("x.db-wal")) == 0);
  EXPECT_EQ(count_of(path("x.db"), "SELECT count(*) FROM runs"), 1);
}

// Finding 11. Before: both exit 0; the stored summary was overwritten and the
// stored night got a second run.
TEST_F(DatabaseFiles, NightlyNeverChangesAStoredNight) {
  const std::string history = path("history");
  const Outcome first = run_attnsweep("nightly " + config() + " --history " + history + " --db " + path("first.db") +
                                      " -q");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::string stored_db, stored_md;
  for (const auto& entry : fs::directory_iterator(history)) {
    (entry.path().extension() == ".db" ? stored_db : stored_md) = entry.path().string();
  }
  const std::string db_hash = attnsweep::sha256_hex(read(stored_db)), md_hash = attnsweep::sha256_hex(read(stored_md));
  fs::create_directory_symlink(history, path("history-link"));
  fs::create_symlink(stored_db, path("night-link.db"));
  fs::create_symlink(stored_md, path("summary-link.md"));
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"--summary " + stored_md + " --db " + path("a.db"), "--summary " + stored_md + " is in the --history folder"},
      {"--summary " + path("history-link/x.md") + " --db " + path("b.db"), "is in the --history"},
      {"--summary " + path("summary-link.md") + " --db " + path("c.db"), "is in the --history"},
      {"--db " + path("night-link.db"), "--db " + path("night-link.db") + " is in the --history"},
  };
  for (const auto& [options, message] : refusals) {
    const Outcome refused = run_attnsweep("nightly " + config() + " --history " + history + " " + options + " -q");
    EXPECT_EQ(refused.exit_code, 2) << options << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, message)) << options << "\n" << refused.output;
  }
  EXPECT_EQ(attnsweep::sha256_hex(read(stored_db)), db_hash);
  EXPECT_EQ(attnsweep::sha256_hex(read(stored_md)), md_hash);
  for (const char* never_made : {"a.db", "b.db", "c.db"}) EXPECT_FALSE(fs::exists(path(never_made))) << never_made;
}

// Finding 14. Before: merge hung on the FIFO (killed by timeout, exit 124).
TEST_F(DatabaseFiles, MergeRefusesAFifoInputAtOnce) {
  run_into(path("f0.db"), "--shard 0/2");
  ASSERT_EQ(mkfifo(path("fifo.db").c_str(), 0644), 0);
  const Outcome merged = run_attnsweep("merge " + path("out.db") + " " + path("f0.db") + " " + path("fifo.db"),
                                       "timeout 20 ");
  EXPECT_EQ(merged.exit_code, 2) << merged.output;
  EXPECT_TRUE(contains(merged.output, "error: " + path("fifo.db") + ": is not a regular file")) << merged.output;
  EXPECT_FALSE(fs::exists(path("out.db")));
}

// Finding 17. Before: compare, report and merge failed "unable to open database
// file" where query read the same file.
TEST_F(DatabaseFiles, EveryReaderOpensAWalDatabaseOnAReadOnlyMount) {
  const std::string folder = path("ro");
  fs::create_directories(folder);
  run_into(folder + "/s0.db", "--shard 0/2");
  run_into(folder + "/s1.db", "--shard 1/2");
  ASSERT_FALSE(fs::exists(folder + "/s0.db-wal"));
  const std::string read_only = "mount --bind " + folder + " " + folder + " && mount -o remount,ro,bind " + folder;
  if (std::system(("unshare -m sh -c '" + read_only + "' > /dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a folder read-only here";
  }
  const std::string a = std::string(ATTNSWEEP_BINARY) + " ";
  const std::vector<std::string> commands = {
      a + "compare " + folder + "/s0.db " + folder + "/s1.db",
      a + "report " + folder + "/s0.db -o " + path("r.html"),
      a + "merge " + path("merged.db") + " " + folder + "/s0.db " + folder + "/s1.db",
      a + "nightly " + path("tiny.yaml") + " --baseline " + folder + "/s0.db --db " + path("night.db") +
          " --threshold 99 --min-change-us 1000000 -q",
  };
  for (const auto& command : commands) {
    const std::string shell = "unshare -m sh -c '" + read_only + " && " + command + "' > " + path("ro.log") + " 2>&1";
    const int status = std::system(shell.c_str());
    EXPECT_TRUE(WIFEXITED(status)) << command;
    EXPECT_EQ(WEXITSTATUS(status), 0) << command << "\n" << read(path("ro.log"));
    EXPECT_FALSE(contains(read(path("ro.log")), "unable to open database file")) << read(path("ro.log"));
  }
  EXPECT_EQ(count_of(path("merged.db"), "SELECT count(*) FROM cases"), 2);
  EXPECT_TRUE(fs::exists(path("r.html")));
}

// Finding 18. Before: "error: database disk image is malformed", exit 1, no file named.
TEST_F(DatabaseFiles, MergeOfADamagedShardNamesTheFile) {
  run_into(path("s0.db"), "--shard 0/2");
  run_into(path("s1.db"), "--shard 1/2");
  {  // the samples table's root page: its cell count made absurd
    SQLite::Database db(path("s1.db"), SQLite::OPEN_READONLY);
    const int page = db.execAndGet("SELECT rootpage FROM sqlite_master WHERE name = 'samples'").getInt();
    const int page_size = db.execAndGet("PRAGMA page_size").getInt();
    std::fstream file(path("s1.db"), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(page - 1) * page_size + 3);
    file.write("\x7f\xff", 2);
  }
  const Outcome merged = run_attnsweep("merge " + path("out.db") + " " + path("s0.db") + " " + path("s1.db"));
  EXPECT_EQ(merged.exit_code, 2) << merged.output;
  EXPECT_TRUE(contains(merged.output, "error: " + path("s1.db") + ": the database is damaged")) << merged.output;
  EXPECT_FALSE(fs::exists(path("out.db")));
}

// Finding 18. Before: "-o /dev/stdout: cannot write: No such file or directory", exit 1.
TEST_F(DatabaseFiles, ReportToDevStdoutIntoAPipeIsWritten) {
  run_into(path("r.db"));
  const int status = std::system(("bash -c 'set -o pipefail; " + std::string(ATTNSWEEP_BINARY) + " report " +
                                  path("r.db") + " -o /dev/stdout 2> " + path("err.log") + " | cat > " +
                                  path("piped.html") + "'").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0) << read(path("err.log"));
  EXPECT_TRUE(contains(read(path("piped.html")), "<html")) << read(path("err.log"));
}

// Finding 18. Before: the whole sweep ran, then "filesystem error: temp_directory_path", exit 1.
TEST_F(DatabaseFiles, NightlyWithAMissingTmpdirIsRefusedBeforeTheSweep) {
  const Outcome night = run_attnsweep("nightly " + config() + " --history " + path("h") + " --db " + path("n.db"),
                                      "TMPDIR=" + path("missing") + " ");
  EXPECT_EQ(night.exit_code, 2) << night.output;
  EXPECT_TRUE(contains(night.output, "error: TMPDIR=" + path("missing") + ": no such folder; set TMPDIR to a writable "
                                    "folder")) << night.output;
  EXPECT_FALSE(fs::exists(path("n.db")));
  EXPECT_FALSE(fs::exists(path("h")));
}

// ---- Issue 33, items 9, 12 and 14: refused means unchanged; TMPDIR; locks and full disks ----

// Item 9. Before: a refused --resume of a saved version-9 database migrated it
// in place (schema 9 -> 13, another SHA; the older attnsweep then refused it).
// Refused here for a run that is not there, and for a claim another live
// process holds: byte-identical both times. A resume that goes on migrates it.
TEST_F(DatabaseFiles, ARefusedResumeLeavesADatabaseOfAnOlderSchemaUnmigrated) {
  const std::string db = path("v9.db");
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v9.db", db);
  std::string saved_config;
  {
    SQLite::Database old(db, SQLite::OPEN_READONLY);
    saved_config = write("saved.yaml", old.execAndGet("SELECT config_yaml FROM runs").getString());
  }
  const std::string resume = "run " + saved_config + " --db " + db + " --device cpu --shard 0/1 -q --resume ";
  std::string before = attnsweep::sha256_hex(read(db));
  const Outcome absent = run_attnsweep(resume + "7");
  EXPECT_EQ(absent.exit_code, 2) << absent.output;
  EXPECT_TRUE(contains(absent.output, "error: " + db + ": no run 7 to resume")) << absent.output;
  EXPECT_EQ(attnsweep::sha256_hex(read(db)), before) << "a refused resume changed the database";

  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  {  // run 1 held by this (live) test process, as an older attnsweep running it would
    SQLite::Database old(db, SQLite::OPEN_READWRITE);
    old.exec("UPDATE runs SET owner_pid = " + std::to_string(::getpid()) + ", owner_host = '" + host +
             "', claimed_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), heartbeat_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')");
  }
  before = attnsweep::sha256_hex(read(db));
  const Outcome held = run_attnsweep(resume + "1");
  EXPECT_EQ(held.exit_code, 2) << held.output;
  EXPECT_TRUE(contains(held.output, "run 1 is being run by pid " + std::to_string(::getpid()))) << held.output;
  EXPECT_EQ(attnsweep::sha256_hex(read(db)), before) << "a refused claim changed the database";
  EXPECT_EQ(count_of(db, "PRAGMA user_version"), 9);

  { SQLite::Database old(db, SQLite::OPEN_READWRITE); old.exec("UPDATE runs SET owner_pid = NULL, owner_host = NULL"); }
  const Outcome resumed = run_attnsweep(resume + "1");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(count_of(db, "PRAGMA user_version"), attnsweep::storage::kSchemaVersion);
}

// Item 12. Before: compare of an older database and history printed
// "filesystem error: temp_directory_path" and exited 1 with TMPDIR empty or
// missing. Now an empty TMPDIR is /tmp, and a missing one is one line, exit 2.
TEST_F(DatabaseFiles, AnEmptyTmpdirIsTmpAndAMissingOneIsRefusedInOneLine) {
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v9.db", path("a.db"));
  fs::copy_file(ATTNSWEEP_SOURCE_DIR "/tests/data/schema_v9.db", path("b.db"));
  fs::create_directories(path("nights"));
  for (const std::string command : {"compare " + path("a.db") + " " + path("b.db"), "history " + path("nights")}) {
    const Outcome usual = run_attnsweep(command, "env -u TMPDIR ");
    EXPECT_NE(usual.exit_code, 1) << usual.output;
    const Outcome empty = run_attnsweep(command, "TMPDIR= ");
    EXPECT_EQ(empty.exit_code, usual.exit_code) << empty.output;
    EXPECT_EQ(empty.output, usual.output);
    const Outcome missing = run_attnsweep(command, "TMPDIR=" + path("nope") + " ");
    EXPECT_EQ(missing.exit_code, 2) << missing.output;
    EXPECT_EQ(std::count(missing.output.begin(), missing.output.end(), '\n'), 1) << missing.output;
    EXPECT_TRUE(contains(missing.output, "TMPDIR=" + path("nope") + ": no such folder; set TMPDIR to a writable folder"))
        << missing.output;
    EXPECT_FALSE(contains(missing.output, "filesystem error")) << missing.output;
  }
}

// Item 14. Before: "error: database is locked" after 10 s, naming no file and
// saying nothing of what to do.
TEST_F(DatabaseFiles, ALockedDatabaseIsNamedWithWhatToDo) {
  run_into(path("r.db"));
  SQLite::Database holder(path("r.db"), SQLite::OPEN_READWRITE);
  holder.exec("BEGIN EXCLUSIVE");  // as a sqlite3 shell's BEGIN EXCLUSIVE would
  const Outcome locked = run_attnsweep("run " + config() + " --db " + path("r.db") + " -q");
  holder.exec("ROLLBACK");
  EXPECT_EQ(locked.exit_code, 1) << locked.output;
  EXPECT_TRUE(contains(locked.output, "error: " + path("r.db") + ": database is locked: another process has held it "
                                      "for 10 s (a `sqlite3` shell, another attnsweep); close it and run again\n"))
      << locked.output;
}

// Item 14. Before: "database or disk is full", naming no file; and nightly's
// copy into a full --history said "Input/output error" (a short sendfile).
TEST_F(DatabaseFiles, AFullDiskIsNamedWithWhatToDo) {
  const std::string full = path("full");
  fs::create_directories(full);
  config();
  if (std::system(("unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs " + full + "' > /dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here";
  }
  const std::string fill = "mount -t tmpfs -o size=256k tmpfs " + full + " && mkdir " + full + "/h && (dd if=/dev/zero of=" +
                           full + "/fill bs=4k > /dev/null 2>&1; true)";
  const std::string run = "unshare -m sh -c '" + fill + " && " + ATTNSWEEP_BINARY + " run " + path("tiny.yaml") +
                          " --db " + full + "/t.db -q' > " + path("run.log") + " 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(run.c_str())), 2) << read(path("run.log"));
  EXPECT_TRUE(contains(read(path("run.log")), "error: " + full + "/t.db: database or disk is full: no space left on the "
                                              "disk " + full + "/t.db is on (or over its quota); free space and run again"))
      << read(path("run.log"));
  // 64 KiB left, less than tonight's database: sendfile copies part of it and stops short.
  const std::string part = "mount -t tmpfs -o size=256k tmpfs " + full + " && mkdir " + full + "/h && dd if=/dev/zero of=" +
                           full + "/fill bs=4k count=48 > /dev/null 2>&1";
  const std::string night = "unshare -m sh -c '" + part + " && " + ATTNSWEEP_BINARY + " nightly " + path("tiny.yaml") +
                            " --db " + path("n.db") + " --history " + full + "/h -q' > " + path("night.log") + " 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(night.c_str())), 1) << read(path("night.log"));
  EXPECT_TRUE(contains(read(path("night.log")), ": No space left on device; tonight's files are kept at " + path("n.db")))
      << read(path("night.log"));
  EXPECT_FALSE(contains(read(path("night.log")), "Input/output error")) << read(path("night.log"));
}

// Finding 18. Before: "trace not written to ... (No such file or directory)" on a full disk.
TEST_F(DatabaseFiles, ATraceOnAFullDiskSaysNoSpaceLeft) {
  const std::string full = path("full");
  fs::create_directories(full);
  config();
  const std::string fill = "mount -t tmpfs -o size=256k tmpfs " + full + " && mkdir " + full + "/traces && (dd if=/dev/zero of=" +
                           full + "/fill bs=4k > /dev/null 2>&1; true)";
  if (std::system(("unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs " + full + "' > /dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here";
  }
  const std::string command = "unshare -m sh -c '" + fill + " && " + ATTNSWEEP_BINARY + " run " + path("tiny.yaml") +
                              " --db " + path("t.db") + " --traces " + full + "/traces -q' > " + path("run.log") + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read(path("run.log"));
  SQLite::Database db(path("t.db"), SQLite::OPEN_READONLY);
  SQLite::Statement warnings(db, "SELECT warnings FROM cases ORDER BY plan_index");
  int cases = 0;
  while (warnings.executeStep()) {
    ++cases;
    const std::string text = warnings.getColumn(0).getString();
    EXPECT_TRUE(contains(text, "(No space left on device)")) << text;
    EXPECT_FALSE(contains(text, "No such file or directory")) << text;
  }
  EXPECT_EQ(cases, 2);
}

// ---- Stored values out of their domain (issue 33, items 7, 8 and 11) -----------
// A database whose values no attnsweep writes is damaged: every reader refuses
// it with exit 2, naming the file, the run, the case and the column; nightly and
// history skip such a night with that reason. The values are planted with CHECK
// constraints off, as a hex editor or another tool could.

class DamagedValues : public DatabaseFiles {
 protected:
  // A finished run of the tiny config in `name`, and a copy of it in `damaged` changed by `sql`.
  void pair_with(const std::string& name, const std::string& damaged, const std::string& sql) {
    run_into(path(name));
    fs::copy_file(path(name), path(damaged));
    damage(path(damaged), sql);
  }
  // One night of the tiny config into `history` (a second after the last, so that no two share a stamp).
  Outcome night(const std::string& history) {
    if (nights_++ > 0) ::sleep(1);
    return run_attnsweep("nightly " + config() + " --history " + history + " --db " +
                         path("n" + std::to_string(nights_) + ".db") + " --threshold 99 --min-change-us 1000000 -q");
  }
  // The history's nights, oldest first.
  static std::vector<std::string> nights_in(const std::string& history) {
    std::vector<std::string> nights;
    for (const auto& entry : fs::directory_iterator(history)) {
      if (entry.path().extension() == ".db") nights.push_back(entry.path().string());
    }
    std::sort(nights.begin(), nights.end());
    return nights;
  }
  // The same damage read by compare (as the candidate), report and merge (in a shard): each exit 2,
  // one line naming the file, run 1, the case and `column_and_value`.
  void expect_every_reader_refuses(const std::string& sql, const std::string& column_and_value) {
    pair_with("a.db", "b.db", sql);
    const std::string where = path("b.db") + ": run 1, case 0 (naive";
    const Outcome compare = run_attnsweep("compare " + path("a.db") + " " + path("b.db"));
    EXPECT_EQ(compare.exit_code, 2) << compare.output;
    EXPECT_TRUE(contains(compare.output, "error: compare: " + where)) << compare.output;
    EXPECT_TRUE(contains(compare.output, column_and_value)) << compare.output;
    const Outcome report = run_attnsweep("report " + path("b.db") + " --format markdown");
    EXPECT_EQ(report.exit_code, 2) << report.output;
    EXPECT_TRUE(contains(report.output, "error: report: " + where)) << report.output;
    EXPECT_TRUE(contains(report.output, column_and_value)) << report.output;
    run_into(path("s0.db"), "--shard 0/2");
    run_into(path("s1.db"), "--shard 1/2");
    damage(path("s0.db"), sql);
    const Outcome merged = run_attnsweep("merge " + path("out.db") + " " + path("s0.db") + " " + path("s1.db"));
    EXPECT_EQ(merged.exit_code, 2) << merged.output;
    EXPECT_TRUE(contains(merged.output, "error: " + path("s0.db") + ": run 1, case 0 (naive")) << merged.output;
    EXPECT_TRUE(contains(merged.output, column_and_value)) << merged.output;
    EXPECT_FALSE(fs::exists(path("out.db")));
  }
  // Two good nights, the newest then damaged by `sql`: a third night is compared with the
  // first and stored, skipping the damaged one; history skips it too. Both say why.
  void expect_nights_skipped(const std::string& sql, const std::string& column_and_value) {
    const std::string history = path("history");
    for (int i = 0; i < 2; ++i) ASSERT_EQ(night(history).exit_code, 0);
    const std::vector<std::string> stored = nights_in(history);
    ASSERT_EQ(stored.size(), 2u);
    damage(stored.back(), sql);
    const std::string damaged = fs::path(stored.back()).filename().string();
    const Outcome third = night(history);
    EXPECT_EQ(third.exit_code, 0) << third.output;
    EXPECT_TRUE(contains(third.output, "- history: skipped " + damaged + ": ")) << third.output;
    EXPECT_TRUE(contains(third.output, damaged + ": run 1, case 0 (naive")) << third.output;
    EXPECT_TRUE(contains(third.output, column_and_value)) << third.output;
    EXPECT_TRUE(contains(third.output, "baseline: `" + history + "/" + fs::path(stored.front()).filename().string()))
        << third.output;
    EXPECT_EQ(nights_in(history).size(), 3u);
    const Outcome shown = run_attnsweep("--log-level off history " + history);
    EXPECT_EQ(shown.exit_code, 0) << shown.output;
    EXPECT_TRUE(contains(shown.output, "history: skipped " + damaged + ": ")) << shown.output;
    EXPECT_TRUE(contains(shown.output, damaged + ": run 1, case 0 (naive")) << shown.output;
    EXPECT_TRUE(contains(shown.output, column_and_value)) << shown.output;
  }
  int nights_ = 0;
};

// Item 7. Before: compare exit 0 ("IMPROVEMENT FASTER"), report showed the time, merge took the shard.
TEST_F(DamagedValues, ANegativeMedianIsRefusedByEveryReader) {
  expect_every_reader_refuses("UPDATE cases SET cpu_time_us_median = -5 WHERE plan_index = 0",
                              "cases.cpu_time_us_median = -5: allowed: a number >= 0");
}

// Item 7. Before: exit 0, the median shown as 0.0 us.
TEST_F(DamagedValues, AMedianStoredAsTextIsRefusedByEveryReader) {
  expect_every_reader_refuses("UPDATE cases SET cpu_time_us_median = 'fast' WHERE plan_index = 0",
                              "cases.cpu_time_us_median = 'fast' (text): allowed: a number");
}

// Item 7: a sample's time, read by compare's verdicts. Before: exit 0 with a verdict.
TEST_F(DamagedValues, ANegativeSampleTimeIsRefused) {
  pair_with("a.db", "b.db",
            "UPDATE samples SET cpu_time_us = -1 WHERE case_id = (SELECT case_id FROM cases WHERE plan_index = 0)");
  const Outcome compare = run_attnsweep("compare " + path("a.db") + " " + path("b.db"));
  EXPECT_EQ(compare.exit_code, 2) << compare.output;
  EXPECT_TRUE(contains(compare.output, "error: compare: " + path("b.db") + ": run 1, case 0 (naive")) << compare.output;
  EXPECT_TRUE(contains(compare.output, "samples.cpu_time_us = -1: allowed: a number >= 0")) << compare.output;
}

// Item 7. Before: "2 of -3 cases", exit 0.
TEST_F(DamagedValues, ANegativePlannedCaseCountIsRefused) {
  pair_with("a.db", "b.db", "UPDATE runs SET planned_cases = -3");
  const Outcome report = run_attnsweep("report " + path("b.db") + " --format markdown");
  EXPECT_EQ(report.exit_code, 2) << report.output;
  EXPECT_TRUE(contains(report.output, "error: report: " + path("b.db") + ": run 1: runs.planned_cases = -3: "
                                      "allowed: a whole number >= 0"))
      << report.output;
  EXPECT_FALSE(contains(report.output, "of -3")) << report.output;
}

// Item 7, nightly and history. Before: history compared the night and marked it.
TEST_F(DamagedValues, NightlyAndHistorySkipANightWithANegativeTime) {
  expect_nights_skipped("UPDATE cases SET cpu_time_us_median = -5 WHERE plan_index = 0",
                        "cases.cpu_time_us_median = -5");
}

// Item 8. Before: every reader crashed (SIGSEGV in length_range of the missing list).
TEST_F(DamagedValues, ALengthListWithoutItsPartnerIsRefusedByEveryReader) {
  expect_every_reader_refuses("UPDATE cases SET seq_lens_q = '16' WHERE plan_index = 0",
                              "cases.seq_lens_kv = NULL: allowed: one key/value length per sequence "
                              "(a list beside seq_lens_q)");
}

// Item 8, nightly and history. Before: nightly crashed after the sweep and stored no night.
TEST_F(DamagedValues, NightlyAndHistorySkipANightWithALengthListWithoutItsPartner) {
  expect_nights_skipped("UPDATE cases SET seq_lens_q = '16' WHERE plan_index = 0", "cases.seq_lens_kv = NULL");
}

// Item 11. Before: compare and report exit 1, "cases.pass: unknown value 'sideways'", no file named.
TEST_F(DamagedValues, AValueOutsideTheSchemasCheckSetIsRefusedByEveryReader) {
  expect_every_reader_refuses("UPDATE cases SET pass = 'sideways' WHERE plan_index = 0",
                              "cases.pass = 'sideways': allowed: forward, backward, forward_backward");
}

// Item 11: the other CHECK sets and a malformed length list, in compare.
TEST_F(DamagedValues, EveryCheckSetAndTheLengthListsAreHeldToTheirDomain) {
  run_into(path("a.db"));
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"status = 'sideways'", "cases.status = 'sideways': allowed: ok, unsupported, oom, error, crashed, timeout"},
      {"dtype = 'fp8'", "cases.dtype = 'fp8': allowed: bf16, fp16, fp32"},
      {"numerics = 'maybe'", "cases.numerics = 'maybe': allowed: ok, beyond_bound, nonfinite or NULL"},
      {"validity = 'fine'", "cases.validity = 'fine': allowed: ok, suspect or NULL"},
      {"causal = 2", "cases.causal = 2: allowed: 0 or 1"},
      {"seq_lens_q = 'x,y', seq_lens_kv = '16'", "cases.seq_lens_q = 'x,y': allowed: positive integers separated "
                                                 "by commas"},
      {"seq_lens_q = '16,16', seq_lens_kv = '16,16'", "cases.seq_lens_q = '16,16': allowed: one length per sequence "
                                                      "(batch 1)"},
      {"seq_lens_kv = '16'", "cases.seq_lens_kv = '16': allowed: NULL (seq_lens_q is NULL: a uniform batch)"},
      {"power_cap_share = 1.5", "cases.power_cap_share = 1.5: allowed: a number from 0 to 1"},
      {"samples = -2", "cases.samples = -2: allowed: a whole number >= 0"},
      {"samples = 2.5", "cases.samples = 2.5 (real): allowed: a whole number"},
  };
  for (const auto& [set, message] : damages) {
    SCOPED_TRACE(set);
    fs::copy_file(path("a.db"), path("b.db"), fs::copy_options::overwrite_existing);
    damage(path("b.db"), "UPDATE cases SET " + set + " WHERE plan_index = 0");
    const Outcome compare = run_attnsweep("compare " + path("a.db") + " " + path("b.db"));
    EXPECT_EQ(compare.exit_code, 2) << compare.output;
    EXPECT_TRUE(contains(compare.output, "error: compare: " + path("b.db") + ": run 1, case 0 (")) << compare.output;
    EXPECT_TRUE(contains(compare.output, message)) << compare.output;
  }
}

// Item 11, history. Before: history failed as a whole (exit 1) where nightly skipped the night.
TEST_F(DamagedValues, NightlyAndHistorySkipANightWithAValueOutsideTheCheckSet) {
  expect_nights_skipped("UPDATE cases SET pass = 'sideways' WHERE plan_index = 0", "cases.pass = 'sideways'");
}

// A pinned baseline is checked whole before the sweep. Before: the sweep ran and
// tonight was judged against the damaged samples.
TEST_F(DamagedValues, NightlyRefusesADamagedBaselineBeforeTheSweep) {
  run_into(path("base.db"));
  damage(path("base.db"),
         "UPDATE samples SET cpu_time_us = -1 WHERE case_id = (SELECT case_id FROM cases WHERE plan_index = 1)");
  const Outcome night = run_attnsweep("nightly " + config() + " --baseline " + path("base.db") + " --db " +
                                      path("n.db") + " --threshold 99 --min-change-us 1000000 -q");
  EXPECT_EQ(night.exit_code, 2) << night.output;
  EXPECT_TRUE(contains(night.output, "error: --baseline: " + path("base.db") + ": run 1, case 1 (sdpa_math"))
      << night.output;
  EXPECT_TRUE(contains(night.output, "samples.cpu_time_us = -1: allowed: a number >= 0")) << night.output;
  EXPECT_FALSE(fs::exists(path("n.db")));
}

}  // namespace
