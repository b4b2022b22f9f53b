#include "runner/config/mask_reader.hpp"

#include <algorithm>

#include "runner/config/config_keys.hpp"

namespace attnsweep {

using namespace config_keys;

std::vector<YAML::Node> WindowReader::window_items(const YAML::Node& node, const std::string& key) const {
  std::vector<YAML::Node> listed;
  if (!node.IsSequence()) return {node};
  for (const auto& item : node) listed.push_back(item);
  if (listed.empty()) fail(node, key, "the list is empty; give at least one window or none");
  return listed;
}

std::optional<WindowReader::WindowBounds> WindowReader::window_item(const YAML::Node& item, const std::string& key,
                                                                  const std::string& expected) const {
  if (item.IsScalar() && item.Scalar() == "none") return std::nullopt;
  if (!item.IsMap() || item.size() == 0) {
    fail(item, key, expected + ", got " + (item.IsMap() ? std::string("an empty mapping") : "a " + kind(item)));
  }
  check_keys(item, key, kWindowKeys);
  WindowBounds bounds;
  for (const char* side : {"left", "right"}) {
    if (!item[side]) continue;
    if (item[side].IsNull()) {
      fail(item[side], key + "." + side,
           "is empty; give a number of keys, or leave " + std::string(side) + " out for no bound on that side");
    }
    (std::string(side) == "left" ? bounds.left : bounds.right) =
        integer(item[side], key + "." + side, 0, kMaxDimension);
  }
  return bounds;
}

namespace {

class MaskReader : public WindowReader {
 public:
  using WindowReader::WindowReader;

  // causal: true|false|top_left|bottom_right, or a list of them (true is PyTorch's
  // is_causal, aligned to the top left).
  std::vector<CausalAlignment> causal_alignments(const YAML::Node& node, const std::string& key) const {
    std::vector<CausalAlignment> out;
    for (const auto& item : items(node, key)) {
      const std::string& raw = item.Scalar();
      std::optional<CausalAlignment> value;
      if (raw == "true" || raw == "True") value = CausalAlignment::top_left;
      if (raw == "false" || raw == "False") value = CausalAlignment::none;
      if (raw == "top_left" || raw == "bottom_right") value = parse_causal_alignment(raw);
      if (!value) fail(item, key, std::string("unknown value '") + raw + "'; allowed: " + kCausalValues);
      if (std::find(out.begin(), out.end(), *value) == out.end()) out.push_back(*value);
    }
    return out;
  }

  // window: {left: N, right: M} (either may be left out: no bound on that side), or
  // none, or a list of those; crossed with every causal alignment. Under a causal
  // mask the right bound is 0 (a later key is masked anyway).
  std::vector<Mask> masks(const std::vector<CausalAlignment>& alignments, const YAML::Node& node) const {
    struct Window {
      std::optional<std::int64_t> left, right;
      YAML::Node where;
      std::string key;  // "window" or "window[i]", for messages
    };
    std::vector<std::optional<Window>> windows;
    if (!node) {
      windows.push_back(std::nullopt);
    } else {
      int index = 0;
      for (const auto& item : window_items(node, "window")) {
        const std::string key = node.IsSequence() ? "window[" + std::to_string(index++) + "]" : "window";
        const auto bounds =
            item.IsNull() ? std::nullopt
                          : window_item(item, key,
                                        "expected a mapping {left: N, right: M} (keys before and after the diagonal; "
                                        "either may be left out) or none");
        if (!bounds) {
          windows.push_back(std::nullopt);
        } else {
          windows.push_back(Window{bounds->left, bounds->right, item, key});
        }
      }
    }
    std::vector<Mask> out;
    for (const CausalAlignment alignment : alignments) {
      for (const auto& window : windows) {
        Mask mask(alignment, std::nullopt, std::nullopt);
        if (window) {
          mask.window_left = window->left;
          mask.window_right = window->right;
          if (alignment != CausalAlignment::none) {
            if (window->right && *window->right != 0) {
              fail(window->where["right"], window->key + ".right",
                   "is " + std::to_string(*window->right) + " under causal: " + to_string(alignment) +
                       ", which masks every later key; give right: 0 or leave it out, or causal: false for a "
                       "two-sided window");
            }
            mask.window_right = 0;
            if (!window->left) {
              fail(window->where, window->key + ".left",
                   "missing: under a causal mask a window needs left (keys before the diagonal); without it the "
                   "mask is the causal mask alone");
            }
          }
        }
        if (std::find(out.begin(), out.end(), mask) == out.end()) out.push_back(mask);
      }
    }
    return out;
  }
};

}  // namespace

std::vector<CausalAlignment> read_causal_alignments(const std::string& source, const YAML::Node& node,
                                                    const std::string& key) {
  return MaskReader(source).causal_alignments(node, key);
}

std::vector<Mask> read_masks(const std::string& source, const std::vector<CausalAlignment>& alignments,
                             const YAML::Node& node) {
  return MaskReader(source).masks(alignments, node);
}

}  // namespace attnsweep
