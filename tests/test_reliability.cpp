// Reliability of the attnsweep binary (docs/reliability.md): bad input never
// costs a database, interruptions and kills lose at most the case in flight,
// --resume finishes a run exactly once per case, --isolate survives crashes
// and hangs, several writers share one database, and queries cannot write.
#include <gtest/gtest.h>

#include "tests/support/file_text.hpp"
#include "tests/support/spawn_attnsweep.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "runner/common/sha256.hpp"
#include "runner/storage/store.hpp"
#include "tests/support/scratch_directory.hpp"

namespace {

namespace fs = std::filesystem;

using attnsweep::testing::read_file;

// Starts attnsweep with `arguments`, stdout and stderr into `log`; returns its pid.
pid_t spawn(const std::vector<std::string>& arguments, const std::string& log, bool test_variants = false) {
  return attnsweep::testing::spawn_attnsweep(arguments, log, {"", test_variants});
}
using attnsweep::testing::wait_exit;

int run_to_end(const std::vector<std::string>& arguments, const std::string& log, bool test_variants = false) {
  return wait_exit(spawn(arguments, log, test_variants));
}

// A CPU sweep of 20 cases (15 that run), each timed for about 0.5 s.
const char* const kSlowConfig = R"(name: slow
variants: [naive, sdpa_math, sdpa_efficient, sdpa_flash]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32, 64, 128, 256], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 1000000, target_rel_stdev: 0.000001, min_gpu_seconds: 10, max_case_seconds: 0.5}
)";

const char* const kQuickConfig = R"(name: quick
variants: [naive, sdpa_math, sdpa_flash, sdpa_cudnn]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: [16, 32], head_dim: 8}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 5}
)";

class Reliability : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return scratch_.path(name); }
  std::string write(const std::string& name, const std::string& text) { return scratch_.write(name, text); }
  attnsweep::testing::ScratchDirectory scratch_{"attnsweep-rel"};
};

// Every planned case of the run is stored exactly once and the file is sound.
void expect_complete_run(const std::string& db_path, int planned) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs").getInt(), 1);
  EXPECT_EQ(db.execAndGet("SELECT status FROM runs").getString(), "done");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases").getInt(), planned);
  EXPECT_EQ(db.execAndGet("SELECT count(DISTINCT plan_index) FROM cases").getInt(), planned);
  EXPECT_EQ(db.execAndGet("SELECT min(plan_index) FROM cases").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT max(plan_index) FROM cases").getInt(), planned - 1);
  // No orphans: every sample, kernel and op row belongs to a stored case.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM samples WHERE case_id NOT IN (SELECT case_id FROM cases)").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM ops WHERE case_id NOT IN (SELECT case_id FROM cases)").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM cases c WHERE status = 'ok' AND samples != "
                          "(SELECT count(*) FROM samples s WHERE s.case_id = c.case_id)").getInt(), 0);
}

TEST_F(Reliability, SigintAndSigtermStopAtASafePointAndResumeFinishesTheRun) {
  const std::string config = write("slow.yaml", kSlowConfig), db = path("r.db");
  const pid_t first = spawn({"run", config, "--device", "cpu", "--db", db}, path("first.log"));
  // About 0.5 s per case and 20 cases: after 3.5 s some, not all, are stored, even on a loaded machine.
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  kill(first, SIGINT);
  EXPECT_EQ(wait_exit(first), 130) << read_file(path("first.log"));
  const std::string log = read_file(path("first.log"));
  EXPECT_NE(log.find("interrupted (signal 2)"), std::string::npos) << log;
  EXPECT_NE(log.find("--resume 1"), std::string::npos) << log;
  // The hint names the device too: a resume on another device is refused.
  EXPECT_NE(log.find("--db " + db + " --device cpu --resume 1"), std::string::npos) << log;
  int stored = 0;
  {
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    EXPECT_EQ(check.execAndGet("SELECT status FROM runs").getString(), "interrupted");
    stored = check.execAndGet("SELECT count(*) FROM cases").getInt();
    EXPECT_GT(stored, 0);
    EXPECT_LT(stored, 20);
  }
  const pid_t second = spawn({"run", config, "--device", "cpu", "--db", db, "--resume"}, path("second.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(second, SIGTERM);
  EXPECT_EQ(wait_exit(second), 143) << read_file(path("second.log"));
  EXPECT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db, "--resume", "1"}, path("third.log")), 0)
      << read_file(path("third.log"));
  expect_complete_run(db, 20);
}

