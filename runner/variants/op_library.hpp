#pragma once
// Variants of kind op_library (docs/op-libraries.md): a compiled PyTorch op
// library loaded with dlopen, its operator found in the dispatcher, its schema
// checked against the config's mapping, and each forward a boxed call. This
// header has no LibTorch in it, so the execute layer can load the libraries
// before a run starts.
#include <string>
#include <vector>

#include "runner/variants/op_library_spec.hpp"

namespace attnsweep {

class Variant;

// Loads the library (once per process and path), finds the operator and checks
// the mapping. Throws BadInputError, one line naming the variant: a missing
// file, no loadable build in a hub folder (with each folder's reason), a
// dlopen failure (an ABI mismatch shows as an undefined symbol), no such
// operator (with the ones the library registered), or a mapping the schema
// does not take.
const Variant& load_op_library_variant(const OpLibrarySpec& spec);

// The schema of the operator a spec names, as the dispatcher prints it (after loading).
std::string op_library_schema(const OpLibrarySpec& spec);

// The shared objects a spec's library path stands for: the file itself; every
// *.so under a folder (an unpacked wheel); or, for a hub kernel's folder (one
// with build/), those of the build variant this torch prefers. `chosen` gets
// the build folder picked ("" when not a hub folder).
std::vector<std::string> op_library_files(const OpLibrarySpec& spec, std::string* chosen = nullptr);

}  // namespace attnsweep
