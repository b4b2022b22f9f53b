#pragma once
// Names for the parameterised tests whose parameter is a case: gtest's default
// prints the parameter as its bytes ("GetParam() = 184-byte object <20-3E ...>"),
// which says nothing of what failed. These say variant, shape, dtype, mask and
// pass, in a gtest name (letters, digits, underscores) and as the printed value.
#include <cctype>
#include <ostream>
#include <string>

#include "runner/common/identities.hpp"
#include "runner/plan/case.hpp"

namespace attnsweep::testing {

// "sdpa_flash_2x8_2x1x96x32_bf16_causal_forward": the case's label with every
// run of other characters one underscore, and the pass always named.
inline std::string case_test_name(const Case& c) {
  const std::string label = c.variant + " " + c.shape.label() + " " + to_string(c.dtype) + " " + c.mask.label() +
                            " " + to_string(c.pass);
  std::string name;
  for (const char ch : label) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      name += ch;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}

// What gtest prints for the parameter (ctest -N, a failure): the case's label and pass.
inline void print_case(const Case& c, std::ostream* out) { *out << c.label() << " (" << to_string(c.pass) << ")"; }

}  // namespace attnsweep::testing
