#include "runner/common/same_file.hpp"

#include <filesystem>
#include <system_error>

namespace attnsweep {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error)) {
    const bool same = fs::equivalent(a, b, error);
    return !error && same;
  }
  const fs::path first = fs::weakly_canonical(fs::absolute(a, error), error);
  if (error) return a == b;
  const fs::path second = fs::weakly_canonical(fs::absolute(b, error), error);
  if (error) return a == b;
  return first == second;
}

}  // namespace attnsweep
