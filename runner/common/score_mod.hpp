#pragma once
// How a case changes the attention scores before the softmax (issue 36;
// docs/config.md, "Score modifications"), beside the mask that says which
// (query, key) pairs are seen: tanh soft-capping of the scaled scores
// (Gemma 2's and Grok's `cap * tanh(s / cap)`), ALiBi's per-head linear biases
// and attention sinks (gpt-oss's one logit per head that takes part in the
// softmax and gives no value). Plain data, no LibTorch: the plan crosses it with
// the masks, the store keeps it, compare matches on it.
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace attnsweep {

// Their keys in a config, an exclude rule and a claim's case, in the order the
// plan crosses them (softcap outermost); score_mod_reader.cpp reads each.
inline const std::vector<std::string> kScoreModKeys = {"softcap", "alibi", "sinks"};

struct ScoreMod {
  // cap * tanh(s / cap) on the scaled scores, before the mask; nullopt: off.
  std::optional<double> softcap;
  // -slope_h * |i + diagonal_offset - j| added to the (capped) scores of head h,
  // with the standard slopes of the ALiBi paper (alibi_slopes below).
  bool alibi = false;
  // One logit per query head, seeded, in every row's softmax with no value.
  bool sinks = false;

  bool any() const { return softcap.has_value() || alibi || sinks; }
  bool operator==(const ScoreMod& other) const {
    return softcap == other.softcap && alibi == other.alibi && sinks == other.sinks;
  }
  bool operator!=(const ScoreMod& other) const { return !(*this == other); }
  bool operator<(const ScoreMod& other) const {
    return std::make_tuple(softcap.has_value(), softcap.value_or(0.0), alibi, sinks) <
           std::make_tuple(other.softcap.has_value(), other.softcap.value_or(0.0), other.alibi, other.sinks);
  }

  // "" without a modification; "softcap30", "alibi", "sinks" or several of them
  // with spaces ("softcap12.5 alibi sinks"): what case labels append after the
  // mask ("naive 1x8x512x64 bf16 causal softcap30").
  std::string label() const;
  // The modification at kScoreModKeys[index], as an exclude rule matches it:
  // softcap_text's cap or "none"; "true" or "false".
  std::string word(std::size_t index) const;
  // Whether the modification at kScoreModKeys[index] is on.
  bool has(std::size_t index) const;
  // What the modification at kScoreModKeys[index] adds to the FLOP convention of a
  // run that has it (runner/measure/flops.cpp): "; ... adds no flops ...".
  static const char* flop_clause(std::size_t index);
};

// A softcap as configs, labels and exclude rules write it: the shortest decimal
// that reads back as the same double ("30", "12.5").
std::string softcap_text(double cap);

// ALiBi's slope of each of `heads` query heads (Press et al., "Train Short, Test
// Long", and its reference code; also BLOOM's, MPT's and FlashAttention's tests):
// for n a power of two, 2^(-8 (h + 1) / n); otherwise the 2^k = largest power
// of two below n heads get those of 2^k, the others every other slope of 2^(k+1).
std::vector<double> alibi_slopes(std::int64_t heads);

}  // namespace attnsweep
