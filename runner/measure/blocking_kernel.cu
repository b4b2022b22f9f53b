#include "runner/measure/blocking_kernel.hpp"

#include <stdexcept>
#include <string>

namespace attnsweep {
namespace {

__device__ unsigned long long global_timer_ns() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void block_stream(volatile int* flag, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (*flag == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

}  // namespace

StreamBlocker::StreamBlocker() {
  void* flag = nullptr;
  void* timed_out = nullptr;
  check(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc (blocking flag)");
  check(cudaHostAlloc(&timed_out, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc (blocking timeout flag)");
  flag_ = static_cast<volatile int*>(flag);
  timed_out_ = static_cast<volatile int*>(timed_out);
  *flag_ = 0;
  *timed_out_ = 0;
  // Resolved once: block() sits on every sample's path.
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_device_), flag, 0), "flag pointer");
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&timed_out_device_), timed_out, 0), "timeout pointer");
}

StreamBlocker::~StreamBlocker() {
  cudaFreeHost(const_cast<int*>(flag_));
  cudaFreeHost(const_cast<int*>(timed_out_));
}

void StreamBlocker::block(cudaStream_t stream, double timeout_ms) {
  *flag_ = 0;
  *timed_out_ = 0;
  block_stream<<<1, 1, 0, stream>>>(flag_device_, timed_out_device_,
                                    static_cast<unsigned long long>(timeout_ms * 1e6));
  check(cudaGetLastError(), "blocking kernel launch");
}

void StreamBlocker::release() {
  __sync_synchronize();
  *flag_ = 1;
}

bool StreamBlocker::timed_out() const { return *timed_out_ != 0; }

}  // namespace attnsweep
