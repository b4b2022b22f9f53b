#include "runner/measure/input_guard.hpp"

#include <ATen/ATen.h>

#include <algorithm>

namespace attnsweep {

std::array<std::int64_t, 2> InputGuard::fingerprint(const at::Tensor& tensor) {
  // The bits, not the values: NaN == NaN and -0 != +0 for this purpose. Reduced
  // on the tensor's own device, outside every timed forward, in chunks so that
  // the int64 copies stay small next to the inputs. Integer sums wrap modulo
  // 2^64 in any order, so the result is the same however the device reduces.
  constexpr std::int64_t kChunk = std::int64_t{1} << 22;  // 32 MiB of int64 per temporary
  const at::ScalarType bits = tensor.element_size() == 1   ? at::kChar  // fp8
                              : tensor.element_size() == 2 ? at::kShort
                                                           : at::kInt;
  const at::Tensor flat = tensor.contiguous().view(bits).reshape({-1});
  at::Tensor plain = at::zeros({}, flat.options().dtype(at::kLong));
  at::Tensor weighted = at::zeros({}, flat.options().dtype(at::kLong));
  for (std::int64_t start = 0; start < flat.numel(); start += kChunk) {
    const at::Tensor integers = flat.narrow(0, start, std::min(kChunk, flat.numel() - start)).to(at::kLong);
    const at::Tensor weights = at::arange(start, start + integers.numel(), integers.options()).remainder_(8191).add_(1);
    plain.add_(integers.sum());
    weighted.add_(integers.mul_(weights).sum());
  }
  return {plain.item<std::int64_t>(), weighted.item<std::int64_t>()};
}

std::vector<std::pair<const char*, const at::Tensor*>> InputGuard::watched(const AttentionInputs& inputs) {
  std::vector<std::pair<const char*, const at::Tensor*>> tensors = {
      {"query", &inputs.query}, {"key", &inputs.key}, {"value", &inputs.value}};
  if (inputs.packed) {
    tensors.insert(tensors.end(), {{"packed query", &inputs.packed->query},
                                   {"packed key", &inputs.packed->key},
                                   {"packed value", &inputs.packed->value}});
  }
  if (inputs.paged) tensors.insert(tensors.end(), {{"key pages", &inputs.paged->key}, {"value pages", &inputs.paged->value}});
  // An op library is handed these (arguments: alibi_slopes, sinks); naive and SDPA read the bias.
  if (inputs.alibi_slopes.defined()) {
    tensors.insert(tensors.end(), {{"alibi slopes", &inputs.alibi_slopes}, {"alibi bias", &inputs.alibi_bias}});
  }
  if (inputs.sinks.defined()) tensors.push_back({"sinks", &inputs.sinks});
  if (inputs.quantized) {  // what an op library's descale_q, ... arguments are made from
    tensors.insert(tensors.end(), {{"descale_q", &inputs.quantized->descale_q},
                                   {"descale_k", &inputs.quantized->descale_k},
                                   {"descale_v", &inputs.quantized->descale_v}});
  }
  return tensors;
}

InputGuard::InputGuard(const AttentionInputs& inputs) {
  for (const auto& [name, tensor] : watched(inputs)) sums_.push_back(fingerprint(*tensor));
}

std::string InputGuard::changed(const AttentionInputs& inputs) const {
  std::string which;
  const auto tensors = watched(inputs);
  for (std::size_t i = 0; i < tensors.size() && i < sums_.size(); ++i) {
    if (fingerprint(*tensors[i].second) != sums_[i]) which += (which.empty() ? "" : ", ") + std::string(tensors[i].first);
  }
  return which;
}

}  // namespace attnsweep
