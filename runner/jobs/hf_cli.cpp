#include "runner/jobs/hf_cli.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"

namespace attnsweep::jobs {

double retry_pause_seconds() {
  const char* text = std::getenv("ATTNSWEEP_HF_RETRY_SECONDS");
  if (!text || !*text) return 5;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return (*end == '\0' && seconds >= 0 && seconds <= 600) ? seconds : 5;
}

std::optional<double> hf_timeout_override() {
  const char* text = std::getenv(kHfTimeoutVariable);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text, &end);
  // !(x > 0) also refuses nan.
  if (*end != '\0' || errno != 0 || !(seconds > 0) || seconds > kHfMaxTimeoutSeconds) {
    throw BadInputError(std::string(kHfTimeoutVariable) + ": '" + text + "' is not a time limit; expected seconds, "
                        "more than 0 and at most " + std::to_string(static_cast<long long>(kHfMaxTimeoutSeconds)) +
                        " (a week), e.g. 120 (or leave it unset for each hf call's own limit)");
  }
  return seconds;
}

HfCli HfCli::find() {
  auto found = find_if_present();
  if (!found) throw std::runtime_error(kHfMissing);
  return *found;
}

std::optional<HfCli> HfCli::find_if_present() {
  const auto timeout_override = hf_timeout_override();
  const auto path = find_on_path("hf");
  if (!path) return std::nullopt;
  return HfCli(*path, timeout_override);
}

ProcessResult HfCli::run(const std::vector<std::string>& command, double time_limit_seconds) const {
  return run_process(path_, std::vector<std::string>(command.begin() + 1, command.end()), -1,
                     timeout_override_.value_or(time_limit_seconds));
}

ProcessResult HfCli::run_with_retry(const std::vector<std::string>& command, double time_limit_seconds,
                                    const std::function<void(const std::string& reason, double pause_seconds)>& on_retry) const {
  ProcessResult result = run(command, time_limit_seconds);
  if (result.succeeded() || result.timed_out) return result;
  const double pause = retry_pause_seconds();
  if (on_retry) on_retry(failure_reason(result), pause);
  std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  return run(command, time_limit_seconds);
}

std::string scrub_secrets(const std::string& text) {
  std::string scrubbed = text;
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    const char* value = std::getenv(name);
    if (!value || std::string(value).size() < 4) continue;  // too short to be a token; blanking it would garble text
    const std::string secret = value;
    for (std::size_t at; (at = scrubbed.find(secret)) != std::string::npos;) scrubbed.replace(at, secret.size(), "***");
  }
  return scrubbed;
}

std::string failure_reason(const ProcessResult& result, const std::string& program) {
  if (result.timed_out) {
    const double limit = result.time_limit_seconds;
    const std::string seconds = limit == std::floor(limit) ? std::to_string(static_cast<long long>(limit))
                                                           : text::fixed(limit, 1);
    return program + " timed out after " + seconds + " s" +
           (program == "hf" ? std::string(" (") + kHfTimeoutVariable + " sets another limit)" : "");
  }
  for (const std::string* stream : {&result.errors, &result.output}) {
    std::string text = *stream;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    if (text.empty()) continue;
    const std::size_t start = text.find_last_of('\n');
    return scrub_secrets(start == std::string::npos ? text : text.substr(start + 1));
  }
  return program + " exited with code " + std::to_string(result.exit_code);
}

}  // namespace attnsweep::jobs
