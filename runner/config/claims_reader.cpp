// Claims files (claims.hpp, docs/config.md "Claims"): YAML -> validated
// ClaimedFigures. A claim's `case` is read by the same readers as a config's
// axes, each given one value, so a claim means what a config would.
#include <yaml-cpp/yaml.h>

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>

#include "runner/common/file_kind.hpp"
#include "runner/common/text.hpp"
#include "runner/config/claims.hpp"
#include "runner/config/config_keys.hpp"
#include "runner/config/config_text.hpp"
#include "runner/config/mask_reader.hpp"
#include "runner/config/score_mod_reader.hpp"
#include "runner/config/shape_reader.hpp"
#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

const std::vector<std::string> kFileKeys = {"source", "measured_on", "claims"};
const std::vector<std::string> kClaimKeys = {"name", "where", "source", "measured_on", "note", "case", "tflops", "time_us"};
const std::vector<std::string> kSourceKeys = {"title", "repository", "path", "commit", "url", "where"};
const std::vector<std::string> kMeasuredOnKeys = {"gpu", "software"};

class ClaimsReader : public YamlReader {
 public:
  // `room`: how many claims this file may still hold under kMaxClaims.
  ClaimsReader(std::string source, std::string file_as_named, std::uint64_t seed, std::size_t room)
      : YamlReader(std::move(source)), file_(std::move(file_as_named)), seed_(seed), room_(room) {}

