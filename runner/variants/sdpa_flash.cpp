// sdpa_flash: scaled_dot_product_attention pinned to the flash_attention backend.
#include "runner/variants/sdpa_common.hpp"

namespace attnsweep {

const Variant& sdpa_flash_variant() {
  static const SdpaVariant instance("sdpa_flash", at::SDPBackend::flash_attention);
  return instance;
}

}  // namespace attnsweep
