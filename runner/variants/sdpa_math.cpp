// sdpa_math: scaled_dot_product_attention pinned to the math backend.
#include "runner/variants/sdpa_common.hpp"

namespace attnsweep {

const Variant& sdpa_math_variant() {
  static const SdpaVariant instance("sdpa_math", at::SDPBackend::math);
  return instance;
}

}  // namespace attnsweep
