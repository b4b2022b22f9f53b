#include "runner/measure/inputs.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "runner/device/torch_device.hpp"
#include "runner/measure/device_copy.hpp"

namespace attnsweep {
namespace {

std::uint64_t next_draw_id() {
  static std::atomic<std::uint64_t> draws{0};
  return ++draws;
}

at::Generator seeded_generator(const at::Device& where, std::uint64_t seed) {
  at::Generator generator = where.is_cuda() ? at::cuda::detail::createCUDAGenerator(where.index())
                                            : at::make_generator<at::CPUGeneratorImpl>(seed);
  generator.set_current_seed(seed);
  return generator;
}

// `masked`, and also true where the mask hides key `key` from the query whose
// diagonal is `diagonal` (Mask::keys_of_row): past it under a causal mask,
// outside the window around it. The index tensors broadcast against each other.
at::Tensor masked_around_diagonal(const Mask& mask, const at::Tensor& key, const at::Tensor& diagonal, at::Tensor masked) {
  if (mask.is_causal()) masked = masked.logical_or(key > diagonal);
  if (mask.window_left) masked = masked.logical_or(key < diagonal - *mask.window_left);
  if (mask.window_right) masked = masked.logical_or(key > diagonal + *mask.window_right);
  return masked;
}

// (batch, 1, Sq, Skv), true where masked: sequence b's real query rows see the
// keys its mask gives them among its own kv_len(b) keys (Mask::keys_of_row, its
// diagonal offset from its own lengths); its padding rows see key 0 alone.
at::Tensor variable_length_mask(const Shape& s, const Mask& mask, const at::Device& where) {
  const auto index = at::TensorOptions().device(where).dtype(at::kLong);
  std::vector<std::int64_t> q_lens, kv_lens, offsets;
  for (std::size_t b = 0; b < s.seq_lens_q.size(); ++b) {
    q_lens.push_back(s.q_len(b));
    kv_lens.push_back(s.kv_len(b));
    offsets.push_back(mask.diagonal_offset(s.q_len(b), s.kv_len(b)));
  }
  auto per_sequence = [&](const std::vector<std::int64_t>& values) {
    return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(where).view({-1, 1, 1, 1});
  };
  const at::Tensor row = at::arange(s.seq_len_q, index).view({1, 1, -1, 1});
  const at::Tensor key = at::arange(s.seq_len_kv, index).view({1, 1, 1, -1});
  const at::Tensor diagonal = row + per_sequence(offsets);
  const at::Tensor masked = masked_around_diagonal(mask, key, diagonal, key >= per_sequence(kv_lens));
  const at::Tensor padding_row = row >= per_sequence(q_lens);
  return at::where(padding_row, key != 0, masked).contiguous();
}

// |row + offset - key| for ALiBi: (Sq, Skv) with the mask's diagonal offset,
// or (batch, 1, Sq, Skv) with each sequence's own (its padding is masked anyway).
at::Tensor key_distance(const Shape& s, const Mask& mask, const at::Device& where) {
  const auto float32 = at::TensorOptions().device(where).dtype(at::kFloat);
  if (!s.variable_length()) {
    const at::Tensor row = at::arange(s.seq_len_q, float32).unsqueeze(1);
    const at::Tensor key = at::arange(s.seq_len_kv, float32).unsqueeze(0);
    return (row + static_cast<double>(mask.diagonal_offset(s.seq_len_q, s.seq_len_kv)) - key).abs();
  }
  std::vector<double> offsets;
  for (std::size_t b = 0; b < s.seq_lens_q.size(); ++b) {
    offsets.push_back(static_cast<double>(mask.diagonal_offset(s.q_len(b), s.kv_len(b))));
  }
  const at::Tensor per_sequence = at::tensor(offsets, at::TensorOptions().dtype(at::kDouble)).to(float32).view({-1, 1, 1, 1});
  const at::Tensor row = at::arange(s.seq_len_q, float32).view({1, 1, -1, 1});
  const at::Tensor key = at::arange(s.seq_len_kv, float32).view({1, 1, 1, -1});
  return (row + per_sequence - key).abs().contiguous();
}

// The score modifications' tensors (variant.hpp): ALiBi's slopes, distances and
// bias; the sinks drawn from their own generator, seed + 3 (q, k, v are seed's,
// the gradient seed + 1, the page table seed + 2). Python draws them the same way.
void add_score_inputs(AttentionInputs& inputs, const Case& c, const at::Device& where, std::uint64_t seed) {
  const Shape& s = c.shape;
  const auto float32 = at::TensorOptions().device(where).dtype(at::kFloat);
  if (c.scores.alibi) {
    inputs.alibi_slopes = at::tensor(alibi_slopes(s.heads), at::TensorOptions().dtype(at::kDouble)).to(float32);
    inputs.key_distance = key_distance(s, c.mask, where);
    // (1 or batch, heads, Sq, Skv): each head's slope times the distances.
    const at::Tensor distance = inputs.key_distance.dim() == 4 ? inputs.key_distance : inputs.key_distance.unsqueeze(0).unsqueeze(0);
    // Made in float32 and rounded once to the dtype (as Python makes it), the
    // mask filled in place: at most one float32 copy of the bias at a time.
    at::Tensor bias = -inputs.alibi_slopes.view({1, -1, 1, 1}) * distance;
    if (inputs.masked_out.defined()) {
      const at::Tensor masked = inputs.masked_out.dim() == 4 ? inputs.masked_out : inputs.masked_out.unsqueeze(0).unsqueeze(0);
      bias.masked_fill_(masked, -std::numeric_limits<double>::infinity());
    }
    inputs.alibi_bias = bias.to(scalar_type_of(output_dtype(c.dtype))).contiguous();  // an fp8 case computes in bf16
  }
  if (c.scores.sinks) {
    at::Generator sinks = seeded_generator(where, seed + 3);
    inputs.sinks = at::randn({s.heads}, sinks, float32);
  }
}

// Per-tensor fp8 quantisation (FlashAttention-3's and Transformer Engine's
// delayed-scaling recipe with the current amax): scale = amax(|x|) / the
// format's largest finite value (448 for e4m3, 57344 for e5m2), x8 = fp8(x /
// scale) in float32 arithmetic; the descale handed to kernels is that scale.
void quantize(AttentionInputs& inputs, at::ScalarType fp8) {
  auto quantized = std::make_shared<AttentionInputs::Quantized>();
  const double largest = fp8 == at::kFloat8_e4m3fn ? 448.0 : 57344.0;
  const auto one = [&](at::Tensor& tensor, at::Tensor& original, at::Tensor& descale) {
    // The draw is kept for the reference alone: outside the caching allocator
    // where there is room, so that the case's peak_mem_bytes is its fp8 inputs'.
    original = copy_outside_caching_allocator(tensor, tensor.is_cuda()).value_or(tensor);
    const at::Tensor wide = tensor.to(at::kFloat);
    descale = (wide.abs().amax() / largest).clamp_min(std::numeric_limits<float>::min());
    tensor = (wide / descale).to(fp8);
  };
  one(inputs.query, quantized->query, quantized->descale_q);
  one(inputs.key, quantized->key, quantized->descale_k);
  one(inputs.value, quantized->value, quantized->descale_v);
  inputs.quantized = std::move(quantized);
}

}  // namespace

at::ScalarType scalar_type_of(Dtype dtype) {
  switch (dtype) {
    case Dtype::bf16: return at::kBFloat16;
    case Dtype::fp16: return at::kHalf;
    case Dtype::fp32: return at::kFloat;
    case Dtype::fp8_e4m3: return at::kFloat8_e4m3fn;
    case Dtype::fp8_e5m2: return at::kFloat8_e5m2;
  }
  return at::kFloat;
}

AttentionInputs make_inputs(const Case& c, const Device& device, std::uint64_t seed) {
  const Shape& s = c.shape;
  const at::Device where = torch_device(device);
  // Drawn where they are used: on a GPU the CPU draw of a large shape cost up
  // to a second per case (a quarter of a sweep), the GPU's takes microseconds.
  at::Generator generator = seeded_generator(where, seed);
  const auto float32 = at::TensorOptions().device(where).dtype(at::kFloat);
  // An fp8 case draws the bf16 inputs of its shape, then quantises them.
  const at::ScalarType drawn = scalar_type_of(output_dtype(c.dtype));
  auto draw = [&](std::int64_t heads, std::int64_t seq, std::int64_t dim) {
    return at::randn({s.batch, heads, seq, dim}, generator, float32).to(drawn);
  };
  AttentionInputs inputs;
  inputs.draw_id = next_draw_id();
  inputs.query = draw(s.heads, s.seq_len_q, s.head_dim);
  inputs.key = draw(s.kv_heads, s.seq_len_kv, s.head_dim);
  inputs.value = draw(s.kv_heads, s.seq_len_kv, s.value_dim());  // the output has the values' head dim
  if (is_fp8(c.dtype)) quantize(inputs, scalar_type_of(c.dtype));
  inputs.mask = c.mask;
  inputs.scores = c.scores;
  inputs.grouped = s.kv_heads != s.heads;
  inputs.scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  if (s.page_size > 0) {
    // Its own generator, seed + 2 (q, k, v are seed's, a backward's gradient seed + 1).
    at::Generator pages = seeded_generator(where, seed + 2);
    std::vector<std::int64_t> kv_lens;
    for (std::size_t b = 0; b < static_cast<std::size_t>(s.batch); ++b) kv_lens.push_back(s.kv_len(b));
    inputs.paged = std::make_shared<const PagedCache>(PagedCache::of(inputs.key, inputs.value, kv_lens, s.page_size, pages));
  }
  if (s.variable_length()) {
    inputs.packed = std::make_shared<const PackedBatch>(
        PackedBatch::of(inputs.query, inputs.key, inputs.value, s.seq_lens_q, s.seq_lens_kv));
    inputs.masked_out = variable_length_mask(s, c.mask, where);
    inputs.attend = inputs.masked_out.logical_not();
    add_score_inputs(inputs, c, where, seed);
    return inputs;
  }
  inputs.causal = c.mask.is_top_left_causal_on(s.seq_len_q, s.seq_len_kv);
  if (c.mask.any()) {
    // Query row i sees keys [first, last] around its diagonal i + offset
    // (Mask::keys_of_row): built from index grids, once per case.
    const auto index = at::TensorOptions().device(where).dtype(at::kLong);
    const at::Tensor row = at::arange(s.seq_len_q, index).unsqueeze(1);
    const at::Tensor key = at::arange(s.seq_len_kv, index).unsqueeze(0);
    const at::Tensor diagonal = row + c.mask.diagonal_offset(s.seq_len_q, s.seq_len_kv);
    const at::Tensor none = at::zeros({s.seq_len_q, s.seq_len_kv}, at::TensorOptions().device(where).dtype(at::kBool));
    const at::Tensor masked = masked_around_diagonal(c.mask, key, diagonal, none);
    inputs.masked_out = masked;
    if (!inputs.causal) inputs.attend = masked.logical_not();
  }
  add_score_inputs(inputs, c, where, seed);
  return inputs;
}

at::Tensor make_grad_output(const Case& c, const Device& device, std::uint64_t seed) {
  const Shape& s = c.shape;
  const at::Device where = torch_device(device);
  at::Generator generator = seeded_generator(where, seed + 1);
  at::Tensor grad_output = at::randn({s.batch, s.heads, s.seq_len_q, s.value_dim()}, generator,
                                     at::TensorOptions().device(where).dtype(at::kFloat))
                               .to(scalar_type_of(output_dtype(c.dtype)));
  // A variable-length batch's padding rows get no gradient: the padded
  // variants' outputs there (a row that sees key 0 alone) are nobody's, and a
  // gradient through them would reach key 0's dk and dv.
  for (std::size_t b = 0; b < s.seq_lens_q.size(); ++b) {
    grad_output.select(0, static_cast<std::int64_t>(b)).narrow(1, s.q_len(b), s.seq_len_q - s.q_len(b)).zero_();
  }
  return grad_output;
}

AttentionInputs as_leaves(const AttentionInputs& inputs) {
  AttentionInputs leaves = inputs;
  leaves.query = inputs.query.detach().requires_grad_(true);
  leaves.key = inputs.key.detach().requires_grad_(true);
  leaves.value = inputs.value.detach().requires_grad_(true);
  // A variable-length batch's packed rows are leaves of their own: the kernels
  // that read them are differentiated with respect to them, the padded
  // variants with respect to the padded tensors.
  if (inputs.packed) leaves.packed = std::make_shared<const PackedBatch>(inputs.packed->as_leaves());
  leaves.draw_id = next_draw_id();
  return leaves;
}

}  // namespace attnsweep
