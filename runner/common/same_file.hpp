#pragma once
// Whether two paths name one file: the checks that refuse an output over an
// input (publish, nightly, report -o) ask it.
#include <string>

namespace attnsweep {

// True where both exist and are one file (hard links and symbolic links
// included), or where neither need exist yet but both resolve to one path.
bool same_file(const std::string& a, const std::string& b);

}  // namespace attnsweep
