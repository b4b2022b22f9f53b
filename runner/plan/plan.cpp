#include "runner/plan/plan.hpp"

#include "runner/common/sha256.hpp"
#include "runner/plan/case_axes.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <tuple>
#include <utility>

namespace attnsweep {

// A sweep larger than this is almost certainly a typo (a list where a value was meant).
constexpr std::size_t kMaxCases = 100000;

std::int64_t Shape::query_tokens() const {
  if (!variable_length()) return batch * seq_len_q;
  std::int64_t sum = 0;
  for (const std::int64_t length : seq_lens_q) sum += length;
  return sum;
}

Shape Shape::sequence(std::size_t b) const {
  // Field by field, never a copy of *this: a copy would take the whole length
  // lists for each sequence (a batch of 100,000 sequences took minutes to plan).
  Shape one;
  one.batch = 1;
  one.heads = heads;
  one.kv_heads = kv_heads;
  one.seq_len_q = q_len(b);
  one.seq_len_kv = kv_len(b);
  one.head_dim = head_dim;
  one.head_dim_v = head_dim_v;
  one.page_size = page_size;
  return one;
}

namespace {

constexpr std::size_t kVarlenDigestDigits = 12;

std::string length_range(const std::vector<std::int64_t>& lengths) {
  const auto [low, high] = std::minmax_element(lengths.begin(), lengths.end());
  return *low == *high ? std::to_string(*low) : std::to_string(*low) + "-" + std::to_string(*high);
}

}  // namespace

std::string Shape::label() const {
  std::string text = std::to_string(batch) + "x" + std::to_string(heads);
  if (kv_heads != heads) text += "/" + std::to_string(kv_heads);
  text += "x";
  if (variable_length()) {
    text += varlen_label();
  } else {
    text += seq_len_q == seq_len_kv ? std::to_string(seq_len_q)
                                    : std::to_string(seq_len_q) + "x" + std::to_string(seq_len_kv);
  }
  text += "x" + std::to_string(head_dim);
  if (value_dim() != head_dim) text += "/" + std::to_string(value_dim());
  return page_size > 0 ? text + " paged" + std::to_string(page_size) : text;
}

std::string Shape::varlen_label() const {
  if (!variable_length()) return "";
  // The shortest and longest lengths, and 12 hex digits (48 bits) of the whole
  // lists' SHA-256: two batches are two labels (a report's series and bars, a
  // compare or history row). 4 digits collided within a few hundred batches;
  // 48 bits make a collision among 10,000 batches about a 1 in 5 million chance.
  const std::string digest =
      sha256_hex(lengths_text(seq_lens_q) + ";" + lengths_text(seq_lens_kv)).substr(0, kVarlenDigestDigits);
  return "varlen[q " + length_range(seq_lens_q) + ", kv " + length_range(seq_lens_kv) + " #" + digest + "]";
}

std::string lengths_text(const std::vector<std::int64_t>& lengths) {
  std::string text;
  for (const std::int64_t length : lengths) text += (text.empty() ? "" : ",") + std::to_string(length);
  return text;
}

std::vector<std::int64_t> parse_lengths(const std::string& text) {
  std::vector<std::int64_t> lengths;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const bool digits = !item.empty() && item.size() <= 9 &&
                        std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!digits || std::stoll(item) < 1) {
      throw BadInputError("sequence lengths '" + text + "': expected positive integers separated by commas");
    }
    lengths.push_back(std::stoll(item));
    start = comma + 1;
  }
  return lengths;
}

std::string Case::label() const {
  std::string text = variant + " " + shape.label() + " " + to_string(dtype) + " " + mask_label();
  return pass == Pass::forward ? text : text + " " + to_string(pass);
}

