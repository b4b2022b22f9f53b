// An op library whose operators end the process with exit(0) when called, as a
// library's error path sometimes does. They take q, k, v like the example op,
// load cleanly, and the sweep meets them in their first case:
// - attnsweep_faults::exits0 calls exit(0);
// - attnsweep_faults::exits0_after_a_late_static first makes an object whose
//   exit-time teardown crashes, as Kineto's config thread did at exit (a
//   function-local static made mid-sweep: its destructor runs before any exit
//   handler registered earlier), then calls exit(0).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <csignal>
#include <cstdlib>

namespace {

at::Tensor exits0(const at::Tensor& q, const at::Tensor&, const at::Tensor&, bool) { std::exit(0); }

struct CrashesWhenTornDown {
  ~CrashesWhenTornDown() { std::raise(SIGSEGV); }
};

at::Tensor exits0_after_a_late_static(const at::Tensor& q, const at::Tensor&, const at::Tensor&, bool) {
  static CrashesWhenTornDown made_now;
  (void)made_now;
  std::exit(0);
}

}  // namespace

TORCH_LIBRARY(attnsweep_faults, m) {
  m.def("exits0(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
  m.def("exits0_after_a_late_static(Tensor q, Tensor k, Tensor v, bool is_causal=False) -> Tensor");
}
TORCH_LIBRARY_IMPL(attnsweep_faults, CPU, m) {
  m.impl("exits0", &exits0);
  m.impl("exits0_after_a_late_static", &exits0_after_a_late_static);
}
