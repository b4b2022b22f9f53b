// Preloaded into `attnsweep nightly` (LD_PRELOAD) by a test: sends the process
// SIGTERM at the moment the nightly's sweep has ended, deterministically. The
// nightly makes its scratch folder (mkdtemp "attnsweep-nightly-XXXXXX") right
// after the sweep; this mkdtemp raises SIGTERM first, then does its job.
#include <dlfcn.h>
#include <signal.h>

#include <cstring>

extern "C" char* mkdtemp(char* pattern) {
  using Real = char* (*)(char*);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "mkdtemp"));
  if (pattern && std::strstr(pattern, "attnsweep-nightly-")) ::raise(SIGTERM);
  return real(pattern);
}
