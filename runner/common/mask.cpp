#include "runner/common/mask.hpp"

#include <algorithm>
#include <vector>

namespace attnsweep {

std::string to_string(CausalAlignment alignment) {
  switch (alignment) {
    case CausalAlignment::none: return "none";
    case CausalAlignment::top_left: return "top_left";
    case CausalAlignment::bottom_right: return "bottom_right";
  }
  return "none";
}

std::optional<CausalAlignment> parse_causal_alignment(const std::string& text) {
  if (text == "none") return CausalAlignment::none;
  if (text == "top_left") return CausalAlignment::top_left;
  if (text == "bottom_right") return CausalAlignment::bottom_right;
  return std::nullopt;
}

std::int64_t Mask::diagonal_offset(std::int64_t seq_len_q, std::int64_t seq_len_kv) const {
  return causal == CausalAlignment::top_left ? 0 : seq_len_kv - seq_len_q;
}

Mask::KeyRange Mask::keys_of_row(std::int64_t row, std::int64_t seq_len_q, std::int64_t seq_len_kv) const {
  const std::int64_t diagonal = row + diagonal_offset(seq_len_q, seq_len_kv);
  std::int64_t first = 0, last = seq_len_kv - 1;
  if (window_left) first = std::max(first, diagonal - *window_left);
  if (is_causal()) last = std::min(last, diagonal);
  if (window_right) last = std::min(last, diagonal + *window_right);
  return {first, last};
}

double Mask::attended_pairs(std::int64_t seq_len_q, std::int64_t seq_len_kv) const {
  if (!any()) return static_cast<double>(seq_len_q) * static_cast<double>(seq_len_kv);
  double pairs = 0;
  for (std::int64_t row = 0; row < seq_len_q; ++row) pairs += static_cast<double>(keys_of_row(row, seq_len_q, seq_len_kv).count());
  return pairs;
}

std::int64_t Mask::keys_seen(std::int64_t seq_len_q, std::int64_t seq_len_kv) const {
  if (!windowed() || seq_len_q <= 0) return seq_len_kv;
  // Each row's range starts and ends at most one key after the previous row's and
  // holds at least one key (plans refuse empty rows), so the union is one run.
  const KeyRange first = keys_of_row(0, seq_len_q, seq_len_kv);
  const KeyRange last = keys_of_row(seq_len_q - 1, seq_len_q, seq_len_kv);
  return std::max<std::int64_t>(0, last.last - first.first + 1);
}

std::optional<std::int64_t> Mask::first_empty_row(std::int64_t seq_len_q, std::int64_t seq_len_kv) const {
  if (!any() || seq_len_q <= 0) return std::nullopt;
  // Not row by row: a config of thousands of shapes with millions of tokens took the
  // planner minutes (found by fuzzing). A row's key count is linear in the row between
  // the rows where a bound starts or stops clamping (the window's left edge passing key
  // 0, the right edge passing the last key), so it is monotone there: each piece is
  // checked at its ends and bisected where it turns empty.
  const std::int64_t offset = diagonal_offset(seq_len_q, seq_len_kv);
  std::vector<std::int64_t> cuts = {0, seq_len_q - 1};
  const auto cut_where_diagonal_is = [&](std::int64_t diagonal) {
    for (std::int64_t row = diagonal - offset - 1; row <= diagonal - offset + 1; ++row) {
      if (row >= 0 && row < seq_len_q) cuts.push_back(row);
    }
  };
  if (window_left) cut_where_diagonal_is(*window_left);
  std::optional<std::int64_t> right;  // the last key a row sees, relative to its diagonal
  if (is_causal()) right = 0;
  if (window_right) right = right ? std::min(*right, *window_right) : *window_right;
  if (right) cut_where_diagonal_is(seq_len_kv - 1 - *right);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const auto empty = [&](std::int64_t row) { return keys_of_row(row, seq_len_q, seq_len_kv).count() == 0; };
  for (std::size_t i = 0; i < cuts.size(); ++i) {
    if (empty(cuts[i])) return cuts[i];
    if (i + 1 < cuts.size() && empty(cuts[i + 1])) {
      std::int64_t seen = cuts[i], unseen = cuts[i + 1];
      while (unseen - seen > 1) {
        const std::int64_t middle = seen + (unseen - seen) / 2;
        (empty(middle) ? unseen : seen) = middle;
      }
      return unseen;
    }
  }
  return std::nullopt;
}

Mask Mask::canonical(std::int64_t seq_len_q, std::int64_t seq_len_kv) const {
  Mask m = *this;
  if (m.causal == CausalAlignment::none && m.window_right && *m.window_right == 0) m.causal = CausalAlignment::bottom_right;
  if (m.causal == CausalAlignment::bottom_right && seq_len_q == seq_len_kv) m.causal = CausalAlignment::top_left;
  const std::int64_t offset = m.diagonal_offset(seq_len_q, seq_len_kv);
  // The last row's diagonal is the rightmost; the first row's the leftmost.
  if (m.window_left && *m.window_left >= seq_len_q - 1 + offset) m.window_left.reset();
  if (m.is_causal()) {
    m.window_right = m.window_left ? std::optional<std::int64_t>(0) : std::nullopt;
  } else if (m.window_right && *m.window_right >= seq_len_kv - 1 - offset) {
    m.window_right.reset();
  }
  return m;
}

bool Mask::is_top_left_causal_on(std::int64_t seq_len_q, std::int64_t seq_len_kv) const {
  if (windowed() || !is_causal()) return false;
  return causal == CausalAlignment::top_left || seq_len_q == seq_len_kv;
}

std::string Mask::label() const {
  std::string text = causal == CausalAlignment::none       ? (windowed() ? "" : "full")
                     : causal == CausalAlignment::top_left ? "causal"
                                                           : "causal_bottom_right";
  if (windowed()) {
    if (!text.empty()) text += " ";
    text += "window[" + bound_text(window_left) + "," + bound_text(window_right) + "]";
  }
  return text;
}

}  // namespace attnsweep
