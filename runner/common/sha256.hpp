#pragma once
// SHA-256 of a byte string, as lowercase hex (FIPS 180-4). Used to fingerprint
// config files. Written here rather than linking OpenSSL because the CUDA
// image we build in has no OpenSSL headers; checked against NIST vectors.
#include <string>

namespace attnsweep {

std::string sha256_hex(const std::string& data);

}  // namespace attnsweep
