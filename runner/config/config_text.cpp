#include "runner/config/config_text.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

// A config nests at most 5 levels (top, shapes list, block, zip list, row); far
// deeper is a runaway bracket, refused long before yaml-cpp's recursion limit.
constexpr int kMaxNesting = 32;
// Values (scalars, keys included) in a config once its YAML aliases are expanded:
// an alias costs a few bytes and repeats its anchor's whole list, so the file's
// 16 MiB says nothing about the size (a 38 KB file repeated one 5,000-value
// exclude rule 599 times). A million is past any sweep, a variable-length
// batch's listed lengths included (at most kMaxSequences each, shape_reader.cpp).
constexpr std::size_t kMaxExpandedValues = std::size_t(1) << 20;

std::string nesting_message() {
  return "lists and mappings nested deeper than " + std::to_string(kMaxNesting) +
         " levels; a config needs at most 5 (a '[' or '{' repeated by mistake?)";
}

// Walks the parser's events before the document is built: refuses a second
// document (yaml-cpp's Load would silently drop it), runaway nesting and more
// than kMaxExpandedValues values with aliases expanded, each where it starts.
class StructureCheck : public YAML::EventHandler {
 public:
  explicit StructureCheck(const std::string& source) : source_(source) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      throw ConfigError(source_, location(mark), "",
                        "a second YAML document starts here; a config is one document: remove this '---' "
                        "and what follows, or put it in a file of its own");
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto found = anchor_values_.find(anchor);
    add(mark, found == anchor_values_.end() ? 1 : found->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    enter(mark, anchor);
  }
  void OnSequenceEnd() override { leave(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    enter(mark, anchor);
  }
  void OnMapEnd() override { leave(); }

 private:
  struct Open {
    int position;  // YAML::Mark::pos
    int level;
    YAML::anchor_t anchor;  // 0: none
    std::size_t values_before;  // values_ when it opened
  };
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != 0) anchor_values_[anchor] = 1;
    add(mark, 1);
  }
  // `count` more values; an alias adds its anchor's, so repeats count as written out.
  void add(const YAML::Mark& mark, std::size_t count) {
    values_ += count;
    if (values_ > kMaxExpandedValues) {
      throw ConfigError(source_, location(mark), "",
                        "the config holds more than " + std::to_string(kMaxExpandedValues) +
                            " values once its YAML aliases (*name) are expanded, each alias counting the values of "
                            "its anchor (&name); a sweep needs far fewer: an alias repeated, or a list written where "
                            "a value was meant?");
    }
  }
  void leave() {
    const Open closed = open_.back();
    open_.pop_back();
    if (closed.anchor != 0) anchor_values_[closed.anchor] = values_ - closed.values_before;
  }
  // A collection that starts where the enclosing one starts is on the same level:
  // yaml-cpp opens a mapping and a list at each '[' of an unclosed run of them.
  void enter(const YAML::Mark& mark, YAML::anchor_t anchor) {
    const bool same = !open_.empty() && open_.back().position == mark.pos;
    const int level = open_.empty() ? 1 : open_.back().level + (same ? 0 : 1);
    if (level > kMaxNesting) throw ConfigError(source_, location(mark), "", nesting_message());
    open_.push_back({mark.pos, level, anchor, values_});
  }
  const std::string& source_;
  int documents_ = 0;
  std::vector<Open> open_;
  std::size_t values_ = 0;                              // so far, aliases expanded
  std::map<YAML::anchor_t, std::size_t> anchor_values_;  // an anchored node's values, aliases in it expanded
};

// A '[' or '{' that opened a flow collection, and the top-level key it is the value of.
struct OpenBracket {
  SourceLocation where;
  char bracket = '[';
  std::string key;
};

// "variants" for a bracket after "variants: " at the start of a line; "" otherwise
// (a nested key would need its parents to be named the house way).
std::string top_level_key(const std::string& before) {
  const auto colon = before.find_last_not_of(" \t");
  if (colon == std::string::npos || colon == 0 || before[colon] != ':') return "";
  const std::string key = before.substr(0, before.find_last_not_of(" \t", colon - 1) + 1);
  if (key.empty() || std::strchr(" \t-#?", key[0]) != nullptr) return "";
  return key.find_first_of(":#'\"[]{},") == std::string::npos ? key : "";
}

