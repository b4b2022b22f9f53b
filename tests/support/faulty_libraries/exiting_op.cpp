// An op library whose operator ends the process with exit(0) when called, as a
// library's error path sometimes does: attnsweep_faults::exits0 takes q, k, v
// like the example op. It loads cleanly; the sweep meets it in its first case.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cstdlib>

namespace {

at::Tensor exits0(const at::Tensor& q, const at::Tensor&, const at::Tensor&, bool) { std::exit(0); }

}  // namespace

TORCH_LIBRARY(attnsweep_faults, m) { m.def("exits0(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor"); }
TORCH_LIBRARY_IMPL(attnsweep_faults, CPU, m) { m.impl("exits0", &exits0); }
