#pragma once
// How a case changes the attention scores before the softmax (issue 36;
// docs/config.md, "Score modifications"), beside the mask that says which
// (query, key) pairs are seen: tanh soft-capping of the scaled scores
// (Gemma 2's and Grok's `cap * tanh(s / cap)`). Plain data, no LibTorch: the
// plan crosses it with the masks, the store keeps it, compare matches on it.
#include <optional>
#include <string>

namespace attnsweep {

struct ScoreMod {
  // cap * tanh(s / cap) on the scaled scores, before the mask; nullopt: off.
  std::optional<double> softcap;

  bool any() const { return softcap.has_value(); }
  bool operator==(const ScoreMod& other) const { return softcap == other.softcap; }
  bool operator!=(const ScoreMod& other) const { return !(*this == other); }
  bool operator<(const ScoreMod& other) const { return softcap.value_or(0.0) < other.softcap.value_or(0.0); }

  // "" without a modification; "softcap30" or "softcap12.5": what case labels
  // append after the mask ("naive 1x8x512x64 bf16 causal softcap30").
  std::string label() const;
};

// A softcap as configs, labels and exclude rules write it: the shortest decimal
// that reads back as the same double ("30", "12.5").
std::string softcap_text(double cap);

}  // namespace attnsweep
