#pragma once
// Shared machinery of the scaled_dot_product_attention variants: pinning one
// backend through PyTorch's global SDPA flags (saved and restored), asking
// PyTorch whether the pinned backend can run and why not.
#include <ATen/SDPBackend.h>

#include "runner/variants/variant.hpp"

namespace attnsweep {

std::string sdpa_backend_name(at::SDPBackend backend);  // math, flash_attention, ...

// Enables exactly one SDPA backend for its lifetime; restores every flag after.
class SdpaBackendGuard {
 public:
  explicit SdpaBackendGuard(std::optional<at::SDPBackend> only);  // nullopt: leave flags as they are
  ~SdpaBackendGuard();
  SdpaBackendGuard(const SdpaBackendGuard&) = delete;
  SdpaBackendGuard& operator=(const SdpaBackendGuard&) = delete;

 private:
  bool flash_, fa3_, efficient_, math_, cudnn_, overrideable_;
};

at::Tensor call_sdpa(const AttentionInputs& inputs);

// The backend PyTorch picks for these inputs under the current flags, and the
// warnings it gave while choosing (its reasons for rejecting backends).
struct BackendChoice {
  std::optional<at::SDPBackend> backend;  // nullopt: no backend can run
  std::string reason;
};
BackendChoice choose_sdpa_backend(const AttentionInputs& inputs);

// The backend whose backward an SDPA output's autograd graph runs: the fused
// backends leave their own node (ScaledDotProductFlashAttentionBackward0, ...)
// under a view node or two; the math backend leaves the nodes of its
// decomposition and no fused one. Empty when the output has no graph.
std::string sdpa_backward_backend_of(const at::Tensor& output);

// An SDPA variant pinned to one backend (or, with nullopt, PyTorch's choice).
class SdpaVariant : public Variant {
 public:
  SdpaVariant(std::string name, std::optional<at::SDPBackend> pinned) : name_(std::move(name)), pinned_(pinned) {}
  std::string name() const override { return name_; }
  Support check(const AttentionInputs& inputs) const override;
  at::Tensor forward(const AttentionInputs& inputs) const override;
  std::string sdpa_backend(const AttentionInputs& inputs) const override;
  std::string sdpa_backend_backward(const at::Tensor& output) const override { return sdpa_backward_backend_of(output); }

 private:
  Support check_sdpa(const AttentionInputs& inputs) const;  // PyTorch's own checks of the SDPA call

  std::string name_;
  std::optional<at::SDPBackend> pinned_;
};

}  // namespace attnsweep
