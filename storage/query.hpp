#pragma once
// `attnsweep query`: one SQL statement against a results database opened
// read-only, so user SQL can never change stored results.
#include <ostream>
#include <string>

namespace attnsweep::storage {

// Prints the result as aligned columns with a header. Throws BadInputError for
// a missing database, bad SQL, or any attempt to write.
void print_query(const std::string& db_path, const std::string& sql, std::ostream& out);

}  // namespace attnsweep::storage
