#pragma once
// A variant of kind op_library, as a config declares it (docs/op-libraries.md):
// an operator of a compiled PyTorch op library (a .so, an unpacked wheel, or a
// hub kernel's folder with build/<variant>/), and how attnsweep's inputs map
// onto its arguments. LibTorch-free: runner/variants/op_library.cpp loads it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/common/errors.hpp"
#include "runner/common/mask.hpp"

namespace attnsweep {

enum class OpLayout { bhsd, bshd };  // [batch, heads, seq, head_dim] or [batch, seq, heads, head_dim]

struct OpLibrarySpec {
  std::string name;           // the variant's name in the sweep
  std::string library;        // absolute path (resolved against the config file's folder)
  std::string library_as_written;
  std::string op;             // namespace::op[.overload], or op alone when one loaded namespace has it
  OpLayout layout = OpLayout::bhsd;
  std::string causal_argument;  // bool argument that receives the case's causal flag; "" when none
  std::string scale_argument;   // float argument that receives 1/sqrt(head_dim); "" leaves the op's default
  std::map<std::string, std::string> fixed;  // other arguments: their values as written (bool, int, float, none)
  // What the op's causal flag means: PyTorch's is_causal (top_left) or
  // FlashAttention's (bottom_right, also where its windows sit).
  CausalAlignment causal_alignment = CausalAlignment::top_left;
  // Arguments that receive what attnsweep makes for a case, by the op's argument
  // name: one of generated_argument_names() (`arguments:` in the config).
  std::map<std::string, std::string> generated;
  int output = 0;             // which returned value is the attention output
  SourceLocation where;       // the variants entry, for messages
  std::string config_file;    // the config that declared it: refusals start with config_file:line:column
};

// The op-library variants the config that was loaded last declared, by name:
// the catalogue (variant_names.hpp) and the registry find them here.
void register_op_library_specs(const std::map<std::string, OpLibrarySpec>& specs);
const OpLibrarySpec* find_op_library_spec(const std::string& name);

// What `arguments:` may hand an op (docs/op-libraries.md): a variable-length
// batch's cu_seqlens_q, cu_seqlens_k (int32 tensors), max_seqlen_q, max_seqlen_k
// (ints); a paged cache's page_table and seqused_k (int32 tensors); a window's window_left and window_right
// (ints, -1 for no bound, the right 0 under a causal mask, FlashAttention's way);
// a soft-capping's softcap (a float, 0 for none: FlashAttention's); ALiBi's
// alibi_slopes and the sinks (float32 tensors, one value per query head); an
// fp8 case's descale_q, descale_k, descale_v (float32, (batch, kv_heads), the
// per-tensor descale repeated: FlashAttention-3's shape). None where the case
// has no such thing.
inline const std::vector<std::string>& generated_argument_names() {
  static const std::vector<std::string> names = {"cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
                                                 "seqused_k",    "page_table",   "window_left",  "window_right", "softcap",
                                                 "alibi_slopes", "sinks",        "descale_q",    "descale_k",
                                                 "descale_v"};
  return names;
}

inline const char* to_string(OpLayout layout) { return layout == OpLayout::bhsd ? "bhsd" : "bshd"; }

}  // namespace attnsweep
