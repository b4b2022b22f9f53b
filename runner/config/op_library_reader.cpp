#include "runner/config/op_library_reader.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>

#include "runner/common/text.hpp"
#include "runner/config/config_keys.hpp"
#include "runner/config/yaml_reader.hpp"
#include "runner/variants/variant_names.hpp"

namespace attnsweep {
namespace {

using namespace config_keys;

class OpLibraryReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

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
};

}  // namespace

OpLibrarySpec read_op_library(const std::string& source, const YAML::Node& node, const std::string& key) {
  return OpLibraryReader(source).op_library(node, key);
}

}  // namespace attnsweep
