// YAML -> validated Config. Every rejection names the file, line, column, key
// and what is allowed, and happens before anything runs.
#include <yaml-cpp/yaml.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "runner/common/identities.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep {

namespace {

constexpr std::int64_t kMaxDimension = std::int64_t(1) << 24;

const std::vector<std::string> kTopLevelKeys = {"name",   "description", "device", "seed",   "variants",
                                                "dtypes", "causal",      "shapes", "exclude", "measure"};
const std::vector<std::string> kShapeKeys = {"batch",     "heads",      "kv_heads", "seq_len",
                                             "seq_len_q", "seq_len_kv", "head_dim", "zip"};
const std::vector<std::string> kExcludeKeys = {"variant",  "dtype",   "causal",    "batch",
                                               "heads",    "kv_heads", "seq_len",  "seq_len_q",
                                               "seq_len_kv", "head_dim"};

class Loader {
 public:
  explicit Loader(std::string source) : source_(std::move(source)) {}

  Config load(const std::string& text) {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::ParserException& error) {
      throw ConfigError(source_, location(error.mark), "", "YAML syntax error: " + error.msg);
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
    config.variants = variants(root["variants"]);
    require(root, "dtypes", "a list of " + text::join(dtype_names(), ", "));
    for (const auto& dtype : names(root["dtypes"], "dtypes", dtype_names())) config.dtypes.push_back(*parse_dtype(dtype));
    config.causal = root["causal"] ? booleans(root["causal"], "causal") : std::vector<bool>{true};

    require(root, "shapes", "a mapping of shape axes, or a list of such mappings");
    config.shapes_where = location(root["shapes"].Mark());
    config.shapes = shapes(root["shapes"]);
    if (root["exclude"]) config.exclude = excludes(root["exclude"]);
    if (root["measure"]) config.measure = measure(root["measure"]);
    return config;
  }

 private:
  std::string source_;

