#pragma once
// The numerics verdict of a case: its output against the float64 reference of
// the same inputs, judged by a bound per dtype (docs/measurement.md, "Numerics").
// A measurement tool must not store an `ok` case with a NaN output or a
// bf16-sized error in fp16 without saying so (issue 21, item 5). LibTorch-free:
// the case runner judges, the store keeps it, compare and the readers show it.
#include <optional>
#include <string>

#include "runner/common/identities.hpp"

namespace attnsweep {

enum class NumericsVerdict {
  ok,            // rel_error within its dtype's bound
  beyond_bound,  // rel_error above it
  nonfinite,     // the output holds NaN or Inf (rel_error is then NULL)
};

const char* to_string(NumericsVerdict verdict);
std::optional<NumericsVerdict> parse_numerics_verdict(const std::string& text);

// The largest relative Frobenius error a correct attention reaches in a dtype,
// with room: a few times the worst of PyTorch's own backends seen on the H200
// and the CPU (bf16 about 3e-3, fp16 about 3e-4, fp32 about 1e-6, issue 23's
// table and proofs/). compare uses the same bounds as its tolerances.
double numerics_bound(Dtype dtype);

// `rel_error` empty means the output was not finite.
NumericsVerdict judge_numerics(const std::optional<double>& rel_error, Dtype dtype);

}  // namespace attnsweep
