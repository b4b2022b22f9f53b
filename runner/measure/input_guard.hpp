#pragma once
// A fingerprint of a case's inputs, taken when they are drawn and checked after
// each variant that used them: the case runner shares one draw among the
// variants of a shape and dtype, so a variant that writes into q, k or v (an op
// library's bug) would corrupt every variant after it (issue 21, item 13). A
// variable-length batch's packed rows and a paged cache's pages are inputs too
// (flash and the memory-efficient kernel read the packed rows themselves).
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runner/variants/variant.hpp"

namespace attnsweep {

class InputGuard {
 public:
  InputGuard() = default;
  explicit InputGuard(const AttentionInputs& inputs);
  // Empty when q, k and v (and the packed rows and pages) hold what they held
  // when the guard was made, else which of them changed ("query, packed value").
  std::string changed(const AttentionInputs& inputs) const;

 private:
  // Per tensor: the sum of its elements' bit patterns read as integers, and
  // the same sum weighted by position modulo a prime (catches moved values).
  static std::array<std::int64_t, 2> fingerprint(const at::Tensor& tensor);
  // The tensors a guard watches, by name, in a fixed order.
  static std::vector<std::pair<const char*, const at::Tensor*>> watched(const AttentionInputs& inputs);
  std::vector<std::array<std::int64_t, 2>> sums_;
};

}  // namespace attnsweep