// Waits up to 60 s for `text` in the log at `log_path`; false if it never came.
bool wait_for_log(const std::string& log_path, const std::string& text) {
  for (int tick = 0; tick < 600; ++tick) {
    if (read_file(log_path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Issue 33, item 13: SIGHUP (a dropped ssh session), SIGUSR1, SIGUSR2 and SIGALRM
// ended a run by their default action, leaving it `running` under a dead owner
// with no table and no resume hint; SIGPIPE (the reader of its output gone)
// killed it too. Each stop signal is now SIGTERM's: stored `interrupted`, the
// resume command printed, exit 128 + the signal; SIGPIPE is ignored.
TEST_F(Reliability, HangUpAndOtherTerminatingSignalsStopLikeSigtermAndSigpipeIsIgnored) {
  const std::string config = write("slow.yaml", kSlowConfig), db = path("r.db");
  int round = 0;
  for (const int signal : {SIGHUP, SIGUSR1, SIGUSR2, SIGALRM}) {
    SCOPED_TRACE(strsignal(signal));
    const std::string log_path = path("signal" + std::to_string(round) + ".log");
    std::vector<std::string> arguments = {"run", config, "--device", "cpu", "--db", db};
    if (round++ > 0) arguments.push_back("--resume");
    const pid_t pid = spawn(arguments, log_path);
    ASSERT_TRUE(wait_for_log(log_path, "/20] ")) << read_file(log_path);
    if (signal == SIGHUP) {
      kill(pid, SIGPIPE);  // ignored: the run goes on
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "SIGPIPE ended the run: " << read_file(log_path);
    }
    kill(pid, signal);
    EXPECT_EQ(wait_exit(pid), 128 + signal) << read_file(log_path);
    const std::string log = read_file(log_path);
    EXPECT_NE(log.find("interrupted (signal " + std::to_string(signal) + ")"), std::string::npos) << log;
    EXPECT_NE(log.find("--resume 1"), std::string::npos) << log;
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    EXPECT_EQ(check.execAndGet("SELECT status FROM runs").getString(), "interrupted");
  }
  EXPECT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db, "--resume", "1"}, path("last.log")), 0)
      << read_file(path("last.log"));
  expect_complete_run(db, 20);
}

const char* const kHangConfig = R"(name: hang
variants: [test_hang]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3, case_timeout_s: 60}
)";

// GNU timeout sends SIGTERM to its child and then to the child's process group:
// the same request twice. A run stopped that way could die on the second one
// without storing `interrupted` or publishing its shard (CI of stop 31).
TEST_F(Reliability, ASignalRepeatedWithinASecondIsOneRequestAndOnlyALaterOneEndsAStuckRun) {
  // Without --isolate test_hang never reaches a safe point: only insisting ends it.
  const std::string config = write("hang.yaml", kHangConfig), db = path("r.db");
  const pid_t pid = spawn({"run", config, "--device", "cpu", "--db", db}, path("run.log"), true);
  ASSERT_TRUE(wait_for_log(path("run.log"), "[1/1] test_hang")) << read_file(path("run.log"));
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGINT);  // the same request: counted once
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "ended before the user insisted: " << read_file(path("run.log"));
  kill(pid, SIGINT);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status) << ": " << read_file(path("run.log"));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

TEST_F(Reliability, ResumeRefusesAChangedConfigAnUnknownRunAndAFinishedDatabaseIsUntouched) {
  const std::string config = write("quick.yaml", kQuickConfig), db = path("r.db");
  ASSERT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db}, path("a.log")), 0);
  const std::string before = attnsweep::sha256_hex(read_file(db));
  write("quick.yaml", std::string(kQuickConfig) + "seed: 1\n");
  EXPECT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db, "--resume"}, path("b.log")), 2);
  EXPECT_NE(read_file(path("b.log")).find("was made from a different config"), std::string::npos) << read_file(path("b.log"));
  EXPECT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db, "--resume", "42"}, path("c.log")), 2);
  EXPECT_NE(read_file(path("c.log")).find("no run 42 to resume"), std::string::npos);
  EXPECT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db, "--resume", "x"}, path("d.log")), 2);
  EXPECT_EQ(attnsweep::sha256_hex(read_file(db)), before);
}