  static SourceLocation location(const YAML::Mark& mark) {
    if (mark.line < 0) return {};
    return {mark.line + 1, mark.column + 1};
  }

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
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        const std::string suggestion = text::nearest(key, allowed);
        std::string message = "unknown key";
        message += suggestion.empty() ? "." : "; did you mean '" + suggestion + "'?";
        fail(entry.first, full, message + " Allowed: " + text::join(allowed, ", "));
      }
    }
  }

  std::string scalar_string(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a string");
    return node.Scalar();
  }

  std::int64_t integer(const YAML::Node& node, const std::string& key, std::int64_t minimum,
                       std::int64_t maximum) const {
    if (!node.IsScalar()) fail(node, key, "expected an integer, got a " + kind(node));
    const std::string& raw = node.Scalar();
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(raw, &used, 10);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != raw.size()) fail(node, key, "expected an integer, got '" + raw + "'");
    if (value < minimum || value > maximum) {
      fail(node, key, "must be between " + std::to_string(minimum) + " and " + std::to_string(maximum) +
                          ", got " + raw);
    }
    return value;
  }

  // A number above `minimum` (or at least `minimum` when inclusive).
  double number(const YAML::Node& node, const std::string& key, double minimum, bool inclusive = false) const {
    if (!node.IsScalar()) fail(node, key, "expected a number, got a " + kind(node));
    const std::string& raw = node.Scalar();
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(raw, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != raw.size() || !(value == value)) fail(node, key, "expected a number, got '" + raw + "'");
    if (inclusive ? !(value >= minimum) : !(value > minimum)) {
      fail(node, key, std::string(inclusive ? "must be at least " : "must be greater than ") + text::fixed(minimum, 0) +
                          ", got " + raw);
    }
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
    for (const auto& item : items(node, key)) {
      const std::string value = item.Scalar();
      if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
        const std::string suggestion = text::nearest(value, allowed);
        std::string message = "unknown value '" + value + "'";
        message += suggestion.empty() ? "." : "; did you mean '" + suggestion + "'?";
        fail(item, key, message + " Allowed: " + text::join(allowed, ", "));
      }
      if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
    }
    return out;
  }

  std::vector<std::string> variants(const YAML::Node& node) const {
    if (node.IsScalar() && node.Scalar() == "all") return variant_names();
    return names(node, "variants", variant_names());
  }

  std::vector<bool> booleans(const YAML::Node& node, const std::string& key) const {
    std::vector<bool> out;
    for (const auto& item : items(node, key)) {
      const bool value = boolean(item, key);
      if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
    }
    return out;
  }

  Device device(const YAML::Node& node) const {
    const std::string value = scalar_string(node, "device");
    if (auto parsed = Device::try_parse(value)) return *parsed;
    fail(node, "device", "unknown device '" + value + "'; allowed: " + kDeviceNamesAllowed);
  }

  std::vector<std::int64_t> sizes(const YAML::Node& node, const std::string& key) const {
    std::vector<std::int64_t> out;
    for (const auto& item : items(node, key)) {
      const std::int64_t value = integer(item, key, 1, kMaxDimension);
      if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
    }
    return out;
  }

  std::vector<ShapeBlock> shapes(const YAML::Node& node) const {
    std::vector<ShapeBlock> blocks;
    if (node.IsMap()) {
      blocks.push_back(shape_block(node, "shapes"));
    } else if (node.IsSequence()) {
      int index = 0;
      for (const auto& item : node) {
        const std::string key = "shapes[" + std::to_string(index++) + "]";
        if (!item.IsMap()) fail(item, key, "expected a mapping of shape axes, got a " + kind(item));
        blocks.push_back(shape_block(item, key));
      }
      if (blocks.empty()) fail(node, "shapes", "the list is empty; give at least one shape mapping");
    } else {
      fail(node, "shapes", "expected a mapping of shape axes or a list of them, got a " + kind(node));
    }
    return blocks;
  }

  ShapeBlock shape_block(const YAML::Node& node, const std::string& prefix) const {
    check_keys(node, prefix, kShapeKeys);
    ShapeBlock block;
    block.where = location(node.Mark());
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      block.axis_where[key] = location(entry.first.Mark());
      if (key == "zip") continue;
      block.axes[key] = sizes(entry.second, prefix + "." + key);
    }
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
        std::vector<std::string> axis_keys(kShapeKeys.begin(), kShapeKeys.end() - 1);
        check_keys(row, row_key, axis_keys);
        std::map<std::string, std::int64_t> values;
        std::set<std::string> keys;
        for (const auto& entry : row) {
          const std::string key = entry.first.Scalar();
          if (block.axes.count(key)) {
            fail(entry.first, row_key + "." + key, "is also given as an axis of this shape block; give it in one place");
          }
          values[key] = integer(entry.second, row_key + "." + key, 1, kMaxDimension);
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

  static std::string join_set(const std::set<std::string>& keys) {
    return text::join(std::vector<std::string>(keys.begin(), keys.end()), ", ");
  }

  void validate_block(const YAML::Node& node, const std::string& prefix, const ShapeBlock& block) const {
    auto has = [&](const std::string& key) {
      return block.axes.count(key) || (!block.zip_rows.empty() && block.zip_rows.front().count(key));
    };
    for (const std::string key : {"batch", "heads", "head_dim"}) {
      if (!has(key)) fail(node, prefix + "." + key, "missing; every shape needs batch, heads, head_dim and seq_len");
    }
    const bool both = has("seq_len_q") || has("seq_len_kv");
    if (has("seq_len") && both) {
      fail(node, prefix + ".seq_len", "give either seq_len or seq_len_q and seq_len_kv, not both");
    }
    if (!has("seq_len") && !(has("seq_len_q") && has("seq_len_kv"))) {
      fail(node, prefix + ".seq_len", "missing; give seq_len, or both seq_len_q and seq_len_kv");
    }
  }

  std::vector<ExcludeRule> excludes(const YAML::Node& node) const {
    if (!node.IsSequence()) fail(node, "exclude", "expected a list of mappings, e.g. [{variant: sdpa_math, seq_len: 8192}]");
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
          values = names(entry.second, field_key, variant_names());
        } else if (field == "dtype") {
          values = names(entry.second, field_key, dtype_names());
        } else if (field == "causal") {
          for (bool value : booleans(entry.second, field_key)) values.push_back(value ? "true" : "false");
        } else {
          for (auto value : sizes(entry.second, field_key)) values.push_back(std::to_string(value));
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
    if (settings.max_samples < settings.min_samples) {
      fail(node["max_samples"] ? node["max_samples"] : node, "measure.max_samples",
           "must be at least measure.min_samples (" + std::to_string(settings.min_samples) + ")");
    }
    return settings;
  }
};

}  // namespace

namespace {

// YAML must be UTF-8; name the first byte that is not.
void check_utf8(const std::string& text, const std::string& source_name) {
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
  check_utf8(yaml_text, source_name);
  return Loader(source_name).load(yaml_text);
}

Config load_config(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) throw BadInputError(path + ": config file not found");
  if (S_ISDIR(info.st_mode)) throw BadInputError(path + ": is a directory; expected a YAML config file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw BadInputError(path + ": cannot read the config file (permission denied?)");
  std::ostringstream buffer;
  buffer << file.rdbuf();
  return parse_config(buffer.str(), path);
}

}  // namespace attnsweep
