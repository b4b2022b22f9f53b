// libFuzzer target for the config loader and the plan: any input must either
// load or be rejected with BadInputError (a clear message); anything else,
// a crash, a hang or another exception, is a bug. `make fuzz` runs it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "runner/common/errors.hpp"
#include "runner/config/config.hpp"
#include "runner/plan/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const attnsweep::Config config = attnsweep::parse_config(text, "fuzz.yaml");
    attnsweep::make_plan(config);
  } catch (const attnsweep::BadInputError&) {
    // Rejected with a message: the expected outcome for most inputs.
  }
  return 0;
}