TEST_F(Reliability, SigkillAtRandomMomentsTwentyTimesThenResumeLosesNothing) {
  const std::string config = write("slow.yaml", kSlowConfig), db = path("r.db");
  const unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(100, 1500);
  std::string delays;
  for (int round = 0; round < 20; ++round) {
    bool has_run = false;
    if (fs::exists(db)) {
      SQLite::Database check(db, SQLite::OPEN_READONLY);
      has_run = check.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = 'runs'").getInt() == 1 &&
                check.execAndGet("SELECT count(*) FROM runs").getInt() == 1;
    }
    std::vector<std::string> arguments = {"run", config, "--device", "cpu", "--db", db};
    if (has_run) arguments.push_back("--resume");
    const pid_t pid = spawn(arguments, path("round.log"));
    const int delay = delay_ms(random);
    delays += std::to_string(delay) + " ";
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    kill(pid, SIGKILL);
    wait_exit(pid);
  }
  SCOPED_TRACE("seed " + std::to_string(seed) + ", kill delays (ms): " + delays);
  const bool has_run = fs::exists(db);
  std::vector<std::string> arguments = {"run", config, "--device", "cpu", "--db", db};
  if (has_run) arguments.push_back("--resume");
  ASSERT_EQ(run_to_end(arguments, path("final.log")), 0) << read_file(path("final.log"));
  expect_complete_run(db, 20);
}

TEST_F(Reliability, IsolatedWorkersTurnCrashesAndHangsIntoStatusesAndTheSweepGoesOn) {
  const std::string config = write("faults.yaml", R"(
variants: [naive, test_abort, test_hang, test_device_fault, sdpa_flash]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 5, case_timeout_s: 3}
)");
  const std::string db = path("r.db");
  ASSERT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db, "--isolate"}, path("run.log"), true), 0)
      << read_file(path("run.log"));
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  auto status_of = [&](const std::string& variant) {
    return check.execAndGet("SELECT status || ': ' || coalesce(error_message, '') FROM cases WHERE variant = '" + variant + "'").getString();
  };
  EXPECT_EQ(status_of("naive"), "ok: ");
  EXPECT_EQ(status_of("test_abort"), "crashed: worker killed by signal 6 (Aborted)");
  EXPECT_EQ(status_of("test_hang").rfind("timeout: worker ran longer than measure.case_timeout_s = 3.0 s", 0), 0u) << status_of("test_hang");
  EXPECT_EQ(status_of("test_device_fault").rfind("error: index", 0), 0u) << status_of("test_device_fault");
  EXPECT_EQ(status_of("sdpa_flash"), "ok: ");
  EXPECT_EQ(check.execAndGet("SELECT isolate FROM runs").getInt(), 1);
  EXPECT_DOUBLE_EQ(check.execAndGet("SELECT case_timeout_s FROM runs").getDouble(), 3.0);
  // The environment came from the probe worker, through its JSON line.
  EXPECT_EQ(check.execAndGet("SELECT device FROM runs").getString(), "cpu");
  EXPECT_EQ(check.execAndGet("SELECT torch_version FROM runs").getString().rfind("2.", 0), 0u);
  EXPECT_EQ(check.execAndGet("SELECT length(device_name) > 0 AND length(hostname) > 0 FROM runs").getInt(), 1);
}

