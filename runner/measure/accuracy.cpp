#include "runner/measure/accuracy.hpp"

#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "runner/common/interrupt.hpp"
#include "runner/measure/deterministic_algorithms.hpp"
#include "runner/measure/device_copy.hpp"
#include "runner/measure/reference_chunks.hpp"
#include "runner/variants/naive_attention.hpp"

namespace attnsweep {
void AccuracyCheck::keep(const at::Tensor& reference) {
  if (auto copy = copy_outside_caching_allocator(reference, cuda_)) reference_.push_back(std::move(*copy));
}

double AccuracyCheck::relative_error(const at::Tensor& output, const AttentionInputs& inputs) {
  const DeterministicAlgorithms references_are_ours(false);
  const bool keep_it = output.numel() * static_cast<std::int64_t>(sizeof(double)) <= kReferenceCacheBytes;
  // A packed output (a variable-length batch's kernels) compared in the padded layout, real rows only.
  const at::Tensor compared = inputs.packed && output.dim() == 3
                                  ? inputs.packed->unpack(output, inputs.query.size(0), inputs.query.size(2))
                                  : output;
  // Summed on the device, read once: one synchronization per case, not two per chunk.
  at::Tensor error_squares = at::zeros({}, output.options().dtype(at::kDouble));
  at::Tensor reference_squares = at::zeros_like(error_squares);
  const std::vector<ReferenceChunk> chunks = reference_chunks(inputs, chunk_score_bytes_);
  for (std::size_t index = 0; index < chunks.size(); ++index) {
    // A safe point: a Ctrl-C stops the reference here, not minutes later at its end.
    if (interrupt_requested()) throw Interrupted{};
    at::Tensor reference;
    if (index < reference_.size()) {
      reference = reference_[index];
    } else {
      reference = reference_attention(chunks[index].of(inputs));
      if (keep_it && index == reference_.size()) keep(reference);
    }
    const ReferenceChunk& chunk = chunks[index];
    const at::Tensor real = chunk.real_rows_of(reference);
    const at::Tensor difference = chunk.real_rows_of(chunk.query_side(compared)).to(at::kDouble) - real;
    error_squares += difference.pow(2).sum();
    reference_squares += real.pow(2).sum();
  }
  return std::sqrt(error_squares.item<double>()) / std::sqrt(reference_squares.item<double>());
}

}  // namespace attnsweep
