#pragma once
// The FLOP and byte conventions behind TFLOP/s and bandwidth (docs/schema.md).
#include <cstdint>
#include <set>
#include <string>

#include "runner/plan/case.hpp"

namespace attnsweep {

// Stored with every run so numbers from different conventions are never mixed.
extern const char* const kFlopConvention;

// (query, key) pairs that take part, the ones the mask lets through: Sq*Skv, or
// with a causal mask aligned to the top left (PyTorch's is_causal) the sum over
// query rows i of min(i + 1, Skv); bottom right min(i + 1 + Skv - Sq, Skv); a
// window clips each row to its keys (Mask::keys_of_row). A bool is is_causal.
// Per sequence of a uniform batch; a variable-length batch's is the sum over its sequences.
double attended_pairs(const Shape& shape, const Mask& mask);
// Forward FLOPs: two matrix products of 2*D FLOPs per attended pair and head.
double forward_flops(const Shape& shape, const Mask& mask);
// FLOPs of one timed pass, FlashAttention's convention: a backward is 2.5 forwards (five
// matrix products of the forward's size against the forward's two), a training step of the
// layer (forward_backward) 3.5.
double flops_per_forward_multiple(Pass pass);
double pass_flops(const Shape& shape, const Mask& mask, Pass pass);
// Fewest bytes a forward must move: read q, k, v once and write the output once;
// with a sliding window, only the keys and values some query sees (a window of
// 4096 keys back over a 128k cache reads 4096 + Sq of them, bottom right).
double forward_min_bytes(const Shape& shape, Dtype dtype, const Mask& mask = Mask(false));
// Fewest bytes of one timed pass: the forward's; a backward reads q, k, v, the
// output and its gradient and writes dq, dk, dv; a training step reads q, k, v
// and the output's gradient and writes the output, dq, dk, dv: the same count.
double pass_min_bytes(const Shape& shape, Dtype dtype, Pass pass, const Mask& mask = Mask(false));
// The convention a run stores (runs.flop_convention): kFlopConvention, plus the
// passes' multiples when the run has a pass other than forward. Forward-only
// runs keep the text they always had, so compare finds no difference with
// earlier runs; a run with backward passes says how its numbers were made, and
// one with bottom-right causal masks or windows how their pairs and bytes count.
// A run with variable-length batches adds how their sums are made, one with
// score modifications that they add none.
struct ConventionFacts {  // what a run has that the convention must explain
  bool backward_passes = false;
  bool serving_masks = false;     // bottom-right causal masks or windows
  bool variable_lengths = false;
  bool value_head_dims = false;   // head_dim_v other than head_dim
  std::set<std::string> score_mods;  // the kScoreModKeys some case has (runner/common/score_mod.hpp)
  bool fp8 = false;
};
std::string flop_convention(const ConventionFacts& run);

}  // namespace attnsweep
