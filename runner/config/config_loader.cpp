// YAML -> validated Config. Every rejection names the file, line, column, key
// and what is allowed, and happens before anything runs.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "runner/common/file_kind.hpp"
#include "runner/common/identities.hpp"
#include "runner/common/sha256.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config.hpp"
#include "runner/config/sequence_lengths.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep {

namespace {

constexpr std::int64_t kMaxDimension = std::int64_t(1) << 24;
// A config nests at most 5 levels (top, shapes list, block, zip list, row); far
// deeper is a runaway bracket, refused long before yaml-cpp's recursion limit.
constexpr int kMaxNesting = 32;
// Values (scalars, keys included) in a config once its YAML aliases are expanded:
// an alias costs a few bytes and repeats its anchor's whole list, so the file's
// 16 MiB says nothing about the size (a 38 KB file repeated one 5,000-value
// exclude rule 599 times). A million is past any sweep, a variable-length
// batch's listed lengths included (at most kMaxSequences each).
constexpr std::size_t kMaxExpandedValues = std::size_t(1) << 20;
// Sequences in one variable-length batch, listed or drawn: each case holds its
// lengths, so a batch of millions is gigabytes before anything runs.
constexpr std::int64_t kMaxSequences = std::int64_t(1) << 19;
// Exclude rules at most: every case is checked against every rule (100,000
// cases x 1,000 rules take about 2 s of `plan`); a rule takes lists of values.
constexpr std::size_t kMaxExcludeRules = 1000;
// measure.energy_window_ms at most: a minute of back-to-back passes per case is
// far past what the counter needs; more is a unit mistake (seconds for ms).
constexpr double kMaxEnergyWindowMs = 60000;

const std::vector<std::string> kTopLevelKeys = {"name",   "description", "device", "seed",    "variants", "dtypes",
                                                "causal", "window",      "passes", "shapes",  "exclude", "measure"};
const std::vector<std::string> kWindowKeys = {"left", "right"};
const char* const kCausalValues = "true (top_left), false, top_left or bottom_right";
// zip last: a zip row takes every key before it but varlen.
const std::vector<std::string> kShapeKeys = {"batch",     "heads",      "kv_heads", "seq_len",   "seq_len_q",
                                             "seq_len_kv", "head_dim",  "page_size", "varlen",   "zip"};
const std::vector<std::string> kVarlenKeys = {"seq_len_q", "seq_len_kv"};
const std::vector<std::string> kLengthDrawKeys = {"distribution", "min", "max", "mean", "stdev", "seed"};
const std::vector<std::string> kOpLibraryKeys = {"name",   "kind",  "library", "op",     "layout",           "causal",
                                                 "scale",  "fixed", "output",  "arguments", "causal_alignment"};
const std::vector<std::string> kExcludeKeys = {"variant",  "dtype",   "causal",    "window",   "pass",
                                               "batch",    "heads",   "kv_heads",  "seq_len",
                                               "seq_len_q", "seq_len_kv", "head_dim", "page_size"};

SourceLocation location(const YAML::Mark& mark) {
  if (mark.line < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

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

void check_structure(const std::string& text, const std::string& source) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  StructureCheck check(source);
  while (parser.HandleNextDocument(check)) {
  }
}

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

// A yaml-cpp syntax error as one line; an unclosed bracket is placed at the bracket.
ConfigError syntax_error(const std::string& text, const std::string& source, const YAML::ParserException& error) {
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

class Loader {
 public:
  explicit Loader(std::string source) : source_(std::move(source)) {}

  Config load(const std::string& text) {
    YAML::Node root;
    try {
      check_structure(text, source_);
      root = YAML::Load(text);
    } catch (const YAML::ParserException& error) {
      throw syntax_error(text, source_, error);
    }
    if (!root || root.IsNull()) {
      fail(root, "", "the file is empty; expected a mapping with keys " + text::join(kTopLevelKeys, ", "));
    }
    if (!root.IsMap()) fail(root, "", "expected a mapping at the top level with keys " + text::join(kTopLevelKeys, ", "));
    check_keys(root, "", kTopLevelKeys);

    Config config;
    config.source_path = source_;
    config.yaml_text = text;
    if (root["name"]) config.name = scalar_string(root["name"], "name");
    if (root["description"]) config.description = scalar_string(root["description"], "description");
    if (root["device"]) config.device = device(root["device"]);
    if (root["seed"]) config.seed = static_cast<std::uint64_t>(integer(root["seed"], "seed", 0, LLONG_MAX));

    require(root, "variants", "a list of variant names, or 'all'");
    config.variants = variants(root["variants"], config.op_libraries);
    register_op_library_specs(config.op_libraries);  // the catalogue and registry find them by name
    require(root, "dtypes", "a list of " + text::join(dtype_names(), ", "));
    for (const auto& dtype : names(root["dtypes"], "dtypes", dtype_names())) config.dtypes.push_back(*parse_dtype(dtype));
    const std::vector<CausalAlignment> alignments =
        root["causal"] ? causal_alignments(root["causal"], "causal") : std::vector<CausalAlignment>{CausalAlignment::top_left};
    config.masks = masks(alignments, root["window"]);
    if (root["passes"]) {
      config.passes_where = location(root["passes"].Mark());
      config.passes = passes(root["passes"]);
    }

    require(root, "shapes", "a mapping of shape axes, or a list of such mappings");
    config.shapes_where = location(root["shapes"].Mark());
    config.shapes = shapes(root["shapes"], config.seed);
    if (root["exclude"]) {
      std::vector<std::string> variant_values = variant_names();
      for (const auto& [name, spec] : config.op_libraries) variant_values.push_back(name);
      config.exclude = excludes(root["exclude"], variant_values);
    }
    if (root["measure"]) config.measure = measure(root["measure"]);
    return config;
  }

 private:
  std::string source_;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& message) const {
    throw ConfigError(source_, node ? location(node.Mark()) : SourceLocation{}, key, message);
  }

  void require(const YAML::Node& map, const std::string& key, const std::string& allowed) const {
    if (!map[key]) fail(map, key, "missing; expected " + allowed);
  }

  // Unknown keys are errors, with the nearest valid key suggested.
  void check_keys(const YAML::Node& map, const std::string& prefix, const std::vector<std::string>& allowed) const {
    std::set<std::string> seen;
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();
      const std::string full = prefix.empty() ? key : prefix + "." + key;
      if (!seen.insert(key).second) fail(entry.first, full, "duplicate key");
      if (!contains(allowed, key)) {
        const std::string home = belongs_elsewhere(key, prefix);
        const std::string suggestion = text::nearest(key, allowed);
        std::string message = "unknown key";
        message += !home.empty()          ? "; " + home + "."
                   : suggestion.empty() ? "."
                                        : "; did you mean '" + suggestion + "'?";
        fail(entry.first, full, message + " Allowed: " + text::join(allowed, ", "));
      }
    }
  }

  // Where a key that is unknown under `prefix` belongs instead ("" when nowhere):
  // a shape axis or a measure setting written at the top level, or a top-level
  // key indented under another one.
  static std::string belongs_elsewhere(const std::string& key, const std::string& prefix) {
    if (prefix.empty() && contains(kShapeKeys, key)) {
      return "'" + key + "' is a shape axis and belongs under 'shapes:', e.g. shapes: {batch: [1, 8], heads: 16, "
             "seq_len: 1024, head_dim: 64}";
    }
    if (prefix.empty() && contains(MeasureSettings::keys(), key)) {
      return "'" + key + "' is a measure setting and belongs under 'measure:', e.g. measure: {" + key + ": ...}";
    }
    if (!prefix.empty() && contains(kTopLevelKeys, key)) {
      return "'" + key + "' belongs at the top level, not under '" + prefix + "' (check the indentation)";
    }
    return "";
  }

  std::string scalar_string(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a string");
    // A "\0" escape would cut the name short in SQLite and in C strings.
    if (node.Scalar().find('\0') != std::string::npos) fail(node, key, "contains a NUL character (\\0); remove it");
    return node.Scalar();
  }

  std::int64_t integer(const YAML::Node& node, const std::string& key, std::int64_t minimum,
                       std::int64_t maximum) const {
    if (!node.IsScalar()) fail(node, key, "expected an integer, got a " + kind(node));
    const std::string& raw = node.Scalar();
    const std::string range = "must be between " + std::to_string(minimum) + " and " + std::to_string(maximum);
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(raw, &used, 10);
    } catch (const std::out_of_range&) {
      fail(node, key, "out of range: " + range + ", got " + raw);  // past the 64-bit range
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != raw.size()) fail(node, key, "expected an integer, got '" + raw + "'");
    if (value < minimum || value > maximum) fail(node, key, range + ", got " + raw);
    return value;
  }

