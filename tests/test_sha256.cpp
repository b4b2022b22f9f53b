// SHA-256 against the NIST FIPS 180-4 examples.
#include <gtest/gtest.h>

#include <algorithm>

#include "runner/common/sha256.hpp"

namespace attnsweep {
namespace {

TEST(Sha256, NistVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace attnsweep

// Fed in pieces of every size (a file read a chunk at a time), the digest is the one of the whole.
TEST(Sha256, PiecesGiveTheDigestOfTheWhole) {
  std::string text;
  for (int i = 0; i < 300; ++i) text.push_back(static_cast<char>('a' + i % 26));
  for (std::size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 128u, 299u}) {
    for (std::size_t length : {0u, 1u, 55u, 56u, 64u, 119u, 120u, 300u}) {
      attnsweep::Sha256 digest;
      for (std::size_t at = 0; at < length; at += piece) digest.update(text.data() + at, std::min(piece, length - at));
      EXPECT_EQ(digest.hex(), attnsweep::sha256_hex(text.substr(0, length))) << piece << " " << length;
    }
  }
  // NIST: a million 'a', fed 1000 at a time.
  attnsweep::Sha256 million;
  const std::string thousand(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.update(thousand.data(), thousand.size());
  EXPECT_EQ(million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