  std::vector<ClaimedFigure> read(const std::string& text) {
    YAML::Node root = load_yaml(text, source_);
    if (!root || !root.IsMap()) {
      fail(root, "", "expected a mapping with keys " + text::join(kFileKeys, ", ") + " (docs/config.md, \"Claims\")");
    }
    check_keys(root, "", kFileKeys);
    ClaimedFigure defaults;
    if (root["source"]) read_source(root["source"], "source", defaults.source);
    if (root["measured_on"]) read_measured_on(root["measured_on"], "measured_on", defaults);
    require(root, "claims", "a list of claims, each with name, case and tflops or time_us");
    const YAML::Node list = root["claims"];
    if (!list.IsSequence() || list.size() == 0) {
      fail(list, "claims", "expected a non-empty list of claims, got " + (list.IsSequence() ? std::string("an empty list") : "a " + kind(list)));
    }
    if (list.size() > room_) {
      fail(list, "claims", std::to_string(list.size() + (kMaxClaims - room_)) + " claims; a config's claims files may hold at most " +
                               std::to_string(kMaxClaims) + " claims in all (docs/config.md, \"Claims\")");
    }
    std::vector<ClaimedFigure> claims;
    std::set<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string key = "claims[" + std::to_string(i) + "]";
      ClaimedFigure claim = read_claim(list[i], key, defaults);
      if (!names.insert(claim.name).second) {
        fail(list[i]["name"], key + ".name", "'" + claim.name + "' names two claims of this file; give each its own name");
      }
      claims.push_back(std::move(claim));
    }
    return claims;
  }

 private:
  ClaimedFigure read_claim(const YAML::Node& node, const std::string& key, const ClaimedFigure& defaults) {
    if (!node.IsMap()) fail(node, key, "expected a mapping with keys " + text::join(kClaimKeys, ", ") + ", got a " + kind(node));
    check_keys(node, key, kClaimKeys);
    ClaimedFigure claim = defaults;
    claim.file = file_;
    claim.path = source_;
    claim.key = key;
    claim.where = location(node.Mark());
    require(node, "name", "a name unique in the file: letters, digits, '.', '_' and '-'");
    claim.name = scalar_string(node["name"], key + ".name");
    static const std::regex allowed("[A-Za-z0-9][A-Za-z0-9._-]*");
    if (!std::regex_match(claim.name, allowed)) {
      fail(node["name"], key + ".name", "'" + claim.name + "': use letters, digits, '.', '_' and '-' (a letter or digit first)");
    }
    if (node["source"]) read_source(node["source"], key + ".source", claim.source);
    if (node["where"]) claim.source.where = scalar_string(node["where"], key + ".where");
    if (node["measured_on"]) read_measured_on(node["measured_on"], key + ".measured_on", claim);
    if (node["note"]) claim.note = scalar_string(node["note"], key + ".note");
    if (claim.source.title.empty()) {
      fail(node, key + ".source.title",
           "every claim needs its source's title (in the file's `source` or the claim's own): where the figure was published");
    }
    // number() refuses infinities and NaN: a claim is a finite figure.
    if (node["tflops"]) claim.tflops = number(node["tflops"], key + ".tflops", 0);
    if (node["time_us"]) claim.time_us = number(node["time_us"], key + ".time_us", 0);
    if (!claim.tflops && !claim.time_us) {
      fail(node, key, "a claim needs its figure: tflops (TFLOP/s, above 0) or time_us (microseconds, above 0), or both");
    }
    const std::vector<std::string> after_dtype(config_keys::kCaseAxisKeys.begin() + 2,  // past variant, dtype
                                               config_keys::kCaseAxisKeys.end());
    require(node, "case", "a mapping: variant, the shape's keys (batch, heads, seq_len, head_dim, ...), dtype, " +
                              text::join(after_dtype, ", "));
    try {
      claim.claimed_case = read_case(node["case"], key + ".case");
    } catch (const BadInputError& error) {
      throw at_claim_case(claim, error);
    }
    return claim;
  }

  void read_source(const YAML::Node& node, const std::string& key, ClaimSource& source) const {
    if (!node.IsMap()) fail(node, key, "expected a mapping with keys " + text::join(kSourceKeys, ", ") + ", got a " + kind(node));
    check_keys(node, key, kSourceKeys);
    const auto set = [&](const char* name, std::string& field) {
      if (node[name]) field = scalar_string(node[name], key + "." + name);
    };
    set("title", source.title);
    set("repository", source.repository);
    set("path", source.path);
    set("commit", source.commit);
    set("url", source.url);
    set("where", source.where);
  }

  void read_measured_on(const YAML::Node& node, const std::string& key, ClaimedFigure& claim) const {
    if (!node.IsMap()) fail(node, key, "expected a mapping with keys gpu and software, got a " + kind(node));
    check_keys(node, key, kMeasuredOnKeys);
    if (node["gpu"]) claim.gpu = scalar_string(node["gpu"], key + ".gpu");
    if (node["software"]) {
      const YAML::Node software = node["software"];
      if (!software.IsMap()) fail(software, key + ".software", "expected a mapping of names to versions, e.g. {cudnn: 9.19.0}, got a " + kind(software));
      for (const auto& entry : software) {
        const std::string name = entry.first.Scalar();
        claim.software[name] = scalar_string(entry.second, key + ".software." + name);
      }
    }
  }

  // One value per axis: a list is refused (a claim is one figure of one case).
  void single(const YAML::Node& node, const std::string& key) const {
    if (node && node.IsSequence()) fail(node, key, "a claim describes one case: give one value, not a list");
  }

  ClaimCase read_case(const YAML::Node& node, const std::string& key) {
    if (!node.IsMap()) fail(node, key, "expected a mapping of the case's axes, got a " + kind(node));
    std::vector<std::string> allowed = config_keys::kCaseAxisKeys;
    for (const auto& shape_key : config_keys::kShapeKeys) {
      if (shape_key != "zip") allowed.push_back(shape_key);
    }
    check_keys(node, key, allowed);
    for (const auto& entry : node) single(entry.second, key + "." + entry.first.Scalar());
    ClaimCase c;
    require(node, "variant", "the variant the figure is of, as a config names it (sdpa_cudnn, an op library's name, ...)");
    c.variant = scalar_string(node["variant"], key + ".variant");
    require(node, "dtype", text::join(dtype_names(), ", "));
    c.dtype = *parse_dtype(names(node["dtype"], key + ".dtype", dtype_names()).front());
    // No default: a figure of the causal mask and one without differ by 2x.
    require(node, "causal", "false, true (top_left), top_left or bottom_right");
    const std::vector<CausalAlignment> alignments = read_causal_alignments(source_, node["causal"], key + ".causal");
    c.mask = read_masks(source_, alignments, node["window"]).front();
    c.scores = read_score_mods(source_, node).front();
    c.deterministic = read_switches(source_, node["deterministic"], key + ".deterministic").front();
    if (node["pass"]) c.pass = *parse_pass(names(node["pass"], key + ".pass", pass_names()).front());
    // Each claim's shape joins shapes_ before it is given the claim's values: a yaml-cpp node
    // given a value of another document takes in that document's whole node set, so a new
    // node per claim copied every node of the file once per claim (quadratic: 2,000 claims
    // took 21 s). Joined to one node, the claims share one set, copied by the first claim only.
    YAML::Node shape(YAML::NodeType::Map);
    shapes_.push_back(shape);
    for (const auto& entry : node) {
      const std::string name = entry.first.Scalar();
      if (!contains(config_keys::kCaseAxisKeys, name)) shape[name] = entry.second;
    }
    for (const char* needed : {"batch", "heads", "head_dim"}) {
      if (!shape[needed]) fail(node, key + "." + needed, "the case needs its shape: batch, heads, seq_len (or seq_len_q and seq_len_kv) and head_dim");
    }
    c.shape = read_shapes(source_, shape, seed_).front();
    return c;
  }

  std::string file_;
  std::uint64_t seed_;
  std::size_t room_;
  YAML::Node shapes_{YAML::NodeType::Sequence};  // every claim's shape (read_case)
};

}  // namespace

