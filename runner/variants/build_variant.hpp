#pragma once
// Which build of a hub kernel this process can load: the folders under a
// kernel's build/ (torch211-cxx11-cu130-x86_64-linux,
// torch-stable-abi210-cu130-x86_64-linux, torch-universal, ...) parsed and
// ranked the way huggingface/kernels ranks them (kernels/variants.py,
// _check_variants and _sort_variants): same CPU and OS; a torch build of
// exactly this torch's major.minor (and C++ ABI when tagged); a stable-ABI
// build at or below this torch; CUDA of the same major and a minor not above
// this CUDA's. Preferred first: stable-ABI builds (newest ABI first), then
// torch builds (untagged before tagged), each by the highest CUDA minor, then
// noarch builds (universal last). LibTorch-free: the caller says what it runs.
#include <optional>
#include <string>
#include <vector>

namespace attnsweep {

struct BuildVariant {
  enum class Framework { torch, torch_stable_abi, noarch };
  std::string name;  // the folder's name, as given
  Framework framework = Framework::torch;
  int framework_major = 0, framework_minor = 0;  // torch211 -> 2.11; stable-abi210 -> 2.10
  std::optional<bool> cxx11_abi;                 // -cxx11 true, -cxx98 false, untagged none
  std::string backend;                           // cu, rocm, xpu, cpu, metal, ...; noarch: its name (universal)
  std::optional<int> backend_major, backend_minor;  // cu130 -> 13.0 (the last digit is the minor)
  std::string cpu, os;                           // x86_64, linux (arch builds)
};

// None for a name that is no build variant (the reason in `why` when given).
std::optional<BuildVariant> parse_build_variant(const std::string& name, std::string* why = nullptr);

// What this process is: torch 2.11 with the C++11 ABI, CUDA 13.0, x86_64 Linux.
struct BuildTarget {
  int torch_major = 0, torch_minor = 0;
  bool cxx11_abi = true;
  std::optional<int> cuda_major, cuda_minor;  // none: a CPU-only torch
  std::string cpu = "x86_64", os = "linux";
};

struct BuildVariantDecision {
  std::string name;
  bool accepted = false;
  std::string reason;  // why rejected ("" when accepted)
};

// Every name, accepted ones first in preference order, then the rejected ones
// with their reasons (names that are not build variants among them).
std::vector<BuildVariantDecision> rank_build_variants(const std::vector<std::string>& names, const BuildTarget& target);

}  // namespace attnsweep
