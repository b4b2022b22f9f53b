#pragma once
// One measurement to make: a variant on a shape, dtype and mask, and the pass
// it times. Plain data, so a case can be handed to a worker process or stored as is.
#include <cstdint>
#include <string>

#include "runner/common/errors.hpp"
#include "runner/common/identities.hpp"
#include "runner/common/mask.hpp"

namespace attnsweep {

struct Shape {
  std::int64_t batch = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    // grouped-query attention when < heads
  std::int64_t seq_len_q = 0;
  std::int64_t seq_len_kv = 0;
  std::int64_t head_dim = 0;

  bool operator==(const Shape& other) const {
    return batch == other.batch && heads == other.heads && kv_heads == other.kv_heads &&
           seq_len_q == other.seq_len_q && seq_len_kv == other.seq_len_kv && head_dim == other.head_dim;
  }
  // "8x16x1024x64" (B x H x S x D); "8x16/4x1x4096x64" with GQA and Sq != Skv.
  std::string label() const;
};

struct Case {
  int plan_index = 0;  // position in the plan, stable for a given config
  std::string variant;
  Shape shape;
  Dtype dtype = Dtype::bf16;
  Mask mask;  // causal top-left unless the config says otherwise
  SourceLocation where;  // the `shapes` entry it came from, for messages about the case (not stored)
  Pass pass = Pass::forward;

  // "sdpa_flash 8x16x1024x64 bf16 causal"; a pass other than forward is named
  // at the end ("... causal backward"), so forward labels read as they always did.
  std::string label() const;
  // The same measurement: variant, shape, dtype, mask and pass (not plan_index
  // or where). What merge, resume and compare match cases by.
  bool same_measurement(const Case& other) const {
    return variant == other.variant && shape == other.shape && dtype == other.dtype && mask == other.mask &&
           pass == other.pass;
  }
};

}  // namespace attnsweep
