#include "runner/jobs/hf_cli.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/report/escaping.hpp"

namespace attnsweep::jobs {

namespace {

// A setting of whole seconds from `least` to `most`, in plain decimal digits (no
// sign, fraction, exponent, hex or blank: strtod took "1e-9", "0x2" and "+5");
// nullopt when unset or empty. Anything else throws BadInputError naming the
// variable and what it allows: "ATTNSWEEP_HF_RETRY_SECONDS: 'abc' is not a pause; ...".
std::optional<long> whole_seconds_setting(const char* variable, long least, long most, const std::string& what,
                                          const std::string& range_note, const std::string& unset) {
  const char* value = std::getenv(variable);
  if (!value || !*value) return std::nullopt;
  const std::string text = value;
  const bool digits = text.size() <= 7 && text.find_first_not_of("0123456789") == std::string::npos;
  const long seconds = digits ? std::stol(text) : -1;
  if (!digits || seconds < least || seconds > most) {
    throw BadInputError(std::string(variable) + ": '" + report::terminal_safe(text) + "' is not " + what +
                        "; expected a whole number of seconds from " + std::to_string(least) + " to " +
                        std::to_string(most) + range_note + " (or leave it unset for " + unset + ")");
  }
  return seconds;
}

}  // namespace

double retry_pause_seconds() {
  const auto seconds = whole_seconds_setting(kHfRetryVariable, 0, kHfMaxRetrySeconds, "a pause", ", e.g. 30",
                                             "5 s");
  return static_cast<double>(seconds.value_or(5));
}

std::optional<double> hf_timeout_override() {
  const auto seconds = whole_seconds_setting(kHfTimeoutVariable, 1, static_cast<long>(kHfMaxTimeoutSeconds),
                                             "a time limit", " (a week), e.g. 120", "each hf call's own limit");
  if (!seconds) return std::nullopt;
  return static_cast<double>(*seconds);
}

HfCli HfCli::find() {
  auto found = find_if_present();
  if (!found) throw std::runtime_error(kHfMissing);
  return *found;
}

std::optional<HfCli> HfCli::find_if_present() {
  const auto timeout_override = hf_timeout_override();
  retry_pause_seconds();  // refused now, before hf runs, not at the first retry
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
