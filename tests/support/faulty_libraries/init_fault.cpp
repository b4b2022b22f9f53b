// An op library whose static initializer misbehaves when attnsweep loads it
// (dlopen): built once per fault (CMakeLists.txt), with one of
//   ATTNSWEEP_FAULT_EXIT0  calls exit(0): the process ends "successfully"
//   ATTNSWEEP_FAULT_CRASH  a segmentation fault (SIGSEGV)
//   ATTNSWEEP_FAULT_HANG   never returns
// It registers no operator: attnsweep must refuse it before asking for one.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace {

struct Fault {
  Fault() {
#if defined(ATTNSWEEP_FAULT_EXIT0)
    std::exit(0);
#elif defined(ATTNSWEEP_FAULT_CRASH)
    ::raise(SIGSEGV);
#elif defined(ATTNSWEEP_FAULT_HANG)
    for (;;) ::pause();
#else
#error "define one of ATTNSWEEP_FAULT_EXIT0, ATTNSWEEP_FAULT_CRASH, ATTNSWEEP_FAULT_HANG"
#endif
  }
};
const Fault fault;

}  // namespace
