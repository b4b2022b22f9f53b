#pragma once
// SHA-256 of a byte string, as lowercase hex (FIPS 180-4). Used to fingerprint
// config files and op libraries. Written here rather than linking OpenSSL because the CUDA
// image we build in has no OpenSSL headers; checked against NIST vectors.
#include <array>
#include <cstdint>
#include <string>

namespace attnsweep {

std::string sha256_hex(const std::string& data);

// The same, fed in pieces (a file read a chunk at a time); hex() ends it.
class Sha256 {
 public:
  Sha256();
  void update(const char* data, std::size_t size);
  std::string hex();

 private:
  std::array<std::uint32_t, 8> state_;
  std::array<unsigned char, 64> block_{};
  std::size_t filled_ = 0;
  std::uint64_t length_ = 0;
};

}  // namespace attnsweep
