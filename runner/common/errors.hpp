#pragma once
// Exit codes and the error types that map to them, in one place.
#include <stdexcept>
#include <string>

namespace attnsweep {

enum ExitCode : int {
  kExitOk = 0,              // the sweep finished (some cases may be unsupported)
  kExitRuntimeFailure = 1,  // something failed while running (not the user's input)
  kExitBadInput = 2,        // bad command line, config or database: nothing ran
  kExitIncomplete = 3,      // merge: merged, but shards or cases are still missing
  kExitInconclusive = 4,    // compare, nightly: no regression found, but cases could not be judged
};

// The user's input is wrong; the message says what, where and what is allowed.
class BadInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where in a source file something was found; 1-based, 0 when unknown.
struct SourceLocation {
  int line = 0;
  int column = 0;
};

// A config file error: file:line:column: key: message.
class ConfigError : public BadInputError {
 public:
  ConfigError(const std::string& file, SourceLocation where, const std::string& key,
              const std::string& message)
      : BadInputError(format(file, where, key, message)), file_(file), where_(where), key_(key), message_(message) {}

  const std::string& file() const { return file_; }
  SourceLocation where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  static std::string format(const std::string& file, SourceLocation where, const std::string& key,
                            const std::string& message) {
    std::string text = file;
    if (where.line > 0) text += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
    text += ": ";
    if (!key.empty()) text += key + ": ";
    return text + message;
  }

  std::string file_;
  SourceLocation where_;
  std::string key_;
  std::string message_;
};

}  // namespace attnsweep
