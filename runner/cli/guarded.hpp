#pragma once
// Runs a command body and maps what it throws to one stderr line and an exit
// code (runner/common/errors.hpp): the one place where errors become codes.
#include <iostream>
#include <string>

#include "runner/common/errors.hpp"

namespace attnsweep::cli {

template <typename Body>
int guarded(const std::string& prefix, Body body) {
  try {
    return body();
  } catch (const BadInputError& error) {
    std::cerr << prefix << error.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& error) {
    std::cerr << prefix << error.what() << "\n";
    return kExitRuntimeFailure;
  }
}

}  // namespace attnsweep::cli