  // A number above `minimum` (or at least `minimum` when inclusive).
  double number(const YAML::Node& node, const std::string& key, double minimum, bool inclusive = false) const {
    if (!node.IsScalar()) fail(node, key, "expected a number, got a " + kind(node));
    const std::string& raw = node.Scalar();
    const std::string range = std::string(inclusive ? "must be at least " : "must be greater than ") + text::fixed(minimum, 0);
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(raw, &used);
    } catch (const std::out_of_range&) {
      fail(node, key, "out of range: a number's size must lie between about 1e-308 and 1e308, got " + raw + "; " + range);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != raw.size() || !(value == value)) fail(node, key, "expected a number, got '" + raw + "'");
    if (inclusive ? !(value >= minimum) : !(value > minimum)) fail(node, key, range + ", got " + raw);
    return value;
  }

  bool boolean(const YAML::Node& node, const std::string& key) const {
    if (node.IsScalar()) {
      const std::string& raw = node.Scalar();
      if (raw == "true" || raw == "True") return true;
      if (raw == "false" || raw == "False") return false;
      fail(node, key, "expected true or false, got '" + raw + "'");
    }
    fail(node, key, "expected true or false, got a " + kind(node));
  }

  static std::string kind(const YAML::Node& node) {
    if (node.IsMap()) return "mapping";
    if (node.IsSequence()) return "list";
    if (node.IsNull()) return "null";
    return "scalar";
  }

  // A scalar or a non-empty list of scalars.
  std::vector<YAML::Node> items(const YAML::Node& node, const std::string& key) const {
    std::vector<YAML::Node> out;
    if (node.IsScalar()) {
      out.push_back(node);
    } else if (node.IsSequence()) {
      for (const auto& item : node) {
        if (!item.IsScalar()) fail(item, key, "expected a scalar list item, got a " + kind(item));
        out.push_back(item);
      }
      if (out.empty()) fail(node, key, "the list is empty; give at least one value");
    } else {
      fail(node, key, "expected a value or a list of values, got a " + kind(node));
    }
    return out;
  }

  std::vector<std::string> names(const YAML::Node& node, const std::string& key,
                                 const std::vector<std::string>& allowed) const {
    std::vector<std::string> out;
    std::set<std::string> seen;  // a set: a list of thousands is read in a moment
    for (const auto& item : items(node, key)) {
      const std::string value = item.Scalar();
      if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
        const std::string suggestion = text::nearest(value, allowed);
        std::string message = "unknown value '" + value + "'";
        message += suggestion.empty() ? "." : "; did you mean '" + suggestion + "'?";
        fail(item, key, message + " Allowed: " + text::join(allowed, ", "));
      }
      if (seen.insert(value).second) out.push_back(value);
    }
    return out;
  }

  // `passes`: pass names in the order written, each once (a pass listed twice is
  // a mistake, not a second measurement of it).
  std::vector<Pass> passes(const YAML::Node& node) const {
    std::vector<Pass> out;
    for (const auto& item : items(node, "passes")) {
      const std::string value = names(item, "passes", pass_names()).front();
      const Pass pass = *parse_pass(value);
      if (std::find(out.begin(), out.end(), pass) != out.end()) {
        fail(item, "passes", "'" + value + "' is listed twice; give each pass once. Allowed: " + text::join(pass_names(), ", "));
      }
      out.push_back(pass);
    }
    return out;
  }

  // Names of the catalogue, and mappings of kind op_library (docs/op-libraries.md).
  std::vector<std::string> variants(const YAML::Node& node, std::map<std::string, OpLibrarySpec>& op_libraries) const {
    if (node.IsScalar() && node.Scalar() == "all") return variant_names();
    if (!node.IsSequence()) return names(node, "variants", variant_names());
    std::vector<std::string> out;
    int index = 0;
    for (const auto& item : node) {
      const std::string key = "variants[" + std::to_string(index++) + "]";
      if (item.IsMap()) {
        OpLibrarySpec spec = op_library(item, key);
        if (op_libraries.count(spec.name) || contains(out, spec.name)) {
          fail(item["name"], key + ".name", "'" + spec.name + "' names two variants; give each its own name");
        }
        out.push_back(spec.name);
        op_libraries[spec.name] = std::move(spec);
      } else {
        for (const auto& name : names(item, "variants", variant_names())) {
          if (!contains(out, name)) out.push_back(name);
        }
      }
    }
    if (out.empty()) fail(node, "variants", "the list is empty; give at least one value");
    return out;
  }

  OpLibrarySpec op_library(const YAML::Node& node, const std::string& key) const {
    check_keys(node, key, kOpLibraryKeys);
    for (const char* needed : {"name", "kind", "library", "op"}) {
      if (!node[needed]) {
        fail(node, key + "." + needed, "missing; a variant of kind op_library needs name, kind, library and op "
                                       "(docs/op-libraries.md)");
      }
    }
    OpLibrarySpec spec;
    spec.where = location(node.Mark());
    spec.config_file = source_;
    const std::string kind_name = scalar_string(node["kind"], key + ".kind");
    if (kind_name != "op_library") fail(node["kind"], key + ".kind", "unknown kind '" + kind_name + "'; allowed: op_library");
    spec.name = scalar_string(node["name"], key + ".name");
    const bool name_ok = !spec.name.empty() && spec.name.size() <= 64 &&
                         std::all_of(spec.name.begin(), spec.name.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                         });
    if (!name_ok) {
      fail(node["name"], key + ".name", "'" + spec.name + "' is not a variant name; letters, digits, '_', '-' and '.', "
                                        "1 to 64 characters");
    }
    if (contains(variant_names(), spec.name) || (find_variant_info(spec.name) != nullptr && !find_op_library_spec(spec.name))) {
      fail(node["name"], key + ".name", "'" + spec.name + "' is a built-in variant; give the op library another name");
    }
    spec.library_as_written = scalar_string(node["library"], key + ".library");
    if (spec.library_as_written.empty()) fail(node["library"], key + ".library", "empty; give a path");
    std::filesystem::path library(spec.library_as_written);
    if (library.is_relative()) {
      // Relative to the config file's folder, so a config travels with its libraries.
      library = std::filesystem::absolute(std::filesystem::path(source_).parent_path() / library).lexically_normal();
    }
    spec.library = library.string();
    spec.op = scalar_string(node["op"], key + ".op");
    static const std::regex op_name("([A-Za-z_][A-Za-z0-9_]*::)?[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)?");
    if (!std::regex_match(spec.op, op_name)) {
      fail(node["op"], key + ".op", "'" + spec.op + "' is not an operator name; namespace::op, namespace::op.overload "
                                    "or op");
    }
    if (node["layout"]) {
      const std::string layout = scalar_string(node["layout"], key + ".layout");
      if (layout != "bhsd" && layout != "bshd") {
        fail(node["layout"], key + ".layout", "unknown layout '" + layout + "'; allowed: bhsd ([batch, heads, seq, "
                                              "head_dim]), bshd ([batch, seq, heads, head_dim])");
      }
      spec.layout = layout == "bhsd" ? OpLayout::bhsd : OpLayout::bshd;
    }
    if (node["causal"]) spec.causal_argument = scalar_string(node["causal"], key + ".causal");
    if (node["scale"]) spec.scale_argument = scalar_string(node["scale"], key + ".scale");
    if (node["output"]) spec.output = static_cast<int>(integer(node["output"], key + ".output", 0, 63));
    if (node["fixed"]) {
      const YAML::Node& fixed = node["fixed"];
      if (!fixed.IsMap()) fail(fixed, key + ".fixed", "expected a mapping of argument names to values");
      for (const auto& entry : fixed) {
        const std::string argument = entry.first.Scalar();
        spec.fixed[argument] = scalar_string(entry.second, key + ".fixed." + argument);
      }
    }
    if (node["causal_alignment"]) {
      const std::string alignment = scalar_string(node["causal_alignment"], key + ".causal_alignment");
      if (alignment != "top_left" && alignment != "bottom_right") {
        fail(node["causal_alignment"], key + ".causal_alignment",
             "unknown alignment '" + alignment + "'; allowed: top_left (PyTorch's is_causal), bottom_right "
             "(FlashAttention's causal flag and windows)");
      }
      spec.causal_alignment = alignment == "top_left" ? CausalAlignment::top_left : CausalAlignment::bottom_right;
    }
    if (node["arguments"]) {
      const YAML::Node& arguments = node["arguments"];
      const std::string allowed = text::join(generated_argument_names(), ", ");
      if (!arguments.IsMap()) {
        fail(arguments, key + ".arguments", "expected a mapping of the op's argument names to what attnsweep makes: " +
                                                allowed + ", e.g. {cu_seqlens_q: cu_seqlens_q, page_table: page_table}");
      }
      for (const auto& entry : arguments) {
        const std::string argument = entry.first.Scalar();
        const std::string value = scalar_string(entry.second, key + ".arguments." + argument);
        if (!contains(generated_argument_names(), value)) {
          fail(entry.second, key + ".arguments." + argument, "unknown value '" + value + "'; allowed: " + allowed);
        }
        for (const auto& [other, given] : spec.generated) {
          if (given == value) {
            fail(entry.second, key + ".arguments." + argument, value + " is given to '" + other + "' already");
          }
        }
        spec.generated[argument] = value;
      }
    }
    std::vector<std::string> mapped_names = {spec.causal_argument, spec.scale_argument};
    for (const auto& entry : spec.generated) mapped_names.push_back(entry.first);
    for (const std::string& mapped : mapped_names) {
      if (!mapped.empty() && spec.fixed.count(mapped)) {
        fail(node["fixed"], key + ".fixed." + mapped, "is mapped by causal, scale or arguments already; give it once");
      }
    }
    for (const std::string* mapped : {&spec.causal_argument, &spec.scale_argument}) {
      if (!mapped->empty() && spec.generated.count(*mapped)) {
        fail(node["arguments"], key + ".arguments." + *mapped, "is mapped by causal or scale already; give it once");
      }
    }
    return spec;
  }

  // causal: true|false|top_left|bottom_right, or a list of them (true is PyTorch's
  // is_causal, aligned to the top left).
  std::vector<CausalAlignment> causal_alignments(const YAML::Node& node, const std::string& key) const {
    std::vector<CausalAlignment> out;
    for (const auto& item : items(node, key)) {
      const std::string& raw = item.Scalar();
      std::optional<CausalAlignment> value;
      if (raw == "true" || raw == "True") value = CausalAlignment::top_left;
      if (raw == "false" || raw == "False") value = CausalAlignment::none;
      if (raw == "top_left" || raw == "bottom_right") value = parse_causal_alignment(raw);
      if (!value) fail(item, key, std::string("unknown value '") + raw + "'; allowed: " + kCausalValues);
      if (std::find(out.begin(), out.end(), *value) == out.end()) out.push_back(*value);
    }
    return out;
  }

  // A `window` value, the top-level key's or an exclude rule's: the node, or each
  // item of its list (an empty list is refused).
  std::vector<YAML::Node> window_items(const YAML::Node& node, const std::string& key) const {
    std::vector<YAML::Node> listed;
    if (!node.IsSequence()) return {node};
    for (const auto& item : node) listed.push_back(item);
    if (listed.empty()) fail(node, key, "the list is empty; give at least one window or none");
    return listed;
  }

  // One window item: none (nullopt), or {left: N, right: M} with either side left
  // out; anything else fails with `expected` (what the caller accepts).
  struct WindowBounds {
    std::optional<std::int64_t> left, right;
  };
  std::optional<WindowBounds> window_item(const YAML::Node& item, const std::string& key,
                                          const std::string& expected) const {
    if (item.IsScalar() && item.Scalar() == "none") return std::nullopt;
    if (!item.IsMap() || item.size() == 0) {
      fail(item, key, expected + ", got " + (item.IsMap() ? std::string("an empty mapping") : "a " + kind(item)));
    }
    check_keys(item, key, kWindowKeys);
    WindowBounds bounds;
    for (const char* side : {"left", "right"}) {
      if (!item[side]) continue;
      if (item[side].IsNull()) {
        fail(item[side], key + "." + side,
             "is empty; give a number of keys, or leave " + std::string(side) + " out for no bound on that side");
      }
      (std::string(side) == "left" ? bounds.left : bounds.right) =
          integer(item[side], key + "." + side, 0, kMaxDimension);
    }
    return bounds;
  }

  // window: {left: N, right: M} (either may be left out: no bound on that side), or
  // none, or a list of those; crossed with every causal alignment. Under a causal
  // mask the right bound is 0 (a later key is masked anyway).
  std::vector<Mask> masks(const std::vector<CausalAlignment>& alignments, const YAML::Node& node) const {
    struct Window {
      std::optional<std::int64_t> left, right;
      YAML::Node where;
      std::string key;  // "window" or "window[i]", for messages
    };
    std::vector<std::optional<Window>> windows;
    if (!node) {
      windows.push_back(std::nullopt);
    } else {
      int index = 0;
      for (const auto& item : window_items(node, "window")) {
        const std::string key = node.IsSequence() ? "window[" + std::to_string(index++) + "]" : "window";
        const auto bounds =
            item.IsNull() ? std::nullopt
                          : window_item(item, key,
                                        "expected a mapping {left: N, right: M} (keys before and after the diagonal; "
                                        "either may be left out) or none");
        if (!bounds) {
          windows.push_back(std::nullopt);
        } else {
          windows.push_back(Window{bounds->left, bounds->right, item, key});
        }
      }
    }
    std::vector<Mask> out;
    for (const CausalAlignment alignment : alignments) {
      for (const auto& window : windows) {
        Mask mask(alignment, std::nullopt, std::nullopt);
        if (window) {
          mask.window_left = window->left;
          mask.window_right = window->right;
          if (alignment != CausalAlignment::none) {
            if (window->right && *window->right != 0) {
              fail(window->where["right"], window->key + ".right",
                   "is " + std::to_string(*window->right) + " under causal: " + to_string(alignment) +
                       ", which masks every later key; give right: 0 or leave it out, or causal: false for a "
                       "two-sided window");
            }
            mask.window_right = 0;
            if (!window->left) {
              fail(window->where, window->key + ".left",
                   "missing: under a causal mask a window needs left (keys before the diagonal); without it the "
                   "mask is the causal mask alone");
            }
          }
        }
        if (std::find(out.begin(), out.end(), mask) == out.end()) out.push_back(mask);
      }
    }
    return out;
  }

  Device device(const YAML::Node& node) const {
    const std::string value = scalar_string(node, "device");
    if (auto parsed = Device::try_parse(value)) return *parsed;
    fail(node, "device", "unknown device '" + value + "'; allowed: " + kDeviceNamesAllowed);
  }

  // page_size 0 is a contiguous cache, so a list or a rule can name it; every other size is at least 1.
  static std::int64_t smallest_size(const std::string& axis) { return axis == "page_size" ? 0 : 1; }

  std::vector<std::int64_t> sizes(const YAML::Node& node, const std::string& key, std::int64_t minimum = 1) const {
    std::vector<std::int64_t> out;
    std::set<std::int64_t> seen;
    for (const auto& item : items(node, key)) {
      const std::int64_t value = integer(item, key, minimum, kMaxDimension);
      if (seen.insert(value).second) out.push_back(value);
    }
    return out;
  }

  std::vector<ShapeBlock> shapes(const YAML::Node& node, std::uint64_t seed) const {
    std::vector<ShapeBlock> blocks;
    if (node.IsMap()) {
      blocks.push_back(shape_block(node, "shapes", seed));
    } else if (node.IsSequence()) {
      int index = 0;
      for (const auto& item : node) {
        const std::string key = "shapes[" + std::to_string(index++) + "]";
        if (!item.IsMap()) fail(item, key, "expected a mapping of shape axes, got a " + kind(item));
        blocks.push_back(shape_block(item, key, seed));
      }
      if (blocks.empty()) fail(node, "shapes", "the list is empty; give at least one shape mapping");
    } else {
      fail(node, "shapes", "expected a mapping of shape axes or a list of them, got a " + kind(node));
    }
    return blocks;
  }

  ShapeBlock shape_block(const YAML::Node& node, const std::string& prefix, std::uint64_t seed) const {
    check_keys(node, prefix, kShapeKeys);
    ShapeBlock block;
    block.where = location(node.Mark());
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      block.axis_where[key] = location(entry.first.Mark());
      if (key == "zip" || key == "varlen") continue;
      // page_size 0 is a contiguous cache, so a list can sweep both.
      block.axes[key] = sizes(entry.second, prefix + "." + key, smallest_size(key));
    }
    if (node["varlen"]) varlen(node, prefix, seed, block);
    if (node["zip"]) {
      const YAML::Node zip = node["zip"];
      const std::string zip_key = prefix + ".zip";
      if (!zip.IsSequence() || zip.size() == 0) {
        fail(zip, zip_key, "expected a non-empty list of mappings, e.g. [{seq_len_q: 1, seq_len_kv: 4096}]");
      }
      std::set<std::string> row_keys;
      int row_index = 0;
      for (const auto& row : zip) {
        const std::string row_key = zip_key + "[" + std::to_string(row_index++) + "]";
        if (!row.IsMap() || row.size() == 0) fail(row, row_key, "expected a mapping of shape axes to single values");
        std::vector<std::string> axis_keys(kShapeKeys.begin(), kShapeKeys.end() - 2);
        check_keys(row, row_key, axis_keys);
        std::map<std::string, std::int64_t> values;
        std::set<std::string> keys;
        for (const auto& entry : row) {
          const std::string key = entry.first.Scalar();
          if (block.axes.count(key)) {
            fail(entry.first, row_key + "." + key, "is also given as an axis of this shape block; give it in one place");
          }
          values[key] = integer(entry.second, row_key + "." + key, smallest_size(key), kMaxDimension);
          keys.insert(key);
        }
        if (row_index == 1) row_keys = keys;
        if (keys != row_keys) fail(row, row_key, "every zip row must set the same keys: " + join_set(row_keys));
        block.zip_rows.push_back(values);
      }
    }
    validate_block(node, prefix, block);
    return block;
  }

  // `varlen: {seq_len_kv: LIST | {distribution: ...}, seq_len_q: N | LIST | seq_len_kv}`
  // (docs/config.md, "Variable-length batches").
  void varlen(const YAML::Node& block_node, const std::string& prefix, std::uint64_t seed, ShapeBlock& block) const {
    const YAML::Node node = block_node["varlen"];
    const std::string key = prefix + ".varlen";
    const char* const example = "e.g. {seq_len_kv: [512, 4096, 16384], seq_len_q: 1}";
    if (!node.IsMap()) fail(node, key, std::string("expected a mapping, ") + example);
    check_keys(node, key, kVarlenKeys);
    for (const std::string axis : {"seq_len", "seq_len_q", "seq_len_kv", "zip"}) {
      if (block_node[axis]) {
        fail(block_node[axis], prefix + "." + axis,
             "a block with varlen takes its lengths from varlen; give " + axis + " in another block");
      }
    }
    const YAML::Node kv = node["seq_len_kv"];
    if (!kv) fail(node, key + ".seq_len_kv", std::string("missing: each sequence's key/value length, ") + example);
    const YAML::Node batch = block_node["batch"];
    if (batch && !(batch.IsScalar() || (batch.IsSequence() && batch.size() == 1))) {
      fail(batch, prefix + ".batch", "a block with varlen has one batch: its number of sequences");
    }
    const std::size_t count = batch ? static_cast<std::size_t>(block.axes.at("batch").front()) : 0;
    const std::string too_many = "a variable-length batch holds at most " + std::to_string(kMaxSequences) +
                                 " sequences (each case keeps every length); split it into several batches";
    if (count > static_cast<std::size_t>(kMaxSequences)) fail(batch, prefix + ".batch", too_many + ", got " + std::to_string(count));
    if (kv.IsMap()) {
      if (!batch) fail(kv, prefix + ".batch", "missing: a drawn varlen needs the number of sequences to draw");
      const LengthDraw draw = length_draw(kv, key + ".seq_len_kv");
      block.varlen_kv = draw_lengths(draw, count, draw_seed(seed, draw, count));
    } else {
      for (const auto& item : items(kv, key + ".seq_len_kv")) {
        block.varlen_kv.push_back(integer(item, key + ".seq_len_kv", 1, kMaxDimension));
      }
      if (batch && block.varlen_kv.size() != count) {
        fail(kv, key + ".seq_len_kv", "lists " + std::to_string(block.varlen_kv.size()) +
                                          " lengths, but batch is " + std::to_string(count) +
                                          "; give one length per sequence (or leave batch out)");
      }
      if (block.varlen_kv.size() > static_cast<std::size_t>(kMaxSequences)) {
        fail(kv, key + ".seq_len_kv", too_many + ", got " + std::to_string(block.varlen_kv.size()));
      }
    }
    const YAML::Node q = node["seq_len_q"];
    const std::string q_key = key + ".seq_len_q";
    if (!q) {
      fail(node, q_key, "missing: queries per sequence, N for every sequence (decoding N tokens), a list, or "
                        "seq_len_kv (prefill: each sequence's own length)");
    }
    if (q.IsScalar() && q.Scalar() == "seq_len_kv") {
      block.varlen_q = block.varlen_kv;
    } else if (q.IsSequence()) {
      for (const auto& item : q) block.varlen_q.push_back(integer(item, q_key, 1, kMaxDimension));
      if (block.varlen_q.size() != block.varlen_kv.size()) {
        fail(q, q_key, "lists " + std::to_string(block.varlen_q.size()) + " lengths for " +
                           std::to_string(block.varlen_kv.size()) + " sequences; give one per sequence");
      }
    } else if (q.IsScalar() && !q.Scalar().empty() && !std::isdigit(static_cast<unsigned char>(q.Scalar()[0])) &&
               q.Scalar()[0] != '-' && q.Scalar()[0] != '+') {
      // A word; a number ("-1" too) is read as one below, and out of range says the range as a list does.
      fail(q, q_key, "unknown value '" + q.Scalar() + "'; give N (every sequence), a list (one per sequence) or "
                     "seq_len_kv (each sequence's own length)");
    } else {
      block.varlen_q.assign(block.varlen_kv.size(), integer(q, q_key, 1, kMaxDimension));
    }
    block.axes["batch"] = {static_cast<std::int64_t>(block.varlen_kv.size())};
    block.axis_where.emplace("batch", location(node.Mark()));
  }

  // A draw's seed: the config's seed and the draw itself (its parameters, its
  // count, its own `seed`), never where it is written, so moving a block or
  // adding another leaves its lengths as they were; two draws written alike are
  // one shape unless their `seed`s differ.
  static std::uint64_t draw_seed(std::uint64_t seed, const LengthDraw& draw, std::size_t count) {
    const std::string described = std::to_string(seed) + " " + std::to_string(static_cast<int>(draw.distribution)) + " " +
                                  std::to_string(draw.min) + " " + std::to_string(draw.max) + " " +
                                  std::to_string(draw.mean) + " " + std::to_string(draw.stdev) + " " +
                                  std::to_string(count) + " " + std::to_string(draw.seed);
    return std::stoull(sha256_hex(described).substr(0, 16), nullptr, 16);
  }

  LengthDraw length_draw(const YAML::Node& node, const std::string& key) const {
    check_keys(node, key, kLengthDrawKeys);
    LengthDraw draw;
    const YAML::Node name = node["distribution"];
    if (!name) fail(node, key + ".distribution", "missing: uniform (min, max) or normal (mean, stdev, min, max)");
    const std::string value = scalar_string(name, key + ".distribution");
    if (value != "uniform" && value != "normal") {
      fail(name, key + ".distribution", "unknown distribution '" + value + "'; allowed: uniform, normal");
    }
    draw.distribution = value == "uniform" ? LengthDistribution::uniform : LengthDistribution::normal;
    for (const std::string bound : {"min", "max"}) {
      if (!node[bound]) fail(node, key + "." + bound, "missing: the " + value + " draw needs min and max");
    }
    if (node["seed"]) draw.seed = static_cast<std::uint64_t>(integer(node["seed"], key + ".seed", 0, LLONG_MAX));
    draw.min = integer(node["min"], key + ".min", 1, kMaxDimension);
    draw.max = integer(node["max"], key + ".max", draw.min, kMaxDimension);
    if (draw.distribution == LengthDistribution::normal) {
      for (const std::string parameter : {"mean", "stdev"}) {
        if (!node[parameter]) fail(node, key + "." + parameter, "missing: the normal draw needs mean and stdev");
      }
      draw.mean = number(node["mean"], key + ".mean", 0);
      draw.stdev = number(node["stdev"], key + ".stdev", 0, /*inclusive=*/true);
    } else {
      for (const std::string parameter : {"mean", "stdev"}) {
        if (node[parameter]) fail(node[parameter], key + "." + parameter, "only the normal draw takes " + parameter);
      }
    }
    return draw;
  }

  static std::string join_set(const std::set<std::string>& keys) {
    return text::join(std::vector<std::string>(keys.begin(), keys.end()), ", ");
  }

  void validate_block(const YAML::Node& node, const std::string& prefix, const ShapeBlock& block) const {
    auto has = [&](const std::string& key) {
      return block.axes.count(key) || (!block.zip_rows.empty() && block.zip_rows.front().count(key));
    };
    for (const std::string key : {"batch", "heads", "head_dim"}) {
      if (!has(key)) {
        fail(node, prefix + "." + key, "missing; every shape needs batch, heads, head_dim and seq_len (or varlen)");
      }
    }
    if (!block.varlen_kv.empty()) return;
    const bool both = has("seq_len_q") || has("seq_len_kv");
    if (has("seq_len") && both) {
      fail(node, prefix + ".seq_len", "give either seq_len or seq_len_q and seq_len_kv, not both");
    }
    if (!has("seq_len") && !(has("seq_len_q") && has("seq_len_kv"))) {
      fail(node, prefix + ".seq_len", "missing; give seq_len, both seq_len_q and seq_len_kv, or varlen (a "
                                      "variable-length batch)");
    }
  }

  std::vector<ExcludeRule> excludes(const YAML::Node& node, const std::vector<std::string>& variant_values) const {
    if (!node.IsSequence()) fail(node, "exclude", "expected a list of mappings, e.g. [{variant: sdpa_math, seq_len: 8192}]");
    if (node.size() > kMaxExcludeRules) {
      fail(node, "exclude", "lists " + std::to_string(node.size()) + " rules; at most " + std::to_string(kMaxExcludeRules) +
                                " are allowed (every case is checked against each): give a rule lists of values "
                                "instead, e.g. {variant: sdpa_math, seq_len: [4096, 8192]}");
    }
    std::vector<ExcludeRule> rules;
    int index = 0;
    for (const auto& item : node) {
      const std::string key = "exclude[" + std::to_string(index++) + "]";
      if (!item.IsMap() || item.size() == 0) fail(item, key, "expected a non-empty mapping of keys to values");
      check_keys(item, key, kExcludeKeys);
      ExcludeRule rule;
      rule.where = location(item.Mark());
      for (const auto& entry : item) {
        const std::string field = entry.first.Scalar();
        const std::string field_key = key + "." + field;
        std::vector<std::string> values;
        if (field == "variant") {
          values = names(entry.second, field_key, variant_values);
        } else if (field == "dtype") {
          values = names(entry.second, field_key, dtype_names());
        } else if (field == "window") {
          // none, or {left: N, right: M} (a side left out matches any bound), or a list of them.
          for (const auto& item : window_items(entry.second, field_key)) {
            const auto bounds =
                window_item(item, field_key, "expected none or a mapping {left: N, right: M} (a side left out matches any bound)");
            const auto side = [](const std::optional<std::int64_t>& bound) {
              return bound ? std::to_string(*bound) : std::string("*");
            };
            values.push_back(bounds ? side(bounds->left) + "," + side(bounds->right) : "none");
          }
        } else if (field == "causal") {
          // true matches either alignment; top_left and bottom_right one of them.
          for (const auto& item : items(entry.second, field_key)) {
            const std::string& raw = item.Scalar();
            if (raw == "true" || raw == "True") values.push_back("true");
            else if (raw == "false" || raw == "False") values.push_back("false");
            else if (raw == "top_left" || raw == "bottom_right") values.push_back(raw);
            else fail(item, field_key, "unknown value '" + raw + "'; allowed: " + kCausalValues);
          }
        } else if (field == "pass") {
          values = names(entry.second, field_key, pass_names());
        } else {
          for (auto value : sizes(entry.second, field_key, smallest_size(field))) values.push_back(std::to_string(value));
        }
        rule.match[field] = values;
      }
      rules.push_back(rule);
    }
    return rules;
  }

  MeasureSettings measure(const YAML::Node& node) const {
    if (!node.IsMap()) fail(node, "measure", "expected a mapping with keys " + text::join(MeasureSettings::keys(), ", "));
    check_keys(node, "measure", MeasureSettings::keys());
    MeasureSettings settings;
    auto count = [&](const char* key, int& target, int minimum, int maximum) {
      if (node[key]) target = static_cast<int>(integer(node[key], std::string("measure.") + key, minimum, maximum));
    };
    count("warmup", settings.warmup, 0, 100000);
    count("profiled_forwards", settings.profiled_forwards, 1, 1000);
    count("max_profile_attempts", settings.max_profile_attempts, 1, 100);
    count("min_samples", settings.min_samples, 1, 10000000);
    count("max_samples", settings.max_samples, 1, 10000000);
    if (node["target_rel_stdev"]) settings.target_rel_stdev = number(node["target_rel_stdev"], "measure.target_rel_stdev", 0);
    if (node["max_case_seconds"]) settings.max_case_seconds = number(node["max_case_seconds"], "measure.max_case_seconds", 0);
    if (node["accuracy_check"]) settings.accuracy_check = boolean(node["accuracy_check"], "measure.accuracy_check");
    if (node["traces"]) settings.traces = boolean(node["traces"], "measure.traces");
    if (node["case_timeout_s"]) settings.case_timeout_s = number(node["case_timeout_s"], "measure.case_timeout_s", 0);
    if (node["min_gpu_seconds"]) settings.min_gpu_seconds = number(node["min_gpu_seconds"], "measure.min_gpu_seconds", 0, true);
    if (node["l2_flush"]) settings.l2_flush = boolean(node["l2_flush"], "measure.l2_flush");
    if (node["cuda_graph"]) settings.cuda_graph = boolean(node["cuda_graph"], "measure.cuda_graph");
    if (node["hide_launch_latency"]) {
      settings.hide_launch_latency = boolean(node["hide_launch_latency"], "measure.hide_launch_latency");
    }
    if (node["throttle_fraction"]) {
      settings.throttle_fraction = number(node["throttle_fraction"], "measure.throttle_fraction", 0, true);
      if (settings.throttle_fraction >= 1) {
        fail(node["throttle_fraction"], "measure.throttle_fraction", "must be at least 0 and under 1, got " + node["throttle_fraction"].Scalar());
      }
    }
    if (node["case_order"]) {
      const std::string order = scalar_string(node["case_order"], "measure.case_order");
      const auto parsed = parse_case_order(order);
      if (!parsed) {
        fail(node["case_order"], "measure.case_order",
             "unknown order '" + order + "'; allowed: " + text::join(case_order_names(), ", "));
      }
      settings.case_order = *parsed;
    }
    if (node["regime"]) {
      const std::string regime = scalar_string(node["regime"], "measure.regime");
      const auto parsed = parse_measure_regime(regime);
      if (!parsed) {
        fail(node["regime"], "measure.regime",
             "unknown regime '" + regime + "'; allowed: " + text::join(measure_regime_names(), ", "));
      }
      settings.regime = *parsed;
    }
    if (node["burst_cooldown_max_ms"]) {
      settings.burst_cooldown_max_ms = number(node["burst_cooldown_max_ms"], "measure.burst_cooldown_max_ms", 0);
    }
    if (node["burst_cooldown_case_max_s"]) {
      settings.burst_cooldown_case_max_s =
          number(node["burst_cooldown_case_max_s"], "measure.burst_cooldown_case_max_s", 0);
    }
    if (node["burst_cooldown_run_max_s"]) {
      settings.burst_cooldown_run_max_s = number(node["burst_cooldown_run_max_s"], "measure.burst_cooldown_run_max_s", 0);
    }
    if (node["energy_window_ms"]) {
      settings.energy_window_ms = number(node["energy_window_ms"], "measure.energy_window_ms", 0, true);
      if (settings.energy_window_ms > kMaxEnergyWindowMs) {
        fail(node["energy_window_ms"], "measure.energy_window_ms",
             "must be 0 (off) or at most " + text::fixed(kMaxEnergyWindowMs, 0) + " (a minute per case), got " +
                 node["energy_window_ms"].Scalar());
      }
    }
    if (settings.max_samples < settings.min_samples) {
      fail(node["max_samples"] ? node["max_samples"] : node, "measure.max_samples",
           "must be at least measure.min_samples (" + std::to_string(settings.min_samples) + ")");
    }
    return settings;
  }
};

}  // namespace