namespace {

using AxisValues = std::map<std::string, std::int64_t>;

// Cartesian product of the block's list axes, each combined with every zip row.
std::vector<AxisValues> expand_block(const ShapeBlock& block) {
  std::vector<AxisValues> combos = {{}};
  for (const auto& [axis, values] : block.axes) {
    std::vector<AxisValues> next;
    for (const auto& combo : combos) {
      for (auto value : values) {
        AxisValues extended = combo;
        extended[axis] = value;
        next.push_back(extended);
      }
    }
    combos = std::move(next);
  }
  if (block.zip_rows.empty()) return combos;
  std::vector<AxisValues> zipped;
  for (const auto& combo : combos) {
    for (const auto& row : block.zip_rows) {
      AxisValues extended = combo;
      for (const auto& [axis, value] : row) extended[axis] = value;
      zipped.push_back(extended);
    }
  }
  return zipped;
}

Shape to_shape(const AxisValues& values, const ShapeBlock& block) {
  Shape shape;
  shape.batch = values.at("batch");
  shape.heads = values.at("heads");
  shape.kv_heads = values.count("kv_heads") ? values.at("kv_heads") : shape.heads;
  shape.page_size = values.count("page_size") ? values.at("page_size") : 0;
  if (!block.varlen_kv.empty()) {
    shape.seq_lens_q = block.varlen_q;
    shape.seq_lens_kv = block.varlen_kv;
    shape.seq_len_q = *std::max_element(block.varlen_q.begin(), block.varlen_q.end());
    shape.seq_len_kv = *std::max_element(block.varlen_kv.begin(), block.varlen_kv.end());
  } else if (values.count("seq_len")) {
    shape.seq_len_q = shape.seq_len_kv = values.at("seq_len");
  } else {
    shape.seq_len_q = values.at("seq_len_q");
    shape.seq_len_kv = values.at("seq_len_kv");
  }
  shape.head_dim = values.at("head_dim");
  // Stored as 0 where it is head_dim: one spelling for one shape.
  if (values.count("head_dim_v") && values.at("head_dim_v") != shape.head_dim) shape.head_dim_v = values.at("head_dim_v");
  return shape;
}

// The keys of an exclude rule (config_keys.hpp's kExcludeKeys); the sizes first.
// The score modifications' keys (kScoreModKeys) are one field, told apart by their index.
enum class Field { batch, heads, kv_heads, seq_len, seq_len_q, seq_len_kv, head_dim, page_size, head_dim_v,
                   variant, dtype, causal, window, score_mod, deterministic, pass };
constexpr std::size_t kSizeFields = 9;

std::optional<Field> field_of(const std::string& name) {
  static const std::map<std::string, Field> fields = {
      {"batch", Field::batch},          {"heads", Field::heads},       {"kv_heads", Field::kv_heads},
      {"seq_len", Field::seq_len},      {"seq_len_q", Field::seq_len_q}, {"seq_len_kv", Field::seq_len_kv},
      {"head_dim", Field::head_dim},    {"page_size", Field::page_size}, {"head_dim_v", Field::head_dim_v},
      {"variant", Field::variant},
      {"dtype", Field::dtype},          {"causal", Field::causal},     {"window", Field::window},
      {"deterministic", Field::deterministic}, {"pass", Field::pass}};
  if (std::find(kScoreModKeys.begin(), kScoreModKeys.end(), name) != kScoreModKeys.end()) return Field::score_mod;
  const auto found = fields.find(name);
  return found == fields.end() ? std::nullopt : std::optional<Field>(found->second);
}

// An exclude rule ready to match: each key's values sorted for a binary search,
// the sizes of rules that list the same ones (a YAML alias) shared, each rule
// once. Each case scanned every rule's lists before: a 38 KB config of one
// 5,000-value rule aliased 599 times over 30,000 cases never planned.
struct FieldMatch {
  Field field;
  std::shared_ptr<const std::vector<std::int64_t>> sizes;  // a size key; null for the others
  std::vector<std::string> words;                          // the other keys' values
  std::size_t score_mod = 0;                               // Field::score_mod: its index in kScoreModKeys
};
using CompiledRule = std::vector<FieldMatch>;

std::vector<CompiledRule> compile_rules(const std::vector<ExcludeRule>& rules) {
  std::set<std::map<std::string, std::vector<std::string>>> seen;
  std::map<std::vector<std::int64_t>, std::shared_ptr<const std::vector<std::int64_t>>> shared_sizes;
  std::vector<CompiledRule> compiled;
  for (const ExcludeRule& rule : rules) {
    std::map<std::string, std::vector<std::string>> sorted;
    for (const auto& [name, values] : rule.match) {
      std::vector<std::string>& words = sorted[name] = values;
      std::sort(words.begin(), words.end());
      words.erase(std::unique(words.begin(), words.end()), words.end());
    }
    if (!seen.insert(sorted).second) continue;
    CompiledRule fields;
    bool known = true;
    for (auto& [name, words] : sorted) {
      const std::optional<Field> field = field_of(name);
      if (!field) known = false;  // no case has a value for it: the rule matches none
      if (!known) break;
      FieldMatch match{*field, nullptr, {}, 0};
      if (*field == Field::score_mod) {
        match.score_mod = static_cast<std::size_t>(std::find(kScoreModKeys.begin(), kScoreModKeys.end(), name) -
                                                   kScoreModKeys.begin());
      }
      if (static_cast<std::size_t>(*field) < kSizeFields) {
        std::vector<std::int64_t> sizes;
        for (const std::string& word : words) sizes.push_back(std::stoll(word));  // the loader's own digits
        std::sort(sizes.begin(), sizes.end());
        auto& one = shared_sizes[sizes];
        if (!one) one = std::make_shared<const std::vector<std::int64_t>>(sizes);
        match.sizes = one;
      } else {
        match.words = std::move(words);
      }
      fields.push_back(std::move(match));
    }
    if (known) compiled.push_back(std::move(fields));
  }
  return compiled;
}

// A case's values as rules match them, worked out once per case, not per rule.
struct CaseValues {
  std::array<std::optional<std::int64_t>, kSizeFields> sizes;  // by Field; seq_len only where q and kv agree
  std::string variant, dtype, pass;
  std::vector<std::string> score_mods;  // by kScoreModKeys, as ScoreMod::word writes them
  std::string deterministic;            // "true" or "false"
  std::vector<std::string> causal;  // "true" and the alignment, or "false": true matches either alignment
  std::vector<std::string> window;  // "none", or "L,R" with "*" for a side a rule leaves out (any bound)
};

CaseValues values_of(const Case& c) {
  const Shape& s = c.shape;
  CaseValues v;
  v.sizes = {s.batch,     s.heads,    s.kv_heads, s.seq_len_q == s.seq_len_kv ? std::optional<std::int64_t>(s.seq_len_q) : std::nullopt,
             s.seq_len_q, s.seq_len_kv, s.head_dim, s.page_size, s.value_dim()};
  v.variant = c.variant;
  v.dtype = to_string(c.dtype);
  v.pass = to_string(c.pass);
  for (std::size_t i = 0; i < kScoreModKeys.size(); ++i) v.score_mods.push_back(c.scores.word(i));
  v.deterministic = c.deterministic ? "true" : "false";
  v.causal = c.mask.is_causal() ? std::vector<std::string>{"true", to_string(c.mask.causal)} : std::vector<std::string>{"false"};
  if (!c.mask.windowed()) {
    v.window = {"none"};
  } else {
    const std::string left = Mask::bound_text(c.mask.window_left), right = Mask::bound_text(c.mask.window_right);
    v.window = {left + "," + right, "*," + right, left + ",*", "*,*"};
  }
  return v;
}

bool matches(const CompiledRule& rule, const CaseValues& v) {
  for (const FieldMatch& match : rule) {
    const auto listed = [&match](const std::string& word) {
      return std::binary_search(match.words.begin(), match.words.end(), word);
    };
    const auto any_listed = [&](const std::vector<std::string>& words) { return std::any_of(words.begin(), words.end(), listed); };
    bool hit = false;
    switch (match.field) {
      case Field::variant: hit = listed(v.variant); break;
      case Field::dtype: hit = listed(v.dtype); break;
      case Field::pass: hit = listed(v.pass); break;
      case Field::score_mod: hit = listed(v.score_mods[match.score_mod]); break;
      case Field::deterministic: hit = listed(v.deterministic); break;
      case Field::causal: hit = any_listed(v.causal); break;
      case Field::window: hit = any_listed(v.window); break;
      default: {
        const std::optional<std::int64_t>& size = v.sizes[static_cast<std::size_t>(match.field)];
        hit = size && std::binary_search(match.sizes->begin(), match.sizes->end(), *size);
      }
    }
    if (!hit) return false;
  }
  return true;
}

// The mask's canonical form for the shape (Mask::canonical). A variable-length
// batch's sequences each have one; where they all agree, that is the batch's
// (a window wider than every sequence is dropped, bottom right over square
// sequences is causal), else the mask stays as written.
Mask canonical_mask(const Mask& written, const Shape& shape) {
  if (!shape.variable_length()) return written.canonical(shape.seq_len_q, shape.seq_len_kv);
  const Mask first = written.canonical(shape.q_len(0), shape.kv_len(0));
  for (std::size_t b = 1; b < shape.seq_lens_q.size(); ++b) {
    if (!(written.canonical(shape.q_len(b), shape.kv_len(b)) == first)) return written;
  }
  return first;
}

}  // namespace

