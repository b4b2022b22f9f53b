#include "runner/measure/flops.hpp"

#include <algorithm>

namespace attnsweep {

const char* const kFlopConvention =
    "attended_pairs_v1: flops = 4 * batch * heads * head_dim * pairs; pairs = seq_len_q * seq_len_kv, "
    "or for causal (top-left aligned, PyTorch is_causal) sum_i min(i + 1, seq_len_kv); "
    "min_bytes = dtype_bytes * (2 * B*H*Sq*D + 2 * B*KVH*Skv*D)";

double attended_pairs(const Shape& shape, bool causal) {
  const double sq = static_cast<double>(shape.seq_len_q);
  const double skv = static_cast<double>(shape.seq_len_kv);
  if (!causal) return sq * skv;
  // Rows 0..n-1 with n = min(Sq, Skv) see 1..n keys; the remaining rows see all Skv.
  const double n = std::min(sq, skv);
  return n * (n + 1) / 2 + (sq - n) * skv;
}

double forward_flops(const Shape& shape, bool causal) {
  return 4.0 * static_cast<double>(shape.batch) * static_cast<double>(shape.heads) *
         static_cast<double>(shape.head_dim) * attended_pairs(shape, causal);
}

double flops_per_forward_multiple(Pass pass) {
  switch (pass) {
    case Pass::forward: return 1.0;
    case Pass::backward: return 2.5;
    case Pass::forward_backward: return 3.5;
  }
  return 1.0;
}

double pass_flops(const Shape& shape, bool causal, Pass pass) {
  return flops_per_forward_multiple(pass) * forward_flops(shape, causal);
}

std::string flop_convention(bool has_backward_passes) {
  std::string text = kFlopConvention;
  if (has_backward_passes) {
    text += "; passes (FlashAttention's convention): backward flops = 2.5 * forward, forward_backward = 3.5 * "
            "forward; backward and forward_backward min_bytes = dtype_bytes * (4 * B*H*Sq*D + 4 * B*KVH*Skv*D)";
  }
  return text;
}

double forward_min_bytes(const Shape& shape, Dtype dtype) {
  const double b = static_cast<double>(shape.batch), d = static_cast<double>(shape.head_dim);
  const double q_and_out = 2 * b * static_cast<double>(shape.heads) * static_cast<double>(shape.seq_len_q) * d;
  const double k_and_v = 2 * b * static_cast<double>(shape.kv_heads) * static_cast<double>(shape.seq_len_kv) * d;
  return dtype_bytes(dtype) * (q_and_out + k_and_v);
}

double pass_min_bytes(const Shape& shape, Dtype dtype, Pass pass) {
  if (pass == Pass::forward) return forward_min_bytes(shape, dtype);
  const double b = static_cast<double>(shape.batch), d = static_cast<double>(shape.head_dim);
  const double query_side = 4 * b * static_cast<double>(shape.heads) * static_cast<double>(shape.seq_len_q) * d;
  const double key_side = 4 * b * static_cast<double>(shape.kv_heads) * static_cast<double>(shape.seq_len_kv) * d;
  return dtype_bytes(dtype) * (query_side + key_side);
}

}  // namespace attnsweep
