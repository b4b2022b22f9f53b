// exit() as the attnsweep executable sees it, and every library it loads, op
// libraries included: the executable exports its symbols (ENABLE_EXPORTS), so
// their calls bind here before libc. A live ExitGuard takes the call first
// (exit_guard.hpp says why not only from an atexit handler); otherwise libc's
// exit() runs as usual. Linked into the executable alone: a test binary keeps libc's.
#include <dlfcn.h>

#include <cstdlib>

#include "runner/common/exit_guard.hpp"

extern "C" [[noreturn]] void exit(int status) {
  attnsweep::exit_called();  // returns only when no guard is alive
  using ExitFunction = void (*)(int);
  static const auto libc_exit = reinterpret_cast<ExitFunction>(dlsym(RTLD_NEXT, "exit"));
  if (libc_exit) libc_exit(status);
  std::_Exit(status);  // (no libc exit found: cannot happen with a dynamic libc)
}