ConfigError at_claim_case(const ClaimedFigure& claim, const BadInputError& error) {
  const std::string case_key = claim.key + ".case";
  const auto* config_error = dynamic_cast<const ConfigError*>(&error);
  if (!config_error) return ConfigError(claim.path, claim.where, case_key, error.what());
  if (config_error->key().rfind(claim.key, 0) == 0) return *config_error;  // already the claim's
  static const std::regex config_part("^(shapes|exclude)(\\[[0-9]+\\])?(\\.|$)");
  const std::string inner = std::regex_replace(config_error->key(), config_part, "");
  return ConfigError(claim.path, config_error->where().line > 0 ? config_error->where() : claim.where,
                     inner.empty() ? case_key : case_key + "." + inner, config_error->message());
}

std::vector<ClaimedFigure> parse_claims(const std::string& yaml_text, const std::string& name,
                                        const std::string& file_as_named, std::uint64_t seed) {
  return ClaimsReader(name, file_as_named, seed, kMaxClaims).read(yaml_text);
}

namespace {

// Where the config names its i-th claims file (`claims: x.yaml` or a list), for
// messages about that file; the config's text was read without error already.
SourceLocation claims_entry(const std::string& config_text, std::size_t i) {
  try {
    const YAML::Node named = YAML::Load(config_text)["claims"];
    if (named.IsSequence() && i < named.size()) return location(named[i].Mark());
    if (named) return location(named.Mark());
  } catch (const YAML::Exception&) {
  }
  return {};
}

}  // namespace

std::vector<ClaimedFigure> read_claims_files(const std::string& config_path, const std::string& config_text,
                                             const std::vector<std::string>& files, std::uint64_t seed) {
  std::vector<ClaimedFigure> claims;
  const std::filesystem::path folder = std::filesystem::path(config_path).parent_path();
  const auto refused = [&](std::size_t i, const std::string& message) {
    return ConfigError(config_path, claims_entry(config_text, i), "claims", "'" + files[i] + "': " + message);
  };
  // The same file named twice (also as ./x.yaml, through another folder or a link) would
  // store each of its claims twice: refused, comparing the files the names lead to.
  const auto opened_path = [&](const std::string& file) {
    const std::filesystem::path written(file);
    return (written.is_absolute() ? written : folder / written).lexically_normal();
  };
  const auto same_file = [&](const std::string& a, const std::string& b) {
    std::error_code error;
    const bool same = std::filesystem::equivalent(opened_path(a), opened_path(b), error);
    return error ? opened_path(a) == opened_path(b) : same;
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (same_file(files[j], files[i])) {
        throw refused(i, "is the file '" + files[j] + "' already names; name each claims file once");
      }
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string path = opened_path(files[i]).string();
    // Only a regular file: a FIFO would block, and is no "missing" file either.
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
      const int error = errno;
      if (error == ENOENT || error == ENOTDIR) {
        throw refused(i, "no such claims file (looked for " + path + ": a claims file's path is relative to the config's folder)");
      }
      throw refused(i, "cannot be read: " + std::string(std::strerror(error)) + " (" + path + ")");
    }
    if (!S_ISREG(info.st_mode)) {
      throw refused(i, "is " + file_kind(info.st_mode) + ", not a regular file; a claims file is a YAML file, its path " +
                           "relative to the config's folder (" + path + ")");
    }
    std::vector<ClaimedFigure> read;
    std::string text;
    try {
      text = read_config_file(path);  // refuses a file replaced since, or one over 16 MiB
    } catch (const BadInputError& error) {
      throw refused(i, error.what());
    }
    try {
      read = ClaimsReader(path, files[i], seed, kMaxClaims - claims.size()).read(text);
    } catch (const ConfigError&) {
      throw;
    } catch (const BadInputError& error) {
      throw BadInputError(std::string(error.what()) + " (a claims file named by " + config_path + "'s `claims`)");
    }
    for (auto& claim : read) claims.push_back(std::move(claim));
  }
  return claims;
}

}  // namespace attnsweep
