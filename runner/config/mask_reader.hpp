#pragma once
// The masks a config sweeps: `causal` (true, false, top_left, bottom_right)
// crossed with `window` ({left: N, right: M}, none, or a list), and the window
// items an exclude rule matches on, read the same way.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/mask.hpp"
#include "runner/config/yaml_reader.hpp"

namespace attnsweep {

class WindowReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  // A `window` value, the top-level key's or an exclude rule's: the node, or each
  // item of its list (an empty list is refused).
  std::vector<YAML::Node> window_items(const YAML::Node& node, const std::string& key) const;

  // One window item: none (nullopt), or {left: N, right: M} with either side left
  // out; anything else fails with `expected` (what the caller accepts).
  struct WindowBounds {
    std::optional<std::int64_t> left, right;
  };
  std::optional<WindowBounds> window_item(const YAML::Node& item, const std::string& key,
                                          const std::string& expected) const;
};

// causal: true|false|top_left|bottom_right, or a list of them (true is PyTorch's
// is_causal, aligned to the top left); each once, in the order written.
std::vector<CausalAlignment> read_causal_alignments(const std::string& source, const YAML::Node& node,
                                                    const std::string& key);
// Every alignment crossed with every window of `node` (the top-level `window`,
// which may be absent: no window), each mask once.
std::vector<Mask> read_masks(const std::string& source, const std::vector<CausalAlignment>& alignments,
                             const YAML::Node& node);

}  // namespace attnsweep
