#pragma once
// Runs one case of a sweep. The sweep (sweep.cpp) decides which cases run and
// in what order; an executor decides where: in this process
// (InProcessExecutor) or in a worker process of its own (WorkerExecutor).
// Shards and one executor per GPU plug in here.
#include <string>

#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep::execute {

struct CaseOutcome {
  enum class Kind {
    measured,       // `result` holds the case's result; the sweep stores it
    stored,         // the result is already in the database (a worker stored it)
    interrupted,    // a stop was requested; the case in flight is dropped (--resume redoes it)
  } kind = Kind::measured;
  CaseResult result;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Never throws for a case's own failure: crashes, timeouts, unsupported
  // backends and errors are results.
  virtual CaseOutcome run(const Case& c, const std::string& trace_path) = 0;
};

}  // namespace attnsweep::execute
