#pragma once
// What is refused before a config's YAML is built into a document: text that is
// not UTF-8 or holds control characters, a second document, runaway nesting,
// aliases that expand past any sweep; and yaml-cpp's syntax errors as one line,
// an unclosed bracket placed at the bracket rather than where the parser gave up.
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/node/node.h>

#include <string>

#include "runner/common/errors.hpp"

namespace attnsweep {

// UTF-8 text without NUL or control characters other than tab, line feed and
// carriage return; throws ConfigError at the first byte that is not.
void check_config_text(const std::string& text, const std::string& source_name);
// Walks the parser's events before the document is built: one document, at most
// 32 levels deep, at most 2^20 values with aliases expanded. Throws ConfigError.
void check_yaml_structure(const std::string& text, const std::string& source);
// A yaml-cpp syntax error as one line.
ConfigError yaml_syntax_error(const std::string& text, const std::string& source, const YAML::ParserException& error);
// The document of `text` (a config or a claims file), built once check_yaml_structure
// has passed it; a syntax error is yaml_syntax_error's one line. Throws ConfigError.
YAML::Node load_yaml(const std::string& text, const std::string& source);

}  // namespace attnsweep
