#include "runner/variants/packed_batch.hpp"

#include <ATen/ATen.h>

namespace attnsweep {
namespace {

// Rows b * seq_len + [0, length_b) of the padded batch, and the cumulative lengths.
std::pair<at::Tensor, at::Tensor> rows_and_offsets(const std::vector<std::int64_t>& lengths, std::int64_t seq_len,
                                                   const at::Device& where) {
  std::vector<std::int64_t> rows;
  std::vector<std::int32_t> offsets = {0};
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    for (std::int64_t i = 0; i < lengths[b]; ++i) rows.push_back(static_cast<std::int64_t>(b) * seq_len + i);
    offsets.push_back(offsets.back() + static_cast<std::int32_t>(lengths[b]));
  }
  const auto on_host = at::TensorOptions().dtype(at::kLong);
  at::Tensor row_tensor = at::tensor(rows, on_host).to(where);
  at::Tensor offset_tensor = at::tensor(offsets, at::TensorOptions().dtype(at::kInt)).to(where);
  return {row_tensor, offset_tensor};
}

// (batch, heads, seq, d) -> the rows listed, (total, heads, d), contiguous.
// fp8 is moved as its bytes (index kernels have few Float8 instantiations).
at::Tensor pack(const at::Tensor& padded, const at::Tensor& rows) {
  const auto batch = padded.size(0), heads = padded.size(1), seq = padded.size(2), dim = padded.size(3);
  const bool fp8 = at::isFloat8Type(padded.scalar_type());
  const at::Tensor source = fp8 ? padded.view(at::kByte) : padded;
  const at::Tensor packed = source.transpose(1, 2).reshape({batch * seq, heads, dim}).index_select(0, rows).contiguous();
  return fp8 ? packed.view(padded.scalar_type()) : packed;
}

// Packed rows (total, heads, d) back in the padded (batch, heads, seq, d) layout, zeros elsewhere.
at::Tensor unpack_rows(const at::Tensor& packed, const at::Tensor& rows, std::int64_t batch, std::int64_t seq) {
  at::Tensor padded = at::zeros({batch * seq, packed.size(1), packed.size(2)}, packed.options());
  padded.index_copy_(0, rows, packed);
  return padded.view({batch, seq, packed.size(1), packed.size(2)}).transpose(1, 2);
}

}  // namespace

PackedBatch PackedBatch::of(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                            const std::vector<std::int64_t>& q_lens, const std::vector<std::int64_t>& kv_lens) {
  PackedBatch packed;
  packed.q_lens = q_lens;
  packed.kv_lens = kv_lens;
  packed.max_q = query.size(2);
  packed.max_kv = key.size(2);
  auto [q_rows, cu_q] = rows_and_offsets(q_lens, packed.max_q, query.device());
  auto [kv_rows, cu_k] = rows_and_offsets(kv_lens, packed.max_kv, query.device());
  packed.q_rows = q_rows;
  packed.kv_rows = kv_rows;
  packed.cu_seqlens_q = cu_q;
  packed.cu_seqlens_k = cu_k;
  packed.query = pack(query, q_rows);
  packed.key = pack(key, kv_rows);
  packed.value = pack(value, kv_rows);
  return packed;
}

at::Tensor PackedBatch::unpack(const at::Tensor& packed, std::int64_t batch, std::int64_t seq_len_q) const {
  return unpack_rows(packed, q_rows, batch, seq_len_q);
}

at::Tensor PackedBatch::unpack_keys(const at::Tensor& packed, std::int64_t batch, std::int64_t seq_len_kv) const {
  return unpack_rows(packed, kv_rows, batch, seq_len_kv);
}

at::Tensor PackedBatch::pack_query_side(const at::Tensor& padded) const { return pack(padded, q_rows); }

PackedBatch PackedBatch::as_leaves() const {
  PackedBatch leaves = *this;
  leaves.query = query.detach().requires_grad_(true);
  leaves.key = key.detach().requires_grad_(true);
  leaves.value = value.detach().requires_grad_(true);
  return leaves;
}

}  // namespace attnsweep