TEST_F(Reliability, FourConcurrentWritersLoseNothing) {
  const std::string config = write("quick.yaml", kQuickConfig), db = path("shared.db");
  std::vector<pid_t> writers;
  for (int i = 0; i < 4; ++i) writers.push_back(spawn({"run", config, "--device", "cpu", "--db", db}, path("w" + std::to_string(i) + ".log")));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(wait_exit(writers[i]), 0) << read_file(path("w" + std::to_string(i) + ".log"));
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(check.execAndGet("SELECT count(*) FROM runs WHERE status = 'done'").getInt(), 4);
  EXPECT_EQ(check.execAndGet("SELECT count(*) FROM cases").getInt(), 4 * 8);
  EXPECT_EQ(check.execAndGet("SELECT count(*) FROM (SELECT run_id FROM cases GROUP BY run_id HAVING count(*) = 8 "
                             "AND count(DISTINCT plan_index) = 8)").getInt(), 4);
  EXPECT_EQ(check.execAndGet("SELECT count(*) FROM cases c WHERE status = 'ok' AND samples != "
                             "(SELECT count(*) FROM samples s WHERE s.case_id = c.case_id)").getInt(), 0);
}

TEST_F(Reliability, QueryOpensReadOnlySoUserSqlCannotChangeResults) {
  const std::string config = write("quick.yaml", kQuickConfig), db = path("r.db");
  ASSERT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db}, path("a.log")), 0);
  const std::string before = attnsweep::sha256_hex(read_file(db));
  EXPECT_EQ(run_to_end({"query", db, "DELETE FROM cases"}, path("delete.log")), 2);
  EXPECT_NE(read_file(path("delete.log")).find("query only reads; this statement would change the database"),
            std::string::npos)
      << read_file(path("delete.log"));
  EXPECT_EQ(run_to_end({"query", db, "DROP TABLE samples"}, path("drop.log")), 2);
  EXPECT_EQ(run_to_end({"query", db, "SELECT count(*) AS n FROM cases"}, path("count.log")), 0);
  EXPECT_NE(read_file(path("count.log")).find("n\n8\n"), std::string::npos) << read_file(path("count.log"));
  EXPECT_EQ(attnsweep::sha256_hex(read_file(db)), before);
}

// --- issue 10: hardening, round two ----------------------------------------------

// The worker's children of a process (one level), from /proc.
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> children;
  pid_t child = 0;
  while (file >> child) children.push_back(child);
  return children;
}

// Gone, or a zombie nobody has reaped yet: either way no longer running.
bool process_running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// Five cases of about 0.4 s each, for runs that must still be going a few seconds in.
const char* const kFiveCaseConfig = R"(name: five
variants: [naive, sdpa_math, sdpa_flash, naive_inplace, sdpa_auto]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, profiled_forwards: 2, min_samples: 3, max_samples: 1000000, target_rel_stdev: 0.000001, min_gpu_seconds: 10, max_case_seconds: 0.4}
)";

