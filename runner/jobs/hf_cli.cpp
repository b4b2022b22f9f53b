#include "runner/jobs/hf_cli.hpp"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace attnsweep::jobs {

double retry_pause_seconds() {
  const char* text = std::getenv("ATTNSWEEP_HF_RETRY_SECONDS");
  if (!text || !*text) return 5;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return (*end == '\0' && seconds >= 0 && seconds <= 600) ? seconds : 5;
}

HfCli HfCli::find() {
  auto found = find_if_present();
  if (!found) throw std::runtime_error(kHfMissing);
  return *found;
}

std::optional<HfCli> HfCli::find_if_present() {
  const auto path = find_on_path("hf");
  if (!path) return std::nullopt;
  return HfCli(*path);
}

ProcessResult HfCli::run(const std::vector<std::string>& command) const {
  return run_process(path_, std::vector<std::string>(command.begin() + 1, command.end()));
}

ProcessResult HfCli::run_with_retry(const std::vector<std::string>& command,
                                    const std::function<void(const std::string& reason, double pause_seconds)>& on_retry) const {
  ProcessResult result = run(command);
  if (result.succeeded()) return result;
  const double pause = retry_pause_seconds();
  if (on_retry) on_retry(failure_reason(result), pause);
  std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  return run(command);
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

std::string failure_reason(const ProcessResult& result) {
  for (const std::string* stream : {&result.errors, &result.output}) {
    std::string text = *stream;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    if (text.empty()) continue;
    const std::size_t start = text.find_last_of('\n');
    return scrub_secrets(start == std::string::npos ? text : text.substr(start + 1));
  }
  return "hf exited with code " + std::to_string(result.exit_code);
}

}  // namespace attnsweep::jobs
