// YAML -> validated Config. Every rejection names the file, line, column, key
// and what is allowed, and happens before anything runs. This file reads the
// top level and hands each part to its reader (shape_reader, mask_reader,
// op_library_reader, exclude_reader, measure_reader); config_text refuses what
// is not a config before YAML builds a document, config_file reads the file.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <map>

#include "runner/common/identities.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config.hpp"
#include "runner/config/config_keys.hpp"
#include "runner/config/config_text.hpp"
#include "runner/config/exclude_reader.hpp"
#include "runner/config/mask_reader.hpp"
#include "runner/config/nightly_rules_reader.hpp"
#include "runner/config/measure_reader.hpp"
#include "runner/config/op_library_reader.hpp"
#include "runner/config/score_mod_reader.hpp"
#include "runner/config/shape_reader.hpp"
#include "runner/config/yaml_reader.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep {
namespace {

using namespace config_keys;

class Loader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  Config load(const std::string& text) {
    YAML::Node root = load_yaml(text, source_);
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
        root["causal"] ? read_causal_alignments(source_, root["causal"], "causal")
                       : std::vector<CausalAlignment>{CausalAlignment::top_left};
    config.masks = read_masks(source_, alignments, root["window"]);
    config.score_mods = read_score_mods(source_, root, config.dtypes);
    config.deterministic = read_switches(source_, root["deterministic"], "deterministic");
    if (root["passes"]) {
      config.passes_where = location(root["passes"].Mark());
      config.passes = passes(root["passes"]);
    }

    require(root, "shapes", "a mapping of shape axes, or a list of such mappings");
    config.shapes_where = location(root["shapes"].Mark());
    config.shapes = read_shapes(source_, root["shapes"], config.seed);
    // The variants a rule may name: every built-in and the config's op libraries.
    std::vector<std::string> variant_values = variant_names();
    for (const auto& [name, spec] : config.op_libraries) variant_values.push_back(name);
    if (root["exclude"]) config.exclude = read_excludes(source_, root["exclude"], variant_values);
    if (root["measure"]) config.measure = read_measure_settings(source_, root["measure"]);
    if (root["claims"]) config.claims_files = claims_files(root["claims"]);
    if (root["nightly"]) config.nightly_rules = read_nightly_rules(source_, root["nightly"], variant_values);
    return config;
  }

 private:
  // `passes`: pass names in the order written, each once (a pass written twice
  // counts once, as a value in every list: docs/config.md).
  std::vector<Pass> passes(const YAML::Node& node) const {
    std::vector<Pass> out;
    for (const auto& value : names(node, "passes", pass_names())) out.push_back(*parse_pass(value));
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
        OpLibrarySpec spec = read_op_library(source_, item, key);
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

  // `claims`: a path or a list of paths of claims files (docs/config.md, "Claims"), read by load_config.
  std::vector<std::string> claims_files(const YAML::Node& node) const {
    std::vector<std::string> out;
    for (const auto& item : items(node, "claims")) {
      const std::string path = scalar_string(item, "claims");
      if (path.empty()) fail(item, "claims", "an empty path; give a claims file's path, relative to this config's folder");
      if (contains(out, path)) fail(item, "claims", "'" + path + "' is listed twice; name each claims file once");
      out.push_back(path);
    }
    return out;
  }

  Device device(const YAML::Node& node) const {
    const std::string value = scalar_string(node, "device");
    if (auto parsed = Device::try_parse(value)) return *parsed;
    fail(node, "device", "unknown device '" + value + "'; allowed: " + kDeviceNamesAllowed);
  }
};

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& source_name) {
  check_config_text(yaml_text, source_name);
  return Loader(source_name).load(yaml_text);
}

}  // namespace attnsweep
