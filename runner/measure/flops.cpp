#include "runner/measure/flops.hpp"

#include <algorithm>
#include <utility>

#include "runner/common/score_mod.hpp"

namespace attnsweep {

const char* const kFlopConvention =
    "attended_pairs_v1: flops = 4 * batch * heads * head_dim * pairs; pairs = seq_len_q * seq_len_kv, "
    "or for causal (top-left aligned, PyTorch is_causal) sum_i min(i + 1, seq_len_kv); "
    "min_bytes = dtype_bytes * (2 * B*H*Sq*D + 2 * B*KVH*Skv*D)";

namespace {

// A variable-length batch's count: the sum of its sequences' counts, each a batch of one.
template <typename Count>
double over_sequences(const Shape& shape, Count count) {
  double sum = 0;
  for (std::size_t b = 0; b < shape.seq_lens_q.size(); ++b) sum += count(shape.sequence(b));
  return sum;
}

}  // namespace

double attended_pairs(const Shape& shape, const Mask& mask) {
  if (shape.variable_length()) {
    return over_sequences(shape, [&](const Shape& one) { return attended_pairs(one, mask); });
  }
  return mask.attended_pairs(shape.seq_len_q, shape.seq_len_kv);
}

double forward_flops(const Shape& shape, const Mask& mask) {
  const double sequences = shape.variable_length() ? 1.0 : static_cast<double>(shape.batch);
  // Two matmuls, each 2 FLOPs per multiply-add: q k^T over head_dim, p v over the values' head dim
  // (4 * head_dim per pair where they are equal).
  const double dims = static_cast<double>(shape.head_dim) + static_cast<double>(shape.value_dim());
  return 2.0 * sequences * static_cast<double>(shape.heads) * dims * attended_pairs(shape, mask);
}

double flops_per_forward_multiple(Pass pass) {
  switch (pass) {
    case Pass::forward: return 1.0;
    case Pass::backward: return 2.5;
    case Pass::forward_backward: return 3.5;
  }
  return 1.0;
}

double pass_flops(const Shape& shape, const Mask& mask, Pass pass) {
  return flops_per_forward_multiple(pass) * forward_flops(shape, mask);
}

std::string flop_convention(const ConventionFacts& run) {
  // The clause each fact of the run adds, in the order they are written.
  // The score modifications' first, in kScoreModKeys' order (each states its own).
  std::string text = kFlopConvention;
  for (std::size_t i = 0; i < kScoreModKeys.size(); ++i) {
    if (run.score_mods.count(kScoreModKeys[i])) text += ScoreMod::flop_clause(i);
  }
  const std::pair<bool, const char*> clauses[] = {
      {run.fp8,
       "; fp8 (fp8_e4m3, fp8_e5m2): flops as any dtype; min_bytes count q, k and v at 1 byte and the output at "
       "bf16's 2 (the per-tensor descales not counted)"},
      {run.value_head_dims,
       "; a value head dim Dv (head_dim_v) other than D: flops = 2 * batch * heads * (D + Dv) * pairs (q k^T over "
       "D, p v over Dv), and min_bytes count q and k with D, v and the output with Dv (in a backward also dq, dk "
       "with D, dout and dv with Dv)"},
      {run.variable_lengths,
       "; a variable-length batch counts the sum over its sequences, each a batch of one with its own "
       "lengths: the padding of a padded run is not counted"},
      {run.serving_masks,
       "; masks: causal bottom-right pairs = sum_i min(i + 1 + seq_len_kv - seq_len_q, seq_len_kv), a window "
       "clips each row to its keys (docs/measurement.md); under a window min_bytes count only the keys and values "
       "some query sees"},
      {run.backward_passes,
       "; passes (FlashAttention's convention): backward flops = 2.5 * forward, forward_backward = 3.5 * "
       "forward; backward and forward_backward min_bytes = dtype_bytes * (4 * B*H*Sq*D + 4 * B*KVH*Skv*D)"},
  };
  for (const auto& [applies, clause] : clauses) {
    if (applies) text += clause;
  }
  return text;
}

double forward_min_bytes(const Shape& shape, Dtype dtype, const Mask& mask) {
  if (shape.variable_length()) {
    return over_sequences(shape, [&](const Shape& one) { return forward_min_bytes(one, dtype, mask); });
  }
  const double b = static_cast<double>(shape.batch);
  const double dims = static_cast<double>(shape.head_dim) + static_cast<double>(shape.value_dim());  // 2 D when equal
  const double keys = static_cast<double>(mask.keys_seen(shape.seq_len_q, shape.seq_len_kv));
  const double query_rows = b * static_cast<double>(shape.heads) * static_cast<double>(shape.seq_len_q);
  const double k_and_v = b * static_cast<double>(shape.kv_heads) * keys * dims;
  // q, k, v in the dtype (1 byte for fp8), the output in output_dtype (bf16's 2 for fp8).
  const double inputs = query_rows * static_cast<double>(shape.head_dim) + k_and_v;
  const double output = query_rows * static_cast<double>(shape.value_dim());
  return dtype_bytes(dtype) * inputs + dtype_bytes(output_dtype(dtype)) * output;
}

double pass_min_bytes(const Shape& shape, Dtype dtype, Pass pass, const Mask& mask) {
  if (pass == Pass::forward) return forward_min_bytes(shape, dtype, mask);
  if (shape.variable_length()) {
    return over_sequences(shape, [&](const Shape& one) { return pass_min_bytes(one, dtype, pass, mask); });
  }
  const double b = static_cast<double>(shape.batch);
  const double dims = static_cast<double>(shape.head_dim) + static_cast<double>(shape.value_dim());  // 2 D when equal
  const double keys = static_cast<double>(mask.keys_seen(shape.seq_len_q, shape.seq_len_kv));
  // q, dq (D) and out, dout (Dv); k, dk (D) and v, dv (Dv)
  const double query_side = 2 * b * static_cast<double>(shape.heads) * static_cast<double>(shape.seq_len_q) * dims;
  const double key_side = 2 * b * static_cast<double>(shape.kv_heads) * keys * dims;
  return dtype_bytes(dtype) * (query_side + key_side);
}

}  // namespace attnsweep
