#pragma once
// Which (query, key) pairs a case's attention sees (docs/config.md, "Masks"):
// no mask, a causal mask aligned to the top left (PyTorch's is_causal: query i
// sees keys 0..i) or to the bottom right (FlashAttention's and the servers': the
// queries are the last rows of the key sequence, query i sees keys 0..i+Skv-Sq),
// and optionally a sliding window around that diagonal. Plain data, no LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

namespace attnsweep {

enum class CausalAlignment { none, top_left, bottom_right };

std::string to_string(CausalAlignment alignment);  // "none", "top_left", "bottom_right"
std::optional<CausalAlignment> parse_causal_alignment(const std::string& text);

struct Mask {
  CausalAlignment causal = CausalAlignment::top_left;
  // A sliding window: a query sees at most `window_left` keys before its diagonal
  // and `window_right` after it (nullopt: no bound on that side; a causal mask
  // bounds the right at 0). The diagonal is the causal alignment's; without a
  // causal mask it is the bottom right's, as FlashAttention's window_size.
  std::optional<std::int64_t> window_left;
  std::optional<std::int64_t> window_right;

  Mask() = default;
  // true: PyTorch's is_causal (top left); false: no mask. What `causal: true|false`
  // meant before alignments and windows, so a bool still reads as it did.
  Mask(bool causal_top_left) : causal(causal_top_left ? CausalAlignment::top_left : CausalAlignment::none) {}  // NOLINT
  Mask(CausalAlignment alignment, std::optional<std::int64_t> left, std::optional<std::int64_t> right)
      : causal(alignment), window_left(left), window_right(right) {}

  bool is_causal() const { return causal != CausalAlignment::none; }
  bool windowed() const { return window_left.has_value() || window_right.has_value(); }
  bool any() const { return is_causal() || windowed(); }
  bool operator==(const Mask& other) const {
    return causal == other.causal && window_left == other.window_left && window_right == other.window_right;
  }
  bool operator!=(const Mask& other) const { return !(*this == other); }
  // Any strict order, for maps and sorted keys (an unbounded side sorts first).
  bool operator<(const Mask& other) const {
    const auto key = [](const Mask& m) {
      return std::make_tuple(static_cast<int>(m.causal), m.window_left.value_or(-1), m.window_right.value_or(-1));
    };
    return key(*this) < key(other);
  }

  // Key index of query row i's diagonal is i + diagonal_offset(...).
  std::int64_t diagonal_offset(std::int64_t seq_len_q, std::int64_t seq_len_kv) const;
  // The keys query row i sees: [first, last], empty when first > last.
  struct KeyRange {
    std::int64_t first = 0, last = -1;
    std::int64_t count() const { return last >= first ? last - first + 1 : 0; }
  };
  KeyRange keys_of_row(std::int64_t row, std::int64_t seq_len_q, std::int64_t seq_len_kv) const;
  // (query, key) pairs seen over all rows of one head: what FLOP counts use.
  double attended_pairs(std::int64_t seq_len_q, std::int64_t seq_len_kv) const;
  // Keys some query sees (the union of the rows' ranges, which move by one key
  // per row): seq_len_kv but under a window, what a forward must read of K and V.
  std::int64_t keys_seen(std::int64_t seq_len_q, std::int64_t seq_len_kv) const;
  // The first query row that sees no key (its softmax would be 0/0), or nullopt.
  std::optional<std::int64_t> first_empty_row(std::int64_t seq_len_q, std::int64_t seq_len_kv) const;
  // Whether the mask is exactly PyTorch's is_causal on this shape (a bottom-right
  // mask on a square shape is), so the variants can use the causal flag itself.
  bool is_top_left_causal_on(std::int64_t seq_len_q, std::int64_t seq_len_kv) const;

  // The same set of keys, written one way: a bottom-right mask on a square shape
  // is the top-left one; a window without a causal mask and right 0 is the
  // bottom-right causal mask; window bounds that reach past every key are no
  // bounds. Plans store this form, so that one mask is one case and compare
  // matches it whatever the config wrote.
  Mask canonical(std::int64_t seq_len_q, std::int64_t seq_len_kv) const;

  // A window side as labels write it: the number of keys, or "inf" for no bound.
  static std::string bound_text(const std::optional<std::int64_t>& bound) {
    return bound ? std::to_string(*bound) : "inf";
  }

  // "full", "causal", "causal_bottom_right", with a window " window[4096,0]"
  // ("inf" for an unbounded side): what labels, reports and compare print.
  std::string label() const;
};

}  // namespace attnsweep