TEST_F(Reliability, IsolatedWorkersMeasureTheStoredConfigNotTheEditedFile) {
  const std::string config = write("edited.yaml", kFiveCaseConfig), db = path("r.db");
  const pid_t pid = spawn({"run", config, "--device", "cpu", "--db", db, "--isolate"}, path("run.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::ofstream(config, std::ios::app) << "# edited while the run goes on\nseed: 9\n";
  ASSERT_EQ(wait_exit(pid), 0) << read_file(path("run.log"));
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("SELECT status FROM runs").getString(), "done");
  EXPECT_EQ(check.execAndGet("SELECT group_concat(status) FROM cases").getString(), "ok,ok,ok,ok,ok")
      << read_file(path("run.log"));
}

TEST_F(Reliability, ShellTextInTheDeviceIsRefusedAndNeverRun) {
  const std::string config = write("quick.yaml", kQuickConfig), db = path("r.db"), marker = path("pwned");
  const std::string device = "cpu' ; touch " + marker + " ; echo '";
  EXPECT_EQ(run_to_end({"run", config, "--db", db, "--isolate", "--device", device}, path("a.log")), 2);
  EXPECT_NE(read_file(path("a.log")).find("unknown device"), std::string::npos) << read_file(path("a.log"));
  EXPECT_EQ(run_to_end({"run", config, "--db", db, "--isolate", "--device", "it's"}, path("b.log")), 2);
  EXPECT_NE(read_file(path("b.log")).find("unknown device 'it's'; allowed: auto, cpu, cuda, cuda:N"),
            std::string::npos) << read_file(path("b.log"));
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(fs::exists(db));
}

TEST_F(Reliability, KillingAnIsolatedParentKillsItsWorker) {
  const std::string config = write("hang.yaml", R"(
variants: [test_hang]
dtypes: [fp32]
shapes: {batch: 1, heads: 2, seq_len: 16, head_dim: 8}
measure: {warmup: 1, case_timeout_s: 120}
)");
  const pid_t parent = spawn({"run", config, "--device", "cpu", "--db", path("r.db"), "--isolate"}, path("run.log"), true);
  // The case's worker, not the short-lived device probe that comes first.
  auto is_case_worker = [](pid_t pid) {
    std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline");
    const std::string command((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    return command.find("--plan-index") != std::string::npos;
  };
  std::vector<pid_t> workers;
  for (int i = 0; i < 100 && workers.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const pid_t child : children_of(parent)) {
      if (is_case_worker(child)) workers.push_back(child);
    }
  }
  ASSERT_EQ(workers.size(), 1u) << read_file(path("run.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(process_running(workers[0]));
  kill(parent, SIGKILL);
  wait_exit(parent);
  bool stopped = false;
  for (int i = 0; i < 50 && !stopped; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stopped = !process_running(workers[0]);
  }
  EXPECT_TRUE(stopped) << "worker " << workers[0] << " runs on after its parent was killed";
  if (!stopped) kill(workers[0], SIGKILL);
}

TEST_F(Reliability, DeletingTheDatabaseMidRunStopsWithExitOneAndSaysSo) {
  const std::string config = write("five.yaml", kFiveCaseConfig), db = path("r.db");
  const pid_t pid = spawn({"run", config, "--device", "cpu", "--db", db}, path("run.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(fs::exists(db));
  fs::remove(db);
  EXPECT_EQ(wait_exit(pid), 1) << read_file(path("run.log"));
  const std::string log = read_file(path("run.log"));
  EXPECT_NE(log.find("error: " + db + ": the database file was deleted or replaced during the run"),
            std::string::npos) << log;
  EXPECT_EQ(log.find("run 1 stored in"), std::string::npos) << log;
}

TEST_F(Reliability, QueryRunsOneReadingStatementOnly) {
  const std::string config = write("quick.yaml", kQuickConfig), db = path("r.db");
  ASSERT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db}, path("a.log")), 0);
  const std::string before = attnsweep::sha256_hex(read_file(db));
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"VACUUM INTO '" + path("copy.db") + "'", "query only reads"},
      {"SELECT 1; DELETE FROM cases", "one statement at a time; this follows the first: 'DELETE FROM cases'"},
      {"", "no SQL statement given"},
      {"  ;  ", "no SQL statement given"},
      {"PRAGMA journal_mode=DELETE", "PRAGMA journal_mode with a value changes the connection or the database"},
      {"ATTACH '" + path("other.db") + "' AS other", "ATTACH and DETACH are refused"},
  };
  for (const auto& [sql, message] : refused) {
    EXPECT_EQ(run_to_end({"query", db, sql}, path("q.log")), 2) << sql;
    const std::string log = read_file(path("q.log"));
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << sql << ": " << log;
    EXPECT_NE(log.find(message), std::string::npos) << sql << ": " << log;
  }
  EXPECT_FALSE(fs::exists(path("copy.db")));
  EXPECT_FALSE(fs::exists(path("other.db")));
  EXPECT_EQ(attnsweep::sha256_hex(read_file(db)), before);
  EXPECT_EQ(run_to_end({"query", db, "PRAGMA table_info(runs)"}, path("p.log")), 0) << read_file(path("p.log"));
  EXPECT_EQ(run_to_end({"query", db, "SELECT count(*) AS n FROM cases; -- a comment"}, path("c.log")), 0);
  EXPECT_EQ(read_file(path("c.log")), "n\n8\n");
  // A long result streams: every row arrives, in order.
  EXPECT_EQ(run_to_end({"query", db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200000) "
                                     "SELECT x FROM c", "--format", "csv"}, path("long.log")), 0);
  const std::string rows = read_file(path("long.log"));
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 200001);
  EXPECT_EQ(rows.substr(rows.size() - 7), "200000\n");
}

