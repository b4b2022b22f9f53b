#include "runner/measure/reference_chunks.hpp"

#include <ATen/ATen.h>

#include <algorithm>

namespace attnsweep {
namespace {

constexpr std::int64_t kChunkScoreBytes = std::int64_t{1} << 30;

}  // namespace

at::Tensor ReferenceChunk::query_side(const at::Tensor& t) const {
  return t.narrow(0, batch, 1).narrow(1, first_kv_head * group, kv_heads * group);
}

at::Tensor ReferenceChunk::key_side(const at::Tensor& t) const {
  return t.narrow(0, batch, 1).narrow(1, first_kv_head, kv_heads);
}

AttentionInputs ReferenceChunk::of(const AttentionInputs& inputs) const {
  AttentionInputs chunk = inputs;
  chunk.query = query_side(inputs.query);
  chunk.key = key_side(inputs.key);
  chunk.value = key_side(inputs.value);
  chunk.grouped = group != 1;
  // A variable-length batch's mask is per batch entry (batch, 1, Sq, Skv).
  if (inputs.masked_out.defined() && inputs.masked_out.dim() == 4) {
    chunk.masked_out = inputs.masked_out.narrow(0, batch, 1);
    chunk.attend = inputs.attend.defined() ? inputs.attend.narrow(0, batch, 1) : at::Tensor();
  }
  return chunk;
}

std::vector<ReferenceChunk> reference_chunks(const AttentionInputs& inputs) {
  const std::int64_t batches = inputs.query.size(0), kv_heads = inputs.key.size(1);
  const std::int64_t group = inputs.query.size(1) / kv_heads;
  const std::int64_t scores_per_kv_head =
      group * inputs.query.size(2) * inputs.key.size(2) * static_cast<std::int64_t>(sizeof(double));
  const std::int64_t step = std::clamp<std::int64_t>(kChunkScoreBytes / std::max<std::int64_t>(scores_per_kv_head, 1),
                                                     1, kv_heads);
  std::vector<ReferenceChunk> chunks;
  for (std::int64_t b = 0; b < batches; ++b) {
    const std::int64_t real_rows =
        inputs.packed ? inputs.packed->q_lens[static_cast<std::size_t>(b)] : inputs.query.size(2);
    for (std::int64_t h = 0; h < kv_heads; h += step) {
      chunks.push_back({b, h, std::min(step, kv_heads - h), group, real_rows});
    }
  }
  return chunks;
}

}  // namespace attnsweep
