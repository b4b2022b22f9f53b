#include "runner/config/shape_reader.hpp"

#include <cctype>
#include <climits>
#include <map>
#include <set>

#include "runner/common/sha256.hpp"
#include "runner/common/text.hpp"
#include "runner/config/config_keys.hpp"
#include "runner/config/sequence_lengths.hpp"
#include "runner/config/yaml_reader.hpp"

namespace attnsweep {
namespace {

using namespace config_keys;

// Sequences in one variable-length batch, listed or drawn: each case holds its
// lengths, so a batch of millions is gigabytes before anything runs.
constexpr std::int64_t kMaxSequences = std::int64_t(1) << 19;

class ShapeReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

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
};

}  // namespace

std::vector<ShapeBlock> read_shapes(const std::string& source, const YAML::Node& node, std::uint64_t seed) {
  return ShapeReader(source).shapes(node, seed);
}

}  // namespace attnsweep
