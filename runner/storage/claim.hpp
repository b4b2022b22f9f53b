#pragma once
// Who runs a run (runs.owner_pid, runs.owner_host): Store claims a run for one
// process, so two processes never run one run at once (docs/reliability.md).
#include <cstdint>
#include <string>

namespace attnsweep::storage {

// A claim whose heartbeat is older than this may be taken over by another
// process, on any host (docs/reliability.md). The holder beats well within it.
inline constexpr int kClaimStaleAfterSeconds = 600;

// Who runs a run: one process on one host (runs.owner_pid, runs.owner_host).
struct Claim {
  std::int64_t pid = 0;
  std::string host;

  static Claim this_process();  // getpid() and gethostname()
  bool operator==(const Claim& other) const { return pid == other.pid && host == other.host; }
};

}  // namespace attnsweep::storage
