#pragma once
// The output formats a table can be written in, and their names as the command line spells them.
#include <string>
#include <vector>

namespace attnsweep::report {

enum class Format { table, csv, json, markdown };

// Throws attnsweep::BadInputError naming the allowed formats.
Format parse_format(const std::string& name);
std::string to_string(Format format);
// In the order of the enum, for help text and error messages.
const std::vector<std::string>& format_names();

}  // namespace attnsweep::report
