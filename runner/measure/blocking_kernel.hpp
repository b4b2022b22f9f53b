#pragma once
// nvbench's blocking kernel: holds a stream until the host releases it, so
// that everything the host enqueues meanwhile (start event, the forward's
// launches, stop event) then runs back to back on the GPU, and the event
// interval measures the GPU, not the host's launch latency. A timeout keeps a
// forward that waits on the GPU itself (a synchronizing call) from
// deadlocking; such samples are flagged and the case falls back to unblocked
// samples. Plain CUDA runtime code, no LibTorch.
#include <cuda_runtime_api.h>

namespace attnsweep {

class StreamBlocker {
 public:
  StreamBlocker();
  ~StreamBlocker();
  StreamBlocker(const StreamBlocker&) = delete;
  StreamBlocker& operator=(const StreamBlocker&) = delete;

  // Enqueues the blocking kernel on `stream` (returns at once).
  void block(cudaStream_t stream, double timeout_ms);
  // Lets the blocked stream go on.
  void release();
  // Whether the last block ended by its timeout instead of release().
  bool timed_out() const;

 private:
  volatile int* flag_ = nullptr;      // host-mapped: the host writes, the kernel polls
  volatile int* timed_out_ = nullptr;  // host-mapped: the kernel writes, the host reads
  int* flag_device_ = nullptr;          // the same two, as the kernel addresses them
  int* timed_out_device_ = nullptr;
};

}  // namespace attnsweep