namespace {

// YAML must be UTF-8 text; name the first byte that is not. A NUL would cut the
// stored config_yaml short; other control characters are not YAML (tab, line
// feed and carriage return are).
void check_text(const std::string& text, const std::string& source_name) {
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

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& source_name) {
  check_text(yaml_text, source_name);
  return Loader(source_name).load(yaml_text);
}

namespace {

// A config is a small text file; anything larger is a wrong path (a log, a data file).
constexpr std::size_t kMaxConfigBytes = std::size_t(16) << 20;

// Why a path cannot be opened, from errno, as the rest of a "PATH: ..." line.
std::string open_failure(int error) {
  switch (error) {
    case ENOENT: return "config file not found";
    case ENOTDIR: return "config file not found: a part of the path is not a directory";
    case ELOOP: return "too many levels of symbolic links (a symlink loop?); expected a YAML config file";
    case ENAMETOOLONG:
      return "file name too long (at most " + std::to_string(NAME_MAX) + " bytes a name and " +
             std::to_string(PATH_MAX - 1) + " a path)";
    case EACCES: return "permission denied (the file is not readable, or a directory on its path is not searchable)";
    case EISDIR: return "is a directory; expected a YAML config file";
    default: return std::string("cannot open the config file: ") + std::strerror(error);
  }
}

// Only a regular file (after symlinks) is read: a FIFO would block, /dev/zero never ends.
void check_regular_file(const std::string& path, const struct stat& info) {
  if (S_ISDIR(info.st_mode)) throw BadInputError(path + ": " + open_failure(EISDIR));
  if (!S_ISREG(info.st_mode)) {
    throw BadInputError(path + ": is " + file_kind(info.st_mode) +
                        ", not a regular file; save the config as a YAML file and give its path");
  }
  if (static_cast<std::uint64_t>(info.st_size) > kMaxConfigBytes) {
    throw BadInputError(path + ": is " + std::to_string(info.st_size) + " bytes; a config file may be at most " +
                        std::to_string(kMaxConfigBytes >> 20) + " MiB (" + std::to_string(kMaxConfigBytes) + " bytes)");
  }
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// stat, refuse what is not a regular file of at most kMaxConfigBytes, then read
// at most one byte more than that (the file may change between stat and read).
std::string read_config_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw BadInputError(path + ": " + open_failure(errno));
  check_regular_file(path, info);
  // O_NONBLOCK: if a FIFO replaced the file since stat, open must not wait for a writer.
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.get() < 0) throw BadInputError(path + ": " + open_failure(errno));
  if (::fstat(file.get(), &info) != 0) throw BadInputError(path + ": " + open_failure(errno));
  check_regular_file(path, info);
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxConfigBytes) {
    const ssize_t got = ::read(file.get(), chunk, std::min(sizeof chunk, kMaxConfigBytes + 1 - text.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw BadInputError(path + ": cannot read the config file: " + std::strerror(errno));
    if (got == 0) return text;
    text.append(chunk, static_cast<std::size_t>(got));
  }
  throw BadInputError(path + ": grew past " + std::to_string(kMaxConfigBytes >> 20) +
                      " MiB while being read; a config file may be at most " + std::to_string(kMaxConfigBytes >> 20) +
                      " MiB");
}

}  // namespace

Config load_config(const std::string& path) { return parse_config(read_config_file(path), path); }

}  // namespace attnsweep
