// sdpa_auto: scaled_dot_product_attention with PyTorch's own backend choice,
// which is recorded with the case.
#include "runner/variants/sdpa_common.hpp"

namespace attnsweep {

const Variant& sdpa_auto_variant() {
  static const SdpaVariant instance("sdpa_auto", std::nullopt);
  return instance;
}

}  // namespace attnsweep
