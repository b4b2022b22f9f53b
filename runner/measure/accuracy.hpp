#pragma once
// The accuracy check: a forward's output against a float64 reference of the
// same inputs, as a relative Frobenius error. The reference of one set of
// inputs is kept for the next variants of those inputs (up to 1 GiB), so a
// shape swept over seven variants computes it once.
#include <vector>

#include "runner/common/identities.hpp"
#include "runner/measure/reference_chunks.hpp"
#include "runner/variants/variant.hpp"

namespace attnsweep {

class AccuracyCheck {
 public:
  // `chunk_score_bytes`: the float64 scores of one chunk (reference_chunks.hpp).
  explicit AccuracyCheck(const Device& device, std::int64_t chunk_score_bytes = kReferenceChunkScoreBytes)
      : cuda_(device.is_cuda()), chunk_score_bytes_(chunk_score_bytes) {}

  // ||output - reference|| / ||reference||, one chunk at a time
  // (reference_chunks.hpp) so the float64 score matrix stays small. NaN or Inf
  // when the output is not finite. Throws Interrupted at a chunk's start once a
  // stop is requested (interrupt.hpp).
  double relative_error(const at::Tensor& output, const AttentionInputs& inputs);
  // New inputs: the kept reference no longer applies.
  void forget() { reference_.clear(); }

 private:
  void keep(const at::Tensor& reference);
  bool cuda_;
  std::int64_t chunk_score_bytes_;
  std::vector<at::Tensor> reference_;  // one tensor per chunk, filled by the first check
};

}  // namespace attnsweep
