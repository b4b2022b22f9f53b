#pragma once
// A whole file as one string, for tests that compare a file's bytes before and
// after, hash it, or look for text in a log, a report or a doc.
#include <fstream>
#include <sstream>
#include <string>

namespace attnsweep::testing {

// The file's bytes as they are ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace attnsweep::testing
