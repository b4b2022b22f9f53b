#include "runner/execute/op_library_check.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/execute/worker.hpp"
#include "runner/variants/op_library.hpp"

namespace attnsweep::execute {
namespace {

constexpr double kDefaultLoadSeconds = 120;
const std::string kLoading = std::string(kWorkerAnswer) + "loading ";  // + the file's index
const std::string kLoaded = std::string(kWorkerAnswer) + "loaded";

// One shared object to load, and the variant it is for (the first that names it).
struct LibraryFile {
  std::string variant;
  std::string file;
};

// What the check process did: its output, how it ended, and how far it got.
struct CheckRun {
  std::string output;   // its stdout and stderr, answers included
  int status = 0;       // from waitpid
  bool timed_out = false;
  int loading = -1;     // the index of the last file it started to load
  bool loaded = false;  // it said every dlopen returned
};

CheckRun run_check_process(const std::vector<LibraryFile>& files, double limit_seconds) {
  std::vector<std::string> arguments = {"--log-level", "warn", "worker", "--device", "cpu"};
  for (const auto& file : files) {
    arguments.push_back("--load-op-library");
    arguments.push_back(file.file);
  }
  int output[2];
  if (pipe2(output, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("cannot start the op library check: ") + std::strerror(errno));
  }
  pid_t pid = -1;
  try {
    pid = start_worker_process(arguments, {-1, output[1], output[1]});
  } catch (...) {
    ::close(output[0]);
    ::close(output[1]);
    throw;
  }
  ::close(output[1]);
  CheckRun run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_seconds);
  bool exited = false, open = true;
  // Until it ends or runs out of time: its output alone does not say (an
  // initializer may close its stdout and hang, or leave a child holding it).
  for (;;) {
    if (waitpid(pid, &run.status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      run.timed_out = true;
      break;
    }
    const int wait_ms = static_cast<int>(std::min(left * 1000, 100.0)) + 1;
    pollfd fd{output[0], POLLIN, 0};
    const int ready = ::poll(&fd, open ? 1 : 0, wait_ms);
    if (ready <= 0 || !open) continue;
    char buffer[4096];
    const ssize_t got = ::read(output[0], buffer, sizeof buffer);
    if (got > 0) {
      run.output.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      open = false;
    }
  }
  if (exited) {
    // What it wrote last; without waiting for anything it left running.
    ::fcntl(output[0], F_SETFL, O_NONBLOCK);
    char buffer[4096];
    for (ssize_t got; open && (got = ::read(output[0], buffer, sizeof buffer)) > 0;) {
      run.output.append(buffer, static_cast<std::size_t>(got));
    }
  } else {
    ::kill(-pid, SIGKILL);
    while (waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(output[0]);
  // Anywhere in a line: a library's own output without a newline may come first.
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    if (const auto at = line.find(kLoading); at != std::string::npos) {
      run.loading = std::atoi(line.c_str() + at + kLoading.size());
    }
    if (line.size() >= kLoaded.size() && line.compare(line.size() - kLoaded.size(), kLoaded.size(), kLoaded) == 0) {
      run.loaded = true;
    }
  }
  return run;
}

// The library's own last words before it ended the check, if any: a hint of why.
std::string last_output_line(const std::string& output) {
  std::istringstream lines(output);
  std::string last;
  for (std::string line; std::getline(lines, line);) {
    line = line.substr(0, line.find(kWorkerAnswer));
    if (!line.empty()) last = line;
  }
  if (last.size() > 200) last = last.substr(0, 200) + "...";
  return last.empty() ? "" : " (its last output: " + last + ")";
}

}  // namespace

double op_library_load_seconds() {
  const char* text = std::getenv("ATTNSWEEP_OP_LIBRARY_LOAD_SECONDS");
  if (!text || !*text) return kDefaultLoadSeconds;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds > 0) || seconds > 1e6) {
    throw BadInputError(std::string("ATTNSWEEP_OP_LIBRARY_LOAD_SECONDS=") + text +
                        ": expected a number of seconds above 0 (the time limit for loading the op libraries)");
  }
  return seconds;
}

void check_op_libraries_load(const std::map<std::string, OpLibrarySpec>& specs) {
  std::vector<LibraryFile> files;
  for (const auto& [name, spec] : specs) {
    for (const auto& file : op_library_files(spec)) {  // a missing file is refused here, as before
      const bool listed = std::any_of(files.begin(), files.end(), [&](const LibraryFile& f) { return f.file == file; });
      if (!listed) files.push_back({name, file});
    }
  }
  if (files.empty()) return;
  const double limit = op_library_load_seconds();
  const CheckRun run = run_check_process(files, limit);
  if (run.loaded && !run.timed_out) return;
  if (run.loading < 0 || run.loading >= static_cast<int>(files.size())) {
    throw std::runtime_error("the op library check process (attnsweep worker) ended before loading anything (" +
                             (run.timed_out ? "it ran past " + text::fixed(limit, 0) + " s" : describe_worker_exit(run.status)) +
                             "): " + run.output);
  }
  const LibraryFile& culprit = files[static_cast<std::size_t>(run.loading)];
  std::string what;
  if (run.timed_out) {
    what = "did not return within " + text::fixed(limit, 0) + " s (ATTNSWEEP_OP_LIBRARY_LOAD_SECONDS): its initializer "
           "hangs, or is that slow; fix the library, or raise the limit if it only loads slowly";
  } else if (WIFSIGNALED(run.status)) {
    const int signal = WTERMSIG(run.status);
    what = "killed the process with signal " + std::to_string(signal) + " (" + strsignal(signal) + "): its "
           "initializer crashes; rebuild the library (for this torch and CUDA) or remove the variant";
  } else {
    what = "ended the process with exit status " + std::to_string(WEXITSTATUS(run.status)) + " before it returned: "
           "its initializer calls exit(); attnsweep cannot run it in-process, fix the library or remove the variant";
  }
  throw BadInputError("op library variant '" + culprit.variant + "': loading " + culprit.file + " " + what +
                      last_output_line(run.output) + "; nothing ran (checked in a separate process first, "
                      "docs/op-libraries.md)");
}

void load_op_library_files(const std::vector<std::string>& files) {
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::cout << kLoading << i << std::endl;
    // RTLD_NOW | RTLD_GLOBAL, in the sweep's order: what the sweep's own load does.
    // A refusal is not this check's business: the sweep's load names its reason.
    if (!dlopen(files[i].c_str(), RTLD_NOW | RTLD_GLOBAL)) (void)dlerror();
  }
  std::cout << kLoaded << std::endl;
}

}  // namespace attnsweep::execute
