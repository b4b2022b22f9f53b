#include "runner/variants/fp8_inputs.hpp"

#include <ATen/ATen.h>

namespace attnsweep {

at::Tensor dequantize(const at::Tensor& fp8, const at::Tensor& descale, at::ScalarType to) {
  return (fp8.to(at::kFloat) * descale).to(to);
}

AttentionInputs dequantized(const AttentionInputs& inputs, at::ScalarType to) {
  if (!inputs.quantized) return inputs;
  AttentionInputs out = inputs;
  out.query = dequantize(inputs.query, inputs.quantized->descale_q, to);
  out.key = dequantize(inputs.key, inputs.quantized->descale_k, to);
  out.value = dequantize(inputs.value, inputs.quantized->descale_v, to);
  out.quantized = nullptr;
  return out;
}

AttentionInputs unquantized(const AttentionInputs& inputs) {
  if (!inputs.quantized) return inputs;
  AttentionInputs out = inputs;
  out.query = inputs.quantized->query;
  out.key = inputs.quantized->key;
  out.value = inputs.quantized->value;
  out.quantized = nullptr;
  return out;
}

}  // namespace attnsweep
