// sdpa_efficient: scaled_dot_product_attention pinned to the efficient_attention backend.
#include "runner/variants/sdpa_common.hpp"

namespace attnsweep {

const Variant& sdpa_efficient_variant() {
  static const SdpaVariant instance("sdpa_efficient", at::SDPBackend::efficient_attention);
  return instance;
}

}  // namespace attnsweep
