#pragma once
// The typed reads every part of a config is made of (a string, an integer in a
// range, a list of known names, a mapping of known keys), each refusing with
// file:line:column, the key and what is allowed (ConfigError). The readers of
// the config's parts (shapes, masks, op libraries, exclude rules, measure
// settings) are built on it, so every message has one shape.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"

namespace attnsweep {

SourceLocation location(const YAML::Mark& mark);
bool contains(const std::vector<std::string>& names, const std::string& name);

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& message) const;
  void require(const YAML::Node& map, const std::string& key, const std::string& allowed) const;
  // Unknown keys are errors, with the nearest valid key suggested.
  void check_keys(const YAML::Node& map, const std::string& prefix, const std::vector<std::string>& allowed) const;
  std::string scalar_string(const YAML::Node& node, const std::string& key) const;
  std::int64_t integer(const YAML::Node& node, const std::string& key, std::int64_t minimum,
                       std::int64_t maximum) const;
  // A number above `minimum` (or at least `minimum` when inclusive).
  double number(const YAML::Node& node, const std::string& key, double minimum, bool inclusive = false) const;
  bool boolean(const YAML::Node& node, const std::string& key) const;
  static std::string kind(const YAML::Node& node);
  // A scalar or a non-empty list of scalars.
  std::vector<YAML::Node> items(const YAML::Node& node, const std::string& key) const;
  // Names from `allowed`, each once, in the order written.
  std::vector<std::string> names(const YAML::Node& node, const std::string& key,
                                 const std::vector<std::string>& allowed) const;
  // page_size 0 is a contiguous cache, so a list or a rule can name it; every other size is at least 1.
  static std::int64_t smallest_size(const std::string& axis) { return axis == "page_size" ? 0 : 1; }
  // Sizes of an axis (at most config_keys::kMaxDimension), each once.
  std::vector<std::int64_t> sizes(const YAML::Node& node, const std::string& key, std::int64_t minimum = 1) const;

 protected:
  std::string source_;

 private:
  static std::string belongs_elsewhere(const std::string& key, const std::string& prefix);
};

}  // namespace attnsweep
