#pragma once
// Runs the cases of a sweep. The sweep (sweep.cpp) decides which cases run and
// in what order, and is the one case loop: it logs each case, stores what an
// executor measured, counts progress and keeps its claim on the run. An
// executor decides where a case runs: in this process (InProcessExecutor), in
// a worker process per case (--isolate), or on a pool of workers, one per GPU
// (--gpus; WorkerPool, device_pool.hpp). It reports what happens as events.
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "runner/measure/case_result.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep::execute {

struct QueuedCase {
  const Case* c = nullptr;
  std::string trace_path;  // empty: no trace
};
// Units of cases run back to back (a shape's inputs and reference made once),
// handed out in order; one device runs a whole unit.
using CaseQueue = std::deque<std::vector<QueuedCase>>;

// A case a worker measured and stored itself, as the worker told it on its pipe.
struct StoredCase {
  CaseStatus status = CaseStatus::ok;
  std::string result_line;            // report::one_line_result
  std::vector<std::string> warnings;
  bool kept_earlier = false;          // the run held the case already (an earlier holder's): that one was kept
};

struct CaseOutcome {
  enum class Kind {
    measured,  // `result` holds the case's result; the sweep stores it
    stored,    // a worker stored it; `stored` is what it said
  } kind = Kind::measured;
  CaseResult result;
  StoredCase stored;
};

struct CaseEvent {
  enum class Kind {
    started,      // `plan_index` was handed to `where`
    finished,     // `plan_index` ended: `outcome`
    waiting,      // about kKeepAliveSeconds passed with cases in flight: the sweep heartbeats its claim
    interrupted,  // a stop was requested; the cases in flight are dropped (--resume redoes them)
    done,         // every queued case finished
  };
  CaseEvent() = default;
  CaseEvent(Kind kind, int plan_index = -1, std::string where = "")  // not explicit: return {Kind::done}
      : kind(kind), plan_index(plan_index), where(std::move(where)) {}

  Kind kind = Kind::done;
  int plan_index = -1;
  std::string where;  // the device of a pool's worker ("cuda:1"); empty with one device
  CaseOutcome outcome;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // The cases to run; called once, before next().
  virtual void begin(CaseQueue queue) = 0;
  // Blocks until something happens. Never throws for a case's own failure:
  // crashes, timeouts, unsupported backends and errors are results.
  virtual CaseEvent next() = 0;
};

}  // namespace attnsweep::execute
