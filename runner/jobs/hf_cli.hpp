#pragma once
// The `hf` command line of huggingface_hub, found on PATH and run with an
// argument vector (never a shell). Its environment is ours, so hf finds the
// user's token itself (HF_TOKEN or `hf auth login`); attnsweep never reads,
// prints or stores the token, and blanks its value in anything of hf's it
// repeats.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/jobs/process.hpp"

namespace attnsweep::jobs {

inline constexpr const char* kHfMissing =
    "hf not found on PATH; install huggingface_hub>=1.24 (pip install -U huggingface_hub)";

// The pause before a failed submission is tried again (the service answers 5xx
// at times): ATTNSWEEP_HF_RETRY_SECONDS, whole seconds from 0 to 600, default 5;
// anything else throws BadInputError (find and find_if_present read it first).
inline constexpr const char* kHfRetryVariable = "ATTNSWEEP_HF_RETRY_SECONDS";
inline constexpr long kHfMaxRetrySeconds = 600;
double retry_pause_seconds();

// How long each kind of hf call may run before it is stopped (run_process: SIGTERM
// to its process group, SIGKILL 3 s later) and reported as "hf timed out after
// N s". ATTNSWEEP_HF_TIMEOUT_SECONDS, when set, is the limit of every call.
inline constexpr double kHfListSeconds = 20;     // hf jobs hardware
inline constexpr double kHfSubmitSeconds = 120;  // hf jobs run -d, hf jobs scheduled run
inline constexpr double kHfInspectSeconds = 60;  // hf jobs inspect
inline constexpr double kHfUploadSeconds = 600;  // hf buckets cp (the config, the source archive)
inline constexpr double kHfSyncSeconds = 3600;   // hf buckets sync (collect; with --keep every trace too)
// hf jobs wait follows jobs to their end: the jobs' own --timeout plus this
// (their start, and time spent waiting for a GPU in SCHEDULING).
inline constexpr double kHfWaitMarginSeconds = 3600;
inline constexpr const char* kHfTimeoutVariable = "ATTNSWEEP_HF_TIMEOUT_SECONDS";
// The most ATTNSWEEP_HF_TIMEOUT_SECONDS may be: a week.
inline constexpr double kHfMaxTimeoutSeconds = 7 * 24 * 3600;

// ATTNSWEEP_HF_TIMEOUT_SECONDS: none when unset or empty; throws BadInputError
// for anything but whole seconds from 1 to kHfMaxTimeoutSeconds, in plain digits.
std::optional<double> hf_timeout_override();

class HfCli {
 public:
  // hf on PATH; throws std::runtime_error(kHfMissing) when there is none. Both
  // read ATTNSWEEP_HF_TIMEOUT_SECONDS and ATTNSWEEP_HF_RETRY_SECONDS first
  // (hf_timeout_override, retry_pause_seconds: BadInputError).
  static HfCli find();
  static std::optional<HfCli> find_if_present();

  // Runs `command` (whose first word, "hf", names this executable), stopped after
  // `time_limit_seconds` (one of the kHf*Seconds), or ATTNSWEEP_HF_TIMEOUT_SECONDS when set.
  ProcessResult run(const std::vector<std::string>& command, double time_limit_seconds) const;
  // Runs it, and once more after retry_pause_seconds() when it fails; `on_retry`
  // (when set) hears why the first attempt failed. A call that ran out of time
  // is not tried again: it used its time, and a submission may have reached
  // the service.
  ProcessResult run_with_retry(const std::vector<std::string>& command, double time_limit_seconds,
                               const std::function<void(const std::string& reason, double pause_seconds)>& on_retry = {}) const;

 private:
  HfCli(std::string path, std::optional<double> timeout_override)
      : path_(std::move(path)), timeout_override_(timeout_override) {}
  std::string path_;
  std::optional<double> timeout_override_;
};

// `text` with the values of HF_TOKEN and HUGGING_FACE_HUB_TOKEN (when set)
// replaced by "***".
std::string scrub_secrets(const std::string& text);

// Why hf failed, in one line: "hf timed out after 20 s (...)" when it ran out of
// time, else the last line it wrote to stderr (else stdout), scrubbed, or its
// exit code. `program` names it ("git" for git's).
std::string failure_reason(const ProcessResult& result, const std::string& program = "hf");

}  // namespace attnsweep::jobs
