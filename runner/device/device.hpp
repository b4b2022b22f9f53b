#pragma once
// Which device a sweep runs on, and what it offers. No LibTorch types in the interface.
#include "runner/common/identities.hpp"

namespace attnsweep {

int cuda_device_count();
// auto -> cuda:0 when a GPU is present, else cpu; cuda -> cuda:0. Throws
// BadInputError for a GPU that is not there.
Device resolve_device(const Device& requested);
// Memory a case can use: the GPU's total memory, or the machine's RAM for the CPU.
double device_memory_bytes(const Device& device);
// Waits for all work queued on the device's current stream (no-op on the CPU).
void synchronize_device(const Device& device);

}  // namespace attnsweep
