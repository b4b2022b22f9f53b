#pragma once
// PyTorch's deterministic algorithms (torch.use_deterministic_algorithms) on or
// off for a scope, restored after (issue 36, `deterministic:`). A case with
// `deterministic: true` runs its variant under DeterministicAlgorithms(true); the
// float64 references are attnsweep's own work, not the case's, and run under
// DeterministicAlgorithms(false) whatever the case asked.
#include <ATen/Context.h>

#include <string>

namespace attnsweep {

class DeterministicAlgorithms {
 public:
  explicit DeterministicAlgorithms(bool on)
      : was_on_(at::globalContext().deterministicAlgorithms()),
        was_warn_only_(at::globalContext().deterministicAlgorithmsWarnOnly()) {
    at::globalContext().setDeterministicAlgorithms(on, /*warn_only=*/false);
  }
  ~DeterministicAlgorithms() { at::globalContext().setDeterministicAlgorithms(was_on_, was_warn_only_); }
  DeterministicAlgorithms(const DeterministicAlgorithms&) = delete;
  DeterministicAlgorithms& operator=(const DeterministicAlgorithms&) = delete;

 private:
  bool was_on_, was_warn_only_;
};

// Whether PyTorch refused an operation because deterministic algorithms are on:
// one without a deterministic implementation (its alert), or cuBLAS without
// CUBLAS_WORKSPACE_CONFIG. Such a case is unsupported, with PyTorch's words.
inline bool refused_for_determinism(const std::string& message) {
  return message.find("does not have a deterministic implementation") != std::string::npos ||
         message.find("Deterministic behavior was enabled") != std::string::npos;
}

}  // namespace attnsweep
