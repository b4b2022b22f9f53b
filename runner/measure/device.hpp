#pragma once
// Which device a sweep runs on. No LibTorch types in the interface.
#include <string>

namespace attnsweep {

int cuda_device_count();
// "auto" -> "cuda:0" when a GPU is present, else "cpu"; "cuda" -> "cuda:0".
// Throws BadInputError for an unknown device or a GPU that is not there.
std::string resolve_device(const std::string& requested);
bool is_cuda_device(const std::string& device);
// "cuda:N" (a resolved device) -> N; -1 for "cpu".
int cuda_device_index(const std::string& device);
// Memory a case can use: the GPU's total memory, or the machine's RAM for "cpu".
double device_memory_bytes(const std::string& device);

}  // namespace attnsweep