// yaml-cpp reports an unclosed '[' or '{' where it gave up looking for the
// closing one, often lines later or at the end of the file. This finds the
// bracket itself: the innermost one still open at `stop`. A light scanner
// (quotes and comments skipped, brackets counted only where a value starts),
// used only to place that one message.
std::optional<OpenBracket> unclosed_bracket(const std::string& text, SourceLocation stop) {
  std::vector<OpenBracket> open;
  char quote = 0;  // the quote character of a scalar that is still open, across lines
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    char previous = 0;  // last non-space character of this line outside quotes; 0 at its start
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (stop.line > 0 && (number > stop.line || (number == stop.line && static_cast<int>(i) + 1 >= stop.column))) {
        return open.empty() ? std::nullopt : std::optional<OpenBracket>(open.back());
      }
      const char c = line[i];
      if (quote == '"') {
        if (c == '\\') ++i;
        else if (c == '"') quote = 0;
        continue;
      }
      if (quote == '\'') {
        if (c == '\'' && i + 1 < line.size() && line[i + 1] == '\'') ++i;
        else if (c == '\'') quote = 0;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') continue;
      const bool value_starts = previous == 0 || std::strchr(":-,[{?", previous) != nullptr;
      if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) break;
      if ((c == '"' || c == '\'') && value_starts) {
        quote = c;
      } else if ((c == '[' || c == '{') && value_starts) {
        open.push_back({{number, static_cast<int>(i) + 1}, c, open.empty() ? top_level_key(line.substr(0, i)) : ""});
      } else if ((c == ']' || c == '}') && !open.empty()) {
        open.pop_back();
      }
      previous = c;
    }
  }
  return open.empty() ? std::nullopt : std::optional<OpenBracket>(open.back());
}

}  // namespace

void check_yaml_structure(const std::string& text, const std::string& source) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  StructureCheck check(source);
  while (parser.HandleNextDocument(check)) {
  }
}

// A yaml-cpp syntax error as one line; an unclosed bracket is placed at the bracket.
ConfigError yaml_syntax_error(const std::string& text, const std::string& source, const YAML::ParserException& error) {
  if (dynamic_cast<const YAML::DeepRecursion*>(&error)) return ConfigError(source, location(error.mark), "", nesting_message());
  if (error.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW || error.msg == YAML::ErrorMsg::END_OF_MAP_FLOW) {
    const SourceLocation noticed = location(error.mark);
    if (const auto bracket = unclosed_bracket(text, noticed)) {
      const char closing = bracket->bracket == '[' ? ']' : '}';
      std::string message = std::string("YAML syntax error: this '") + bracket->bracket + "' is never closed";
      message += noticed.line > 0 ? " (the parser reached line " + std::to_string(noticed.line) + ", column " +
                                        std::to_string(noticed.column) + " without finding its '" + closing + "')"
                                  : "";
      return ConfigError(source, bracket->where, bracket->key, message + "; add the '" + closing + "'");
    }
  }
  return ConfigError(source, location(error.mark), "", "YAML syntax error: " + error.msg);
}

YAML::Node load_yaml(const std::string& text, const std::string& source) {
  try {
    check_yaml_structure(text, source);
    return YAML::Load(text);
  } catch (const YAML::ParserException& error) {
    throw yaml_syntax_error(text, source, error);
  }
}

// YAML must be UTF-8 text; name the first byte that is not. A NUL would cut the
// stored config_yaml short; other control characters are not YAML (tab, line
// feed and carriage return are).
void check_config_text(const std::string& text, const std::string& source_name) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (!valid) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", byte);
      throw ConfigError(source_name, {line, column}, "",
                        std::string("not valid UTF-8 (byte ") + hex + "); save the config as UTF-8 text");
    }
    if (byte == 0) {
      throw ConfigError(source_name, {line, column}, "", "a NUL byte (0x00); a config is text: remove it");
    }
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", byte);
      throw ConfigError(source_name, {line, column}, "",
                        std::string("a control character (byte ") + hex + "), which YAML does not allow; remove it");
    }
    if (byte == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += length;
  }
}

}  // namespace attnsweep