// a * b, but never past kMaxCases + 1: enough to refuse, and no overflow.
std::size_t capped_product(std::size_t a, std::size_t b) {
  if (a == 0 || b == 0) return 0;
  return a > (kMaxCases + 1) / b ? kMaxCases + 1 : std::min(a * b, kMaxCases + 1);
}

// Shapes a block lists before duplicates are dropped: the product of its axes times its rows.
std::size_t listed_shapes(const ShapeBlock& block) {
  std::size_t count = block.zip_rows.empty() ? 1 : block.zip_rows.size();
  for (const auto& axis : block.axes) count = capped_product(count, axis.second.size());
  return count;
}

Plan make_plan(const Config& config) {
  Plan plan;
  // How the scores are computed and with which algorithms: the score
  // modifications, each without and with determinism as written (issue 36).
  std::vector<std::pair<ScoreMod, bool>> computations;
  for (const ScoreMod& scores : config.score_mods) {
    for (const bool deterministic : config.deterministic) computations.emplace_back(scores, deterministic);
  }
  // Refuse a huge sweep before expanding it: expansion itself would take long.
  std::size_t listed = 0;
  for (const auto& block : config.shapes) listed = std::min(listed + listed_shapes(block), kMaxCases + 1);
  const std::size_t total = capped_product(
      capped_product(capped_product(capped_product(capped_product(listed, config.dtypes.size()), config.masks.size()),
                                    computations.size()),
                     config.variants.size()),
      config.passes.size());
  if (total > kMaxCases) {
    throw ConfigError(config.source_path, config.shapes_where, "shapes",
                      "the sweep would have more than " + std::to_string(kMaxCases) + " cases; at most " +
                          std::to_string(kMaxCases) + " are allowed in one config (split it, or use zip or exclude)");
  }
  struct Listed {
    Shape shape;
    SourceLocation where;  // the entry that listed it first
    std::string key;       // "shapes" or "shapes[i]", for messages
  };
  std::vector<Listed> shapes;
  // Shapes listed before, in their axes' order (case_axes.hpp).
  const auto shape_less = [](const Shape& a, const Shape& b) { return shape_order(a, b) < 0; };
  std::set<Shape, decltype(shape_less)> seen(shape_less);
  for (std::size_t b = 0; b < config.shapes.size(); ++b) {
    const ShapeBlock& block = config.shapes[b];
    for (const auto& values : expand_block(block)) {
      const Shape shape = to_shape(values, block);
      const std::string key = config.shapes.size() > 1 ? "shapes[" + std::to_string(b) + "]" : "shapes";
      if (shape.kv_heads > shape.heads || shape.heads % shape.kv_heads != 0) {
        const auto written = block.axis_where.find(block.axes.count("kv_heads") ? "kv_heads" : "zip");
        throw ConfigError(config.source_path, written != block.axis_where.end() ? written->second : block.where,
                          key + ".kv_heads",
                          "kv_heads (" + std::to_string(shape.kv_heads) + ") must divide heads (" +
                              std::to_string(shape.heads) + ") for grouped-query attention");
      }
      if (seen.insert(shape).second) {
        shapes.push_back({shape, block.where, key});
      } else {
        plan.duplicates += static_cast<int>(config.dtypes.size() * config.masks.size() * computations.size() *
                                            config.variants.size() * config.passes.size());
      }
    }
  }
  const std::vector<CompiledRule> rules = compile_rules(config.exclude);
  // Variants vary fastest but for the pass, so the cases of one shape share inputs
  // and run together, and a variant's passes are adjacent. With passes [forward]
  // (the default) the plan is exactly what it was before the pass axis.
  for (const auto& [shape, where, key] : shapes) {
    // Each mask once per shape, in its canonical form (Mask::canonical): two
    // ways of writing one set of keys are one case.
    std::vector<Mask> masks;
    for (const Mask& written : config.masks) {
      const Mask mask = canonical_mask(written, shape);
      if (std::find(masks.begin(), masks.end(), mask) == masks.end()) {
        masks.push_back(mask);
      } else {
        plan.duplicates += static_cast<int>(config.dtypes.size() * computations.size() * config.variants.size() *
                                            config.passes.size());
      }
    }
    for (const auto& dtype : config.dtypes) {
      for (const Mask& mask : masks) {
        bool mask_checked = false;
        for (const auto& [scores, deterministic] : computations) {
          for (const auto& variant : config.variants) {
            for (const Pass pass : config.passes) {
              Case c{0, variant, shape, dtype, mask, where, pass, scores, deterministic};
              const CaseValues values = values_of(c);
              const bool excluded = std::any_of(rules.begin(), rules.end(),
                                                [&](const CompiledRule& rule) { return matches(rule, values); });
              if (excluded) {
                ++plan.excluded;
                continue;
              }
              if (!mask_checked) {
                mask_checked = true;
                // A query row that sees no key has no softmax (0/0): FlashAttention
                // writes zeros there and PyTorch's math NaN. Such a case is refused,
                // not measured (checked once a case of the shape and mask survives exclude).
                const std::size_t sequences = shape.variable_length() ? shape.seq_lens_q.size() : 1;
                for (std::size_t b = 0; b < sequences; ++b) {
                  const auto row = mask.first_empty_row(shape.q_len(b), shape.kv_len(b));
                  if (!row) continue;
                  throw ConfigError(config.source_path, where, key,
                                    "with the mask '" + mask.label() + "', query row " + std::to_string(*row) +
                                        (shape.variable_length() ? " of sequence " + std::to_string(b) : "") +
                                        " of shape " + shape.label() + " sees no key (seq_len_q " +
                                        std::to_string(shape.q_len(b)) + ", seq_len_kv " +
                                        std::to_string(shape.kv_len(b)) +
                                        "); a bottom-right mask needs seq_len_q <= seq_len_kv, a window must reach "
                                        "every query's keys (or exclude the case)");
                }
              }
              c.plan_index = static_cast<int>(plan.cases.size());
              plan.cases.push_back(c);
            }
          }
        }
      }
    }
  }
  if (plan.cases.empty()) {
    throw ConfigError(config.source_path, config.shapes_where, "exclude",
                      "the sweep is empty: all " + std::to_string(plan.excluded) +
                          " cases are excluded; relax the exclude rules");
  }
  return plan;
}

std::vector<Case> execution_order(const Plan& plan, CaseOrder case_order, std::uint64_t seed) {
  std::vector<Case> order = plan.cases;
  if (case_order == CaseOrder::shuffled) {
    // mt19937_64 and a hand-written Fisher-Yates: std::shuffle's algorithm is
    // implementation-defined, and the order must not change with the compiler.
    std::mt19937_64 generator(seed);
    for (std::size_t i = order.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(generator() % i);
      std::swap(order[i - 1], order[j]);
    }
  }
  return order;
}

}  // namespace attnsweep
