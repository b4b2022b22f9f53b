// sdpa_cudnn: scaled_dot_product_attention pinned to the cudnn_attention backend.
#include "runner/variants/sdpa_common.hpp"

namespace attnsweep {

const Variant& sdpa_cudnn_variant() {
  static const SdpaVariant instance("sdpa_cudnn", at::SDPBackend::cudnn_attention);
  return instance;
}

}  // namespace attnsweep
