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
  const at::ScalarType bits = tensor.element_size() == 2 ? at::kShort : at::kInt;
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

InputGuard::InputGuard(const AttentionInputs& inputs)
    : sums_{fingerprint(inputs.query), fingerprint(inputs.key), fingerprint(inputs.value)} {}

std::string InputGuard::changed(const AttentionInputs& inputs) const {
  const at::Tensor* tensors[] = {&inputs.query, &inputs.key, &inputs.value};
  const char* names[] = {"query", "key", "value"};
  std::string which;
  for (int i = 0; i < 3; ++i) {
    if (fingerprint(*tensors[i]) != sums_[static_cast<std::size_t>(i)]) which += (which.empty() ? "" : ", ") + std::string(names[i]);
  }
  return which;
}

}  // namespace attnsweep