TEST_F(Reliability, QueryReadsAWalDatabaseOnAReadOnlyMount) {
  const std::string config = write("quick.yaml", kQuickConfig), db = path("r.db");
  ASSERT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db}, path("a.log")), 0);
  ASSERT_FALSE(fs::exists(db + "-wal"));
  const std::string folder = fs::path(db).parent_path().string();
  // The folder read-only in a mount namespace of its own (root only; skipped elsewhere).
  const std::string read_only = "mount --bind " + folder + " " + folder + " && mount -o remount,ro,bind " + folder;
  if (std::system(("unshare -m sh -c '" + read_only + "' > /dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a folder read-only here";
  }
  const std::string command = "unshare -m sh -c '" + read_only + " && " + ATTNSWEEP_BINARY + " query " + db +
                              " \"SELECT count(*) AS n FROM cases\"' > " + path("ro.log") + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << read_file(path("ro.log"));
  EXPECT_EQ(read_file(path("ro.log")), "n\n8\n");
}

TEST_F(Reliability, ARefusedDatabaseLeavesNoTraceFolderBehind) {
  const std::string config = write("quick.yaml", kQuickConfig), db = path("foreign.db");
  {
    SQLite::Database foreign(db, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    foreign.exec("CREATE TABLE notes(t)");
  }
  EXPECT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", db, "--traces", path("traces")}, path("a.log")), 2);
  EXPECT_FALSE(fs::exists(path("traces"))) << read_file(path("a.log"));
}

TEST_F(Reliability, ACpuRunPrintsNoKinetoDeviceNoise) {
  const std::string config = write("quick.yaml", kQuickConfig);
  ASSERT_EQ(run_to_end({"run", config, "--device", "cpu", "--db", path("r.db")}, path("a.log")), 0);
  EXPECT_EQ(read_file(path("a.log")).find("gpuGetDeviceCount"), std::string::npos) << read_file(path("a.log"));
}

// --- bad input corpus -------------------------------------------------------

class BadInput : public Reliability {
 protected:
  // A database with one finished run, which no bad input may change.
  void make_database() {
    db_ = path("existing.db");
    ASSERT_EQ(run_to_end({"run", write("quick.yaml", kQuickConfig), "--device", "cpu", "--db", db_}, path("setup.log")), 0);
    hash_ = attnsweep::sha256_hex(read_file(db_));
  }
  void expect_rejected(const std::vector<std::string>& arguments, const std::string& fragment) {
    const std::string log = path("bad.log");
    const int code = run_to_end(arguments, log);
    const std::string output = read_file(log);
    EXPECT_EQ(code, 2) << output;
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << "one line: " << output;
    EXPECT_EQ(output.rfind("error: ", 0), 0u) << output;
    EXPECT_NE(output.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << output;
    EXPECT_EQ(attnsweep::sha256_hex(read_file(db_)), hash_) << "the database changed";
  }
  std::string db_, hash_;
};

TEST_F(BadInput, EveryMalformedConfigInTheCorpusIsOneClearLineAndExitTwo) {
  make_database();
  int files = 0;
  for (const auto& entry : fs::directory_iterator(ATTNSWEEP_SOURCE_DIR "/tests/bad_inputs")) {
    std::ifstream file(entry.path());
    std::string first_line;
    std::getline(file, first_line);
    ASSERT_EQ(first_line.rfind("# expect: ", 0), 0u) << entry.path();
    SCOPED_TRACE(entry.path().filename().string());
    expect_rejected({"run", entry.path().string(), "--device", "cpu", "--db", db_}, first_line.substr(10));
    ++files;
  }
  EXPECT_GE(files, 35);
}

TEST_F(BadInput, MalformedCommandLinesAndDatabasesAreOneClearLineAndExitTwo) {
  make_database();
  const std::string good = write("good.yaml", kQuickConfig);
  fs::create_directories(path("a-directory"));
  expect_rejected({"run", path("absent.yaml"), "--db", db_}, "absent.yaml: config file not found");
  expect_rejected({"run", path("a-directory"), "--db", db_}, "is a directory");
  expect_rejected({"run", good, "--device", "tpu", "--db", db_}, "unknown device 'tpu'");
  expect_rejected({"run", good, "--device", "cuda:7", "--db", db_}, "cuda:7");
  expect_rejected({"run", good, "--device", "cpu", "--db", db_, "--resume", "abc"}, "--resume takes a run id or 'latest'");
  expect_rejected({"run", good, "--device", "cpu", "--db", db_, "--resume", "99"}, "no run 99 to resume");
  expect_rejected({"run", good, "--device", "cpu", "--db", "/nonexistent/folder/r.db"}, "cannot use as a results database");
  expect_rejected({"run", good, "--device", "cpu", "--db", path("a-directory")}, "cannot use as a results database");
  const std::string text = write("notes.txt", "plain text notes, not a database, long enough for a SQLite header.....");
  expect_rejected({"run", good, "--device", "cpu", "--db", text}, "cannot use as a results database");
  EXPECT_EQ(read_file(text), "plain text notes, not a database, long enough for a SQLite header.....");
  {
    SQLite::Database newer(path("newer.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    newer.exec("PRAGMA application_id = 1635021934; PRAGMA user_version = " +
               std::to_string(attnsweep::storage::kSchemaVersion + 1));
  }
  expect_rejected({"run", good, "--device", "cpu", "--db", path("newer.db")},
                  "schema version " + std::to_string(attnsweep::storage::kSchemaVersion + 1) + " is newer");
  expect_rejected({"run", good, "--device", "cpu", "--db", db_, "--traces", "/proc/attnsweep-traces"}, "cannot create the trace directory");
  expect_rejected({"plan", good, "--device", "gpu"}, "unknown device 'gpu'");
  expect_rejected({"query", path("absent.db"), "SELECT 1"}, "database not found");
  expect_rejected({"query", db_, "SELEC 1"}, "query failed");
  expect_rejected({"variants", "--device", "cuda:x"}, "unknown device 'cuda:x'");
  expect_rejected({"run", "/dev/zero", "--db", db_}, "/dev/zero: is a character device, not a regular file");
  expect_rejected({"plan", "/dev/zero"}, "/dev/zero: is a character device, not a regular file");
  ASSERT_EQ(mkfifo(path("fifo.yaml").c_str(), 0644), 0);
  expect_rejected({"run", path("fifo.yaml"), "--db", db_}, "fifo.yaml: is a pipe (FIFO), not a regular file");
  expect_rejected({"plan", path("fifo.yaml")}, "fifo.yaml: is a pipe (FIFO), not a regular file");
  fs::create_symlink("loop-b.yaml", path("loop-a.yaml"));
  fs::create_symlink("loop-a.yaml", path("loop-b.yaml"));
  expect_rejected({"run", path("loop-a.yaml"), "--db", db_}, "loop-a.yaml: too many levels of symbolic links");
  expect_rejected({"run", path(std::string(300, 'x') + ".yaml"), "--db", db_}, ".yaml: file name too long");
  expect_rejected({"plan", ATTNSWEEP_SOURCE_DIR "/tests/bad_inputs/45-does-not-fit-names-the-shape.yaml", "--device", "cpu"},
                  "45-does-not-fit-names-the-shape.yaml:6:5: shapes: case naive 16777216x16777216x16x8 fp32 causal needs");
  expect_rejected({"run", good, "--db", db_, "--bogus"}, "error: run: unknown option --bogus; see attnsweep run --help");
  expect_rejected({"run"}, "error: run: missing the config argument; see attnsweep run --help");
  expect_rejected({"frobnicate"}, "error: unknown command 'frobnicate'; commands: run, plan, query, merge, compare, report, launch, collect, env, nightly, history, accept, variants");
  expect_rejected({"--log-level", "loud", "variants"},
                  "error: --log-level: unknown value 'loud'; allowed: trace, debug, info, warn, error, off; see attnsweep --help");
  expect_rejected({"query", db_, "SELECT 1", "--format", "xml"},
                  "error: query: --format: unknown value 'xml'; allowed: table, csv, json, markdown; see attnsweep query --help");
  // --resume never creates the database it was asked to continue.
  expect_rejected({"run", good, "--db", path("absent.db"), "--resume"}, "absent.db: database not found");
  EXPECT_FALSE(fs::exists(path("absent.db")));
}

}  // namespace
