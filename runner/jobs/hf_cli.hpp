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
// at times): ATTNSWEEP_HF_RETRY_SECONDS, default 5.
double retry_pause_seconds();

class HfCli {
 public:
  // hf on PATH; throws std::runtime_error(kHfMissing) when there is none.
  static HfCli find();
  static std::optional<HfCli> find_if_present();

  // Runs `command` (whose first word, "hf", names this executable).
  ProcessResult run(const std::vector<std::string>& command) const;
  // Runs it, and once more after retry_pause_seconds() when it fails; `on_retry`
  // (when set) hears why the first attempt failed.
  ProcessResult run_with_retry(const std::vector<std::string>& command,
                               const std::function<void(const std::string& reason, double pause_seconds)>& on_retry = {}) const;

 private:
  explicit HfCli(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// `text` with the values of HF_TOKEN and HUGGING_FACE_HUB_TOKEN (when set)
// replaced by "***".
std::string scrub_secrets(const std::string& text);

// Why hf failed, in one line: the last line it wrote to stderr (else stdout),
// scrubbed, or its exit code.
std::string failure_reason(const ProcessResult& result);

}  // namespace attnsweep::jobs
